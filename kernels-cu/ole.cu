// GENERATED from kernels-cu/prelude.cuh and kernels/{common.h, equivalence.h, ole.kernel}: edit those, then run
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

// ---- equivalence.h
// Label equivalence vocabulary shared by the iterative algorithms LE, OLE and BE (TPDS 2020
// Sec. 3.1; IPAS 2018 Sec. II).
//
// Convention: a label is an element index + 1 (a pixel for LE and OLE, a 2x2 block for BE) and
// 0 is background. An element's label, or its entry in LE's reference array, is only ever
// replaced by a smaller label of the same component, and starts as the element's own index + 1.
// So entry k never exceeds k + 1, every chain of references strictly decreases until it reaches
// a label that refers to itself, and the fixed point a component converges to is its smallest
// index + 1.
//
// Build-time defines: CONNECTIVITY (4 or 8; with DIMS=3, 6, 18 or 26 for volumes).

// The smaller of the running minimum `mn` and label `l`, where `l` == 0 (background) is ignored.
DEVICE_FN label_t min_label(label_t mn, label_t l)
{
    return (l != 0 && l < mn) ? l : mn;
}

// The label of neighbour j of element i as the scans see it: 0 (ignored) where it does not
// join i. In a binary image every foreground neighbour joins (background ones are labeled 0
// already); in a multi-label image (MULTILABEL=1) only a neighbour of an equal value.
#if MULTILABEL
#define NEIGHBOUR_LABEL(LOAD, img, L, i, j) ((img)[j] == (img)[i] ? LOAD(&(L)[j]) : 0)
#else
#define NEIGHBOUR_LABEL(LOAD, img, L, i, j) LOAD(&(L)[j])
#endif

// The smallest label among pixel (x, y), labeled `own` (nonzero), and its neighbours that join it
// (NEIGHBOUR_LABEL): W, E, N, S and, with 8-connectivity, NW, NE, SW, SE. Background neighbours
// are labeled 0 and so ignored. Two instances: min_neighbour_label reads L with relaxed atomic
// loads (OLE's scan stores into L meanwhile), min_neighbour_label_read_only with plain ones (LE's
// scan only reads L).
#define CCL_DEFINE_MIN_NEIGHBOUR(NAME, LOAD)                                                      \
    DEVICE_FN label_t NAME(GLOBAL const pixel_t *img, GLOBAL const label_t *L, uint x, uint y, uint width,    \
                           uint height, label_t own)                                             \
    {                                                                                            \
        const index_t i = PIXEL_INDEX(x, y, width);                                              \
        const int west = x > 0, east = x + 1 < width, north = y > 0, south = y + 1 < height;     \
        label_t mn = own;                                                                        \
        if (west)                                                                                \
            mn = min_label(mn, NEIGHBOUR_LABEL(LOAD, img, L, i, i - 1));                         \
        if (east)                                                                                \
            mn = min_label(mn, NEIGHBOUR_LABEL(LOAD, img, L, i, i + 1));                         \
        if (north)                                                                               \
            mn = min_label(mn, NEIGHBOUR_LABEL(LOAD, img, L, i, i - width));                     \
        if (south)                                                                               \
            mn = min_label(mn, NEIGHBOUR_LABEL(LOAD, img, L, i, i + width));                     \
        if (CONNECTIVITY == 8 && north && west)                                                  \
            mn = min_label(mn, NEIGHBOUR_LABEL(LOAD, img, L, i, i - width - 1));                 \
        if (CONNECTIVITY == 8 && north && east)                                                  \
            mn = min_label(mn, NEIGHBOUR_LABEL(LOAD, img, L, i, i - width + 1));                 \
        if (CONNECTIVITY == 8 && south && west)                                                  \
            mn = min_label(mn, NEIGHBOUR_LABEL(LOAD, img, L, i, i + width - 1));                 \
        if (CONNECTIVITY == 8 && south && east)                                                  \
            mn = min_label(mn, NEIGHBOUR_LABEL(LOAD, img, L, i, i + width + 1));                 \
        return mn;                                                                               \
    }

#if DIMS == 3
// The smallest label among voxel (x, y, z), labeled `own` (nonzero), and its neighbours that join
// it among the 26 around it: the 6 face ones, with CONNECTIVITY 18 the 12 edge ones too, with 26
// the 8 corner ones as well (a neighbour differs from the voxel in at most 1, 2 or 3
// coordinates). Two instances, as in 2D.
#define CCL_DEFINE_MIN_NEIGHBOUR_3D(NAME, LOAD)                                                   \
    DEVICE_FN label_t NAME(GLOBAL const pixel_t *img, GLOBAL const label_t *L, uint x, uint y, uint z, uint width, \
                           uint height, uint depth, label_t own)                                 \
    {                                                                                            \
        const int most = CONNECTIVITY == 6 ? 1 : (CONNECTIVITY == 18 ? 2 : 3);                   \
        const index_t i = VOXEL_INDEX(x, y, z, width, height);                                   \
        label_t mn = own;                                                                        \
        for (int dz = -1; dz <= 1; dz++) {                                                       \
            for (int dy = -1; dy <= 1; dy++) {                                                   \
                for (int dx = -1; dx <= 1; dx++) {                                               \
                    const int differing = (dx != 0) + (dy != 0) + (dz != 0);                     \
                    if (differing == 0 || differing > most)                                      \
                        continue;                                                                \
                    const long nx = (long)x + dx, ny = (long)y + dy, nz = (long)z + dz;          \
                    if (nx < 0 || ny < 0 || nz < 0 || nx >= width || ny >= height || nz >= depth) \
                        continue;                                                                \
                    const index_t j = VOXEL_INDEX(nx, ny, nz, width, height);                    \
                    mn = min_label(mn, NEIGHBOUR_LABEL(LOAD, img, L, i, j));                     \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
        return mn;                                                                               \
    }
#endif

// A plain load, for what no work-item writes during the launch.
#define LOAD_PLAIN(p) (*(p))
#if DIMS == 3
CCL_DEFINE_MIN_NEIGHBOUR_3D(min_neighbour_label_3d, LOAD_LABEL)
CCL_DEFINE_MIN_NEIGHBOUR_3D(min_neighbour_label_3d_read_only, LOAD_PLAIN)
#else
CCL_DEFINE_MIN_NEIGHBOUR(min_neighbour_label, LOAD_LABEL)
CCL_DEFINE_MIN_NEIGHBOUR(min_neighbour_label_read_only, LOAD_PLAIN)
#endif

// The end of the reference chain that starts at `label` (nonzero): follows R[label - 1] until a
// label that refers to itself. Other work-items may lower entries of R meanwhile (relaxed atomic
// loads, LOAD_LABEL); every value read is still a label of the same component on the same
// decreasing chain, so the walk ends.
DEVICE_FN label_t chain_end(GLOBAL const label_t *R, label_t label)
{
    label_t next = LOAD_LABEL(&R[label - 1]);
    while (next != label) {
        label = next;
        next = LOAD_LABEL(&R[label - 1]);
    }
    return label;
}

// ---- ole.kernel
// OLE: Optimized Label Equivalence of Kalentev, Rai, Kemnitz and Schneider (Machine Vision and
// Applications 22, 2011), as summarised in TPDS 2020 Sec. 3.1. Unlike LE there is no reference
// array: label l's representative is L[l - 1], the label of the pixel the label names, and the
// labelling step is fused into the analysis (pointer jumping).
//
// The host runs ole_init once, then repeats ole_scan, ole_analysis until ole_scan leaves the
// `changed` word at 0 (the host zeroes it before each scan and reads it after).
// Raw labels: each component gets (raster index of its first pixel) + 1; background is 0.
//
// Volumes: built with DIMS=3 (CONNECTIVITY 6, 18 or 26) the same kernels run one work-item per
// voxel over a 3D range (beyond the papers, whose YACCLAB has no 3D OLE); an image is a volume of
// depth 1.
//
// Multi-label images (MULTILABEL=1, common.h): the scan takes a neighbour's label only where its
// value equals the element's (NEIGHBOUR_LABEL in equivalence.h); every label still names an
// element of the same component, so the argument above holds as it is.
//
// Build-time defines: CONNECTIVITY (4 or 8; 6, 18 or 26 with DIMS=3), DIMS, MULTILABEL,
// PIXEL_BYTES and BACKGROUND_HI/LO.

// Initialization: every foreground pixel is its own label.
KERNEL void ole_init(GLOBAL const pixel_t *img, GLOBAL label_t *L, uint width, uint height, uint depth)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y, z = GLOBAL_ID_Z;
    if (x >= width || y >= height || z >= depth)
        return;
    const index_t i = VOXEL_INDEX(x, y, z, width, height);
    L[i] = FG(img[i]) ? i + 1 : 0;
}

// Scan: a foreground pixel that sees a smaller label mn in its neighbourhood lowers the
// representative of its own label to mn. As in the paper this is a store, no read-modify-write
// (a relaxed atomic one, as every access to L here: other work-items read and write it
// meanwhile): when pixels of one label race, one of their values survives. Every value stored is a label of
// the same component smaller than the label it replaced at the start of the kernel, so no chain
// grows a cycle and labels never rise across iterations; a lost (smaller) value only costs
// iterations, never correctness, and any store sets `changed`, so the loop goes on.
KERNEL void ole_scan(GLOBAL const pixel_t *img, GLOBAL label_t *L, GLOBAL uint *changed, uint width, uint height,
                     uint depth)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y, z = GLOBAL_ID_Z;
    if (x >= width || y >= height || z >= depth)
        return;
    const label_t label = LOAD_LABEL(&L[VOXEL_INDEX(x, y, z, width, height)]);
    if (label == 0)
        return;
#if DIMS == 3
    const label_t mn = min_neighbour_label_3d(img, L, x, y, z, width, height, depth, label);
#else
    const label_t mn = min_neighbour_label(img, L, x, y, width, height, label);
#endif
    if (mn < label) {
        STORE_LABEL(&L[label - 1], mn);
        STORE_RELAXED(changed, 1u);
    }
}

// Analysis with fused labelling: every foreground pixel follows its label's chain of
// representatives to a label that refers to itself, and takes it.
KERNEL void ole_analysis(GLOBAL label_t *L, uint width, uint height, uint depth)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y, z = GLOBAL_ID_Z;
    if (x >= width || y >= height || z >= depth)
        return;
    const index_t i = VOXEL_INDEX(x, y, z, width, height);
    const label_t label = LOAD_LABEL(&L[i]);
    if (label != 0)
        STORE_LABEL(&L[i], chain_end(L, label));
}

