// GENERATED from kernels-cu/prelude.cuh and kernels/{common.h, hold.kernel}: edit those, then run
// `CCL_BLESS=1 cargo test --test kernel_sources`.

// ---- kernels-cu/prelude.cuh
// CUDA dialect prelude: maps the portable kernel vocabulary of kernels/ to CUDA C++ (NVRTC).
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long long ulong;
#define KERNEL extern "C" __global__
// The work-group size a kernel is always launched with, and how many of its groups a compute
// unit should hold at once (CUDA's launch bounds: a register budget).
#define REQUIRED_GROUP_SIZE(x, y, z, groups) __launch_bounds__((x) * (y) * (z), (groups))
#define GLOBAL
#define LOCAL
#define DEVICE_FN __device__ __forceinline__
#define LOCAL_ARRAY(type, name, size) __shared__ type name[size]
#define LOCAL_ID_X threadIdx.x
#define LOCAL_ID_Y threadIdx.y
#define LOCAL_ID_Z threadIdx.z
#define GROUP_ID_X blockIdx.x
// A 2D launch with more groups along y than the grid allows (65535) is folded by the host into
// y and z (LaunchRange::fold in ccl-backend): the group along y is blockIdx.y + gridDim.y *
// blockIdx.z, and the last groups may lie past the range (kernels check their coordinates).
// Kernels built with DIMS=3 are launched unfolded.
#if defined(DIMS) && DIMS == 3
#define GROUP_ID_Y blockIdx.y
#define GROUP_ID_Z blockIdx.z
#else
#define GROUP_ID_Y (blockIdx.y + gridDim.y * blockIdx.z)
#define GROUP_ID_Z 0u
#endif
#define GLOBAL_ID_X (blockIdx.x * blockDim.x + threadIdx.x)
#define GLOBAL_ID_Y (GROUP_ID_Y * blockDim.y + threadIdx.y)
#define GLOBAL_ID_Z (GROUP_ID_Z * blockDim.z + threadIdx.z)
#define LOCAL_BARRIER() __syncthreads()
// Orders this work-item's global writes before its later ones (a store before a ticket's atomic).
#define GLOBAL_FENCE() __threadfence()
// Programmatic dependent launch (compute capability 9.0 on; Gpu::launch_overlapping): a kernel
// launched so waits at WAIT_FOR_PREVIOUS_KERNEL() until the kernel before it has finished and
// its writes are visible; LET_NEXT_KERNEL_START() lets such a next kernel start early.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define WAIT_FOR_PREVIOUS_KERNEL() asm volatile("griddepcontrol.wait;" ::: "memory")
#define LET_NEXT_KERNEL_START() asm volatile("griddepcontrol.launch_dependents;" ::: "memory")
#else
#define WAIT_FOR_PREVIOUS_KERNEL() ((void)0)
#define LET_NEXT_KERNEL_START() ((void)0)
#endif
// atomicMin has unsigned int and unsigned long long overloads: 32- and 64-bit labels alike.
#define ATOMIC_MIN(p, v) atomicMin((p), (v))
#define ATOMIC_MAX(p, v) atomicMax((p), (v))
#define ATOMIC_ADD(p, v) atomicAdd((p), (v))
// 32-bit compare-and-swap: returns the old value, stores v where it equalled cmp.
#define ATOMIC_CMPXCHG(p, cmp, v) atomicCAS((p), (cmp), (v))
// Loads and stores of locations that other threads of the same launch write (or read while this
// one writes), where a plain C++ access would be a data race, undefined behaviour in CUDA C++.
// LOAD_RELAXED / STORE_RELAXED (global), LOAD_RELAXED_LOCAL / STORE_RELAXED_LOCAL (shared),
// LOAD_LABEL / STORE_LABEL (global labels, 32 or 64 bits), STORE_LABEL4 (four 32-bit labels).
// - Stores: volatile, which NVRTC compiles to PTX's st.volatile, a relaxed atomic store at system
//   scope in the PTX memory model (as LLVM's NVPTX back end uses it); they cost nothing measured.
// - Loads, by default: PTX weak loads (ld) as inline assembly, which the C++ compiler cannot
//   assume free of races, and which the PTX memory model, unlike C++, gives a meaning when they
//   race: each returns a value some write committed to the word (PTX ISA, Memory Consistency
//   Model: "each read operation returns the value committed by some write operation"). Every
//   racing read here is a union-find parent, a label or a flag, and any value a write committed
//   there is one the algorithm expects (parents only move to ancestors). PTX promises single-copy
//   atomicity only to morally strong accesses; NVIDIA GPUs read and write naturally aligned
//   words whole.
// - Loads with STRICT_LOADS=1 (CCL_ATOMIC_LOADS=strict): relaxed atomics (ld.relaxed.gpu, as
//   cuda::atomic_ref<T, thread_scope_device>::load(memory_order_relaxed); volatile shared loads,
//   ld.volatile.shared). Strong loads bypass the L1 cache, so every find reads from L2: on an
//   H200 TUF, BKE_IC and KE take 1.1-2.9x their time at 2048^2 and 8192^2 (50 and 90 %
//   density most), which is why weak loads are the default (docs/atomics.md).
#if defined(STRICT_LOADS) && STRICT_LOADS
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
#define CCL_GLOBAL_LOAD "ld.volatile" // (no scoped atomics before Volta: volatile is relaxed there)
#else
#define CCL_GLOBAL_LOAD "ld.relaxed.gpu"
#endif
__device__ __forceinline__ unsigned int ccl_load_shared(const unsigned int *p)
{
    return *(const volatile unsigned int *)p;
}
#else
#define CCL_GLOBAL_LOAD "ld" // (weak: ld.weak from PTX ISA 6.0, plain ld before)
__device__ __forceinline__ unsigned int ccl_load_shared(const unsigned int *p)
{
    unsigned int v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"((unsigned int)__cvta_generic_to_shared(p)));
    return v;
}
#endif
__device__ __forceinline__ unsigned int ccl_load_relaxed(const unsigned int *p)
{
    unsigned int v;
    asm volatile(CCL_GLOBAL_LOAD ".u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ unsigned long long ccl_load_relaxed(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile(CCL_GLOBAL_LOAD ".u64 %0, [%1];" : "=l"(v) : "l"(p));
    return v;
}
template <typename T, typename V> __device__ __forceinline__ void ccl_store_relaxed(T *p, V v)
{
    *(volatile T *)p = (T)v;
}
// Four 32-bit labels from a 16-byte aligned p: one st.volatile.v4.u32, which the PTX memory
// model takes as four relaxed stores.
__device__ __forceinline__ void ccl_store_relaxed4(unsigned int *p, uint4 v)
{
    asm volatile("st.volatile.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
}
#define LOAD_RELAXED(p) ccl_load_relaxed(p)
#define STORE_RELAXED(p, v) ccl_store_relaxed((p), (v))
#define LOAD_RELAXED_LOCAL(p) ccl_load_shared(p)
#define STORE_RELAXED_LOCAL(p, v) ccl_store_relaxed((p), (v))
#define LOAD_LABEL(p) ccl_load_relaxed(p)
#define STORE_LABEL(p, v) ccl_store_relaxed((p), (v))
#define STORE_LABEL4(p, v) ccl_store_relaxed4((p), (v))
// Labels only this thread writes, which others read with LOAD_LABEL: plain loads.
#define LOAD_OWN_LABEL(p) (*(p))
#define LOAD_OWN_LABEL4(p) (*(const uint4 *)(p))
// Atomic bitwise or and and on a 32-bit word (shared or global), the count of set bits of one,
// and its count of leading zero bits (32 for 0).
#define ATOMIC_OR(p, v) atomicOr((p), (v))
#define ATOMIC_AND(p, v) atomicAnd((p), (v))
#define POPCOUNT(x) __popc((uint)(x))
#define LEADING_ZEROS(x) __clz((int)(uint)(x))
// 64-bit add (ulong is unsigned long long here).
#define ATOMIC_ADD64(p, v) atomicAdd((p), (ulong)(v))
// Double precision: the round-to-nearest intrinsics, which the compiler never contracts into
// fused multiply-adds, so that a kernel's results equal the host reference's bit for bit.
#define DADD(a, b) __dadd_rn((a), (b))
#define DSUB(a, b) __dsub_rn((a), (b))
#define DMUL(a, b) __dmul_rn((a), (b))
#define DDIV(a, b) __ddiv_rn((a), (b))
#define DSQRT(a) __dsqrt_rn(a)
#define DRINT(a) rint(a)
// Double-precision atomics: a 64-bit compare-and-swap and the bits of a double (the OpenCL
// prelude's, under FLOAT64_ATOMICS); CUDA adds doubles natively (compute capability 6.0 on).
#define ATOMIC_CMPXCHG64(p, cmp, v) atomicCAS((ulong *)(p), (ulong)(cmp), (ulong)(v))
#define DOUBLE_BITS(d) ((ulong)__double_as_longlong(d))
#define BITS_DOUBLE(u) __longlong_as_double((long long)(u))
#define NATIVE_ATOMIC_ADD_F64(p, v) atomicAdd((p), (v))
// Single precision a * b + c, fused or rounded twice (whichever the device does faster; both
// within an ulp of each operation, as the callers' error bounds assume).
#define FMAD(a, b, c) fmaf((a), (b), (c))
// Single precision reciprocal square root of a normal positive x (at most 2 ulp in both dialects'
// specifications): here the hardware's approximation (2^-22.9 relative), without the scaling
// that rsqrtf adds for subnormal inputs.
__device__ __forceinline__ float ccl_frsqrt(float x)
{
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
#define FRSQRT(x) ccl_frsqrt(x)

// ---- common.h
// Shared by every kernel file: the label and index types, and the foreground test.
//
// Labels are a pixel (or block) index + 1 with 0 for background, so they need as many bits as
// pixel indices. Both are 32-bit today (images of up to 2^32 - 1 pixels); a build with
// -D LABEL_BITS=64 makes both 64-bit (the preludes switch ATOMIC_MIN to the 64-bit atomic),
// for images past 4 Gpx. Coordinates and sizes along one axis stay `uint`.
#ifndef LABEL_BITS
#define LABEL_BITS 32
#endif
#if LABEL_BITS == 64
typedef ulong label_t;
typedef ulong index_t;
#else
typedef uint label_t;
typedef uint index_t;
#endif

// The raster index of pixel (x, y) of an image `width` pixels wide, computed in index_t.
#define PIXEL_INDEX(x, y, width) ((index_t)(y) * (width) + (x))
// The raster index of voxel (x, y, z) of a volume `width` x `height` voxels per slice (x
// fastest, then y, then z); an image is the volume of one slice (z = 0).
#define VOXEL_INDEX(x, y, z, width, height) (((index_t)(z) * (height) + (y)) * (width) + (x))

// The input's elements (pixel_t). By default a binary image of one byte an element: any nonzero
// value is foreground (never `& 1`: inputs of 255 or 2 must work), and foreground neighbours
// join. Built with MULTILABEL=1 (the pixel algorithms and TUF), a multi-label image: integers of PIXEL_BYTES bytes (1,
// 2, 4 or 8; signedness does not matter, only equality), every value but the background
// BACKGROUND_HI:BACKGROUND_LO (its high and low 32 bits) is foreground, and neighbours join only
// when their values are equal. JOINS(v, w): whether an element of value v joins its neighbour of
// value w, v being foreground.
#ifndef MULTILABEL
#define MULTILABEL 0
#endif
#if MULTILABEL
#if PIXEL_BYTES == 8
typedef ulong pixel_t;
#elif PIXEL_BYTES == 4
typedef uint pixel_t;
#elif PIXEL_BYTES == 2
typedef ushort pixel_t;
#else
typedef uchar pixel_t;
#endif
#define BACKGROUND ((pixel_t)(((ulong)BACKGROUND_HI << 32) | (ulong)BACKGROUND_LO))
#define FG(v) ((v) != BACKGROUND)
#define JOINS(v, w) ((v) == (w))
#else
typedef uchar pixel_t;
#define BACKGROUND 0
#define FG(v) ((v) != 0)
#define JOINS(v, w) FG(w)
#endif

// ---- hold.kernel
// A queue hold for benchmarks: one work-item runs `iterations` dependent integer steps and
// writes the result (so that the compiler keeps them), keeping the device busy for a while that
// grows with `iterations` (about 0.15 ms per 2^17 on the H100).
//
// `ccl bench --timing queued` (the default) launches it before each timed run, without waiting: the
// run's commands are then all queued while the device still holds, and its device marks time
// the commands alone, as they run back to back in a pipeline, without the host's time to submit
// them (an idle device starts the first mark at once and then waits for the host's launch).
// Commands after a read-back in the run (an iterative algorithm's flag) meet the device idle.
KERNEL void hold(GLOBAL uint *sink, uint iterations)
{
    if (GLOBAL_ID_X != 0)
        return;
    uint state = sink[0] | 1u;
    for (uint i = 0; i < iterations; i++)
        state = state * 1664525u + 1013904223u; // (Numerical Recipes' LCG: each step waits on the last)
    sink[0] = state;
}

