// GENERATED from kernels-cu/prelude.cuh and kernels/{common.h, binarize.kernel}: edit those, then run
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

// ---- binarize.kernel
// Local thresholding of an 8-bit gray page (ink 1, background 0): Nick (Khurshid et al. 2009) as
// the ICPADS 2015 paper computes it on the GPU (Sec. IV, Algorithms 2-4), a fast kernel whose
// cost does not depend on the window, Niblack, Sauvola and Wolf from the same window sums, and
// Otsu's global threshold.
//
// Every local method decides a pixel from the integer sums S1 = sum p and S2 = sum p^2 over its
// window and the window's pixel count NP (exact, in integers), then a threshold T in double
// precision (preludes: DADD, DMUL, ... are IEEE operations that are never fused), so the result
// equals the host reference (src/binarize/reference.rs) bit for bit. Ink is p <= T.
//
// The window of pixel (x, y) spans columns x - (W - 1) / 2 ..= x + W / 2 and the same rows (W
// pixels; an even W reaches one further right and down, as Doxa does). BORDER decides what lies
// outside the image: BORDER_CLIP leaves it out (NP counts the pixels inside), BORDER_REPLICATE
// repeats the edge pixels (NP = W^2, OpenCV's BORDER_REPLICATE).
//
// Build-time defines:
//   METHOD   METHOD_NICK, METHOD_NIBLACK, METHOD_SAUVOLA or METHOD_WOLF
//   FORMULA  Nick's threshold: FORMULA_PAPER  T = m + k sqrt((S2 - m^2) / NP)  (the paper's Eq. 1)
//                              FORMULA_DOXA   T = m + k sqrt(S2 / NP)
//                              FORMULA_OPENCV T = m + k sqrt(2 S2 / NP - m^2), rounded half to
//                                             even and saturated to 0..=255 as OpenCV's u8
//   BORDER   BORDER_CLIP or BORDER_REPLICATE
//   WIDE_SUMS 1 when S2 may pass 2^32 (W > 257): window sums in 64 bits
//   BLOCK    side of the square work-groups of the paper's kernels
//   FAST_GROUP, FAST_SPAN, FAST_BATCH  the fast kernel's work-items per group, span columns
//            (a multiple of FAST_GROUP) and rows per batch (FAST_GROUP / FAST_BATCH divides FAST_SPAN)
//   FAST_GROUPS_PER_UNIT  the fast kernel's groups per compute unit (its register budget)
//   FAST_STATS 1: the fast kernel computes Wolf's statistics instead of thresholding
// Runtime parameters of the local methods: k, and r (Sauvola's dynamic range R); Wolf reads its
// image statistics (min gray, max deviation) from `stats`, written by the statistics pass.

#define METHOD_NICK 1
#define METHOD_NIBLACK 2
#define METHOD_SAUVOLA 3
#define METHOD_WOLF 4
#define FORMULA_PAPER 0
#define FORMULA_DOXA 1
#define FORMULA_OPENCV 2
#define BORDER_CLIP 0
#define BORDER_REPLICATE 1

#if WIDE_SUMS
typedef ulong sum_t;
#else
typedef uint sum_t;
#endif

// The pixel at (x, y), which may lie outside the image: 0 there with BORDER_CLIP (it adds
// nothing to the sums), the nearest edge pixel with BORDER_REPLICATE.
DEVICE_FN uint pixel_at(GLOBAL const uchar *gray, int x, int y, int width, int height)
{
#if BORDER == BORDER_REPLICATE
    x = x < 0 ? 0 : (x >= width ? width - 1 : x);
    y = y < 0 ? 0 : (y >= height ? height - 1 : y);
    return gray[PIXEL_INDEX(x, y, (uint)width)];
#else
    if (x < 0 || y < 0 || x >= width || y >= height)
        return 0;
    return gray[PIXEL_INDEX(x, y, (uint)width)];
#endif
}

// How many of the window's W positions along an axis of `extent` pixels, around `c`, count.
DEVICE_FN uint window_extent(int c, int extent, int window)
{
#if BORDER == BORDER_REPLICATE
    return (uint)window;
#else
    const int lo = c - (window - 1) / 2, hi = c + window / 2;
    return (uint)((hi < extent - 1 ? hi : extent - 1) - (lo > 0 ? lo : 0) + 1);
#endif
}

// A square root for the single-precision threshold: x * rsqrt(x) (a few ulp, both dialects), and 0
// below 1e-30 (off by at most 1e-15, and FRSQRT needs a normal input).
DEVICE_FN float root_float(float x)
{
    return x > 1e-30f ? x * FRSQRT(x) : 0.0f;
}

// The threshold in single precision, from the window sums and `inverse` = 1 / NP, and in
// *magnitude a bound on the size of its terms: its rounding error is far below 1e-5 of that (a
// few ulp per operation, whatever the device's float division and reciprocal square root, and
// whether FMAD fuses or not; NVIDIA's OpenCL contracts nothing by itself, as the prelude turns
// FP_CONTRACT off for the doubles).
DEVICE_FN float threshold_float(uint s1, sum_t s2, uint np, float inverse, float k, float r,
                                GLOBAL const double *stats, float *magnitude)
{
    const float m = (float)s1 * inverse;
#if METHOD == METHOD_NICK
#if FORMULA == FORMULA_PAPER
    const float radicand = FMAD(-m, m, (float)s2) * inverse;
#elif FORMULA == FORMULA_DOXA
    const float radicand = (float)s2 * inverse;
#else
    const float radicand = FMAD(2.0f * (float)s2, inverse, -m * m);
#endif
    // m <= 255 and the square root <= 361 (the radicand is at most 2 * 255^2): a bound that does
    // not depend on the pixel (computed once per kernel, not per pixel).
    *magnitude = 255.0f + 362.0f * fabs(k);
    return FMAD(k, root_float(radicand), m);
#else
    const float deviation = root_float((float)((ulong)np * s2 - (ulong)s1 * s1) * inverse * inverse);
#if METHOD == METHOD_NIBLACK
    *magnitude = m + fabs(k * deviation);
    return FMAD(k, deviation, m);
#elif METHOD == METHOD_SAUVOLA
    *magnitude = m * (1.0f + fabs(k) * (deviation / r + 1.0f));
    return m * FMAD(k, deviation / r - 1.0f, 1.0f);
#else
    const float lowest = (float)stats[0], widest = (float)stats[1];
    const float ratio = widest > 0.0f ? deviation / widest : 0.0f;
    *magnitude = m + fabs(k) * (1.0f + ratio) * (m + lowest);
    return FMAD(-k * (1.0f - ratio), m - lowest, m);
#endif
#endif
}

// The runtime parameters of the local methods: k, and r (Sauvola's dynamic range R), in double
// precision for the exact decision and in single precision for the fast one.
typedef struct {
    double k, r;
    float k_float, r_float;
} method_params;

DEVICE_FN method_params method_params_of(double k, double r)
{
    method_params params;
    params.k = k;
    params.r = r;
    params.k_float = (float)k;
    params.r_float = (float)r;
    return params;
}

// What decide_float answers for a pixel too close to its threshold to decide in single precision.
#define UNSURE 2u

// Whether a pixel of value p is ink (1) or not (0), given its window sums, NP and `inverse` = 1 /
// NP (in single precision, to a few ulp), or UNSURE: decided in single precision where the
// threshold is clearly away from p, beyond a bound on the float rounding error. `stats` holds
// Wolf's image minimum and maximum deviation (unused by the other methods).
DEVICE_FN uint decide_float(uint p, uint s1, sum_t s2, uint np, float inverse, method_params params,
                            GLOBAL const double *stats)
{
    float magnitude;
    const float t = threshold_float(s1, s2, np, inverse, params.k_float, params.r_float, stats, &magnitude);
    const float margin = 1e-3f + 1e-5f * magnitude;
    const float d = (float)p - t;
#if METHOD == METHOD_NICK && FORMULA == FORMULA_OPENCV
    // Ink is p <= clamp(rint(T)): certain when T is clearly within half a level of p, or clearly
    // above p + 1/2; clearly below p - 1/2 is background unless p = 0 (T saturates to 0).
    if (fabs(d) < 0.5f - margin || d < -0.5f - margin)
        return 1;
    if (d > 0.5f + margin && p > 0)
        return 0;
#else
    if (d < -margin)
        return 1;
    if (d > margin)
        return 0;
#endif
    return UNSURE;
}

// The exact decision (is_ink_exact, below) where decide_float is unsure, so the decision is always
// the exact one, at a fraction of the double-precision work.
DEVICE_FN uchar is_ink_exact(uint p, ulong s1, ulong s2, ulong np, double k, double r, GLOBAL const double *stats);

DEVICE_FN uchar is_ink(uint p, uint s1, sum_t s2, uint np, float inverse, method_params params,
                       GLOBAL const double *stats)
{
    const uint decided = decide_float(p, s1, s2, np, inverse, params, stats);
    return decided != UNSURE ? (uchar)decided : is_ink_exact(p, s1, s2, np, params.k, params.r, stats);
}

// The exact decision: T in IEEE double, every operation rounded once, in the reference's order.
DEVICE_FN uchar is_ink_exact(uint p, ulong s1, ulong s2, ulong np, double k, double r, GLOBAL const double *stats)
{
    const double n = (double)np;
    const double m = DDIV((double)s1, n);
    double t;
#if METHOD == METHOD_NICK
#if FORMULA == FORMULA_PAPER
    const double radicand = DDIV(DSUB((double)s2, DMUL(m, m)), n);
    t = DADD(m, DMUL(k, DSQRT(radicand > 0.0 ? radicand : 0.0)));
#elif FORMULA == FORMULA_DOXA
    t = DADD(m, DMUL(k, DSQRT(DDIV((double)s2, n))));
#else
    const double mean_square = DDIV((double)s2, n);
    const double radicand = DSUB(DADD(mean_square, mean_square), DMUL(m, m));
    t = DRINT(DADD(m, DMUL(k, DSQRT(radicand > 0.0 ? radicand : 0.0))));
    t = t < 0.0 ? 0.0 : (t > 255.0 ? 255.0 : t); // OpenCV saturates T to u8
#endif
#else
    // The variance from an exact integer numerator: NP * S2 >= S1^2 always.
    const double deviation = DSQRT(DDIV((double)(np * s2 - s1 * s1), DMUL(n, n)));
#if METHOD == METHOD_NIBLACK
    t = DADD(m, DMUL(k, deviation));
#elif METHOD == METHOD_SAUVOLA
    t = DMUL(m, DADD(1.0, DMUL(k, DSUB(DDIV(deviation, r), 1.0))));
#else
    const double lowest = stats[0], widest = stats[1];
    const double ratio = widest > 0.0 ? DDIV(deviation, widest) : 0.0;
    t = DSUB(m, DMUL(DMUL(k, DSUB(1.0, ratio)), DSUB(m, lowest)));
#endif
#endif
    return (double)p <= t ? 1 : 0;
}

// ---- The paper's kernels: one work-item per pixel, O(W^2) reads each, 2D groups of BLOCK x BLOCK.

// Algorithm 2 (Global): every window pixel read from global memory (through the caches).
KERNEL void threshold_global_only(GLOBAL const uchar *gray, GLOBAL uchar *out, uint width, uint height, uint window,
                             double k, double r, GLOBAL const double *stats)
{
    const int x = (int)GLOBAL_ID_X, y = (int)GLOBAL_ID_Y, w = (int)width, h = (int)height, W = (int)window;
    if (x >= w || y >= h)
        return;
    int x0 = x - (W - 1) / 2, x1 = x + W / 2, y0 = y - (W - 1) / 2, y1 = y + W / 2;
#if BORDER == BORDER_CLIP
    x0 = x0 > 0 ? x0 : 0;
    y0 = y0 > 0 ? y0 : 0;
    x1 = x1 < w - 1 ? x1 : w - 1;
    y1 = y1 < h - 1 ? y1 : h - 1;
#endif
    sum_t s1 = 0, s2 = 0;
    for (int j = y0; j <= y1; j++) {
        for (int i = x0; i <= x1; i++) {
            const uint p = pixel_at(gray, i, j, w, h);
            s1 += p;
            s2 += p * p;
        }
    }
    const uint np = window_extent(x, w, W) * window_extent(y, h, W);
    out[PIXEL_INDEX(x, y, width)] = is_ink(gray[PIXEL_INDEX(x, y, width)], (uint)s1, s2, np, 1.0f / (float)np, method_params_of(k, r), stats);
}

// Algorithm 3 (Global-Shared): the group's own BLOCK x BLOCK tile is loaded into local memory;
// window pixels inside the tile are read from there, the others from global memory. (The paper
// tests the tile's first row and column with `<`, which sends them to global memory too; this
// kernel reads every pixel of the tile from local memory.)
KERNEL void threshold_global_shared(GLOBAL const uchar *gray, GLOBAL uchar *out, uint width, uint height,
                                    uint window, double k, double r, GLOBAL const double *stats)
{
    LOCAL_ARRAY(uchar, tile, BLOCK * BLOCK);
    const int tx = (int)LOCAL_ID_X, ty = (int)LOCAL_ID_Y;
    const int x = (int)GLOBAL_ID_X, y = (int)GLOBAL_ID_Y, w = (int)width, h = (int)height, W = (int)window;
    const int tile_x = x - tx, tile_y = y - ty;
    tile[ty * BLOCK + tx] = x < w && y < h ? gray[PIXEL_INDEX(x, y, width)] : 0;
    LOCAL_BARRIER();
    if (x >= w || y >= h)
        return;
    int x0 = x - (W - 1) / 2, x1 = x + W / 2, y0 = y - (W - 1) / 2, y1 = y + W / 2;
#if BORDER == BORDER_CLIP
    x0 = x0 > 0 ? x0 : 0;
    y0 = y0 > 0 ? y0 : 0;
    x1 = x1 < w - 1 ? x1 : w - 1;
    y1 = y1 < h - 1 ? y1 : h - 1;
#endif
    sum_t s1 = 0, s2 = 0;
    for (int j = y0; j <= y1; j++) {
        for (int i = x0; i <= x1; i++) {
            // The pixel this window position reads (replicated positions read an edge pixel).
            const int pi = i < 0 ? 0 : (i >= w ? w - 1 : i), pj = j < 0 ? 0 : (j >= h ? h - 1 : j);
            const int lx = pi - tile_x, ly = pj - tile_y;
            const uint p = lx >= 0 && lx < BLOCK && ly >= 0 && ly < BLOCK ? tile[ly * BLOCK + lx]
                                                                          : gray[PIXEL_INDEX(pi, pj, width)];
            s1 += p;
            s2 += p * p;
        }
    }
    const uint np = window_extent(x, w, W) * window_extent(y, h, W);
    out[PIXEL_INDEX(x, y, width)] = is_ink(tile[ty * BLOCK + tx], (uint)s1, s2, np, 1.0f / (float)np, method_params_of(k, r), stats);
}

// Algorithm 4 (Shared): every window pixel is read from local memory. The paper loads the
// group's whole (BLOCK + W)^2 neighbourhood at once, one pixel per work-item, which limits it to
// BLOCK + W <= 32; here the neighbourhood (BLOCK + W - 1 pixels on a side) is walked in pieces of
// SHARED_PIECE x SHARED_PIECE pixels that the group loads together, so any window works.
#define SHARED_PIECE (2 * BLOCK)
KERNEL void threshold_shared(GLOBAL const uchar *gray, GLOBAL uchar *out, uint width, uint height, uint window,
                             double k, double r, GLOBAL const double *stats)
{
    LOCAL_ARRAY(uchar, piece, SHARED_PIECE * SHARED_PIECE);
    const int tx = (int)LOCAL_ID_X, ty = (int)LOCAL_ID_Y;
    const int x = (int)GLOBAL_ID_X, y = (int)GLOBAL_ID_Y, w = (int)width, h = (int)height, W = (int)window;
    const int before = (W - 1) / 2;
    // The neighbourhood of the group's tile, and this item's window inside it.
    const int area_x = x - tx - before, area_y = y - ty - before, area = BLOCK + W - 1;
    const int x0 = x - before, x1 = x + W / 2, y0 = y - before, y1 = y + W / 2;
    sum_t s1 = 0, s2 = 0;
    for (int py = 0; py < area; py += SHARED_PIECE) {
        for (int px = 0; px < area; px += SHARED_PIECE) {
            LOCAL_BARRIER();
            for (int ly = ty; ly < SHARED_PIECE; ly += BLOCK)
                for (int lx = tx; lx < SHARED_PIECE; lx += BLOCK)
                    piece[ly * SHARED_PIECE + lx] = (uchar)pixel_at(gray, area_x + px + lx, area_y + py + ly, w, h);
            LOCAL_BARRIER();
            // The part of this item's window inside the piece.
            const int i0 = area_x + px > x0 ? area_x + px : x0;
            const int i1 = area_x + px + SHARED_PIECE - 1 < x1 ? area_x + px + SHARED_PIECE - 1 : x1;
            const int j0 = area_y + py > y0 ? area_y + py : y0;
            const int j1 = area_y + py + SHARED_PIECE - 1 < y1 ? area_y + py + SHARED_PIECE - 1 : y1;
            for (int j = j0; j <= j1; j++) {
                for (int i = i0; i <= i1; i++) {
                    const uint p = piece[(j - area_y - py) * SHARED_PIECE + (i - area_x - px)];
                    s1 += p;
                    s2 += p * p;
                }
            }
        }
    }
    if (x >= w || y >= h)
        return;
    const uint np = window_extent(x, w, W) * window_extent(y, h, W);
    out[PIXEL_INDEX(x, y, width)] = is_ink(gray[PIXEL_INDEX(x, y, width)], (uint)s1, s2, np, 1.0f / (float)np, method_params_of(k, r), stats);
}

// ---- The fast kernel: O(1) work per pixel whatever the window.
//
// A group of FAST_GROUP items owns a tile of `tile_width` output columns (`first_width` for the
// first of a row of tiles, the rest of the page for the last) and `tile_rows` output rows. Its
// span is the tile's columns widened by the window, from span_x (the first window column tile_x -
// before, rounded down to a multiple of 4: `shift` columns before it), with tile_width + W + 2 <=
// FAST_SPAN; with BORDER_CLIP the span stops at the page's edges (whose tiles can then be wider).
// Item i owns the FAST_COLS consecutive span columns from FAST_COLS * i (whole 4-byte words of a
// row on pages whose width is a multiple of 4) and keeps their vertical window sums in registers,
// first over the window of the tile's first row: row by row, or, when the host passes
// `use_blocks` (windows taller than 64 rows), from the whole blocks of FAST_BLOCK_ROWS rows that
// column_blocks summed, plus the rows around them. Then the group walks
// down the tile FAST_BATCH rows at a time, in four steps separated by barriers:
//  1. each item reads the batch's rows entering and leaving its columns' windows (two reads per
//     column and row, whatever W is), slides their sums down, and keeps their running sums
//     along the row (a prefix sum over its own columns) and its total;
//  2. the group scans the items' totals along each row (in two levels): each item's offset;
//  3. each item stores its running sums plus its offset: the row's prefix sums of the vertical
//     window sums, in local memory;
//  4. the output pixel at tile column x (items take x = lid, lid + FAST_GROUP, ...: neighbours
//     read neighbouring words and write neighbouring bytes) has its window sums as the
//     difference of the prefix sums at x + shift + W and x + shift, and is decided in single
//     precision; the few pixels too close to their threshold for that are decided exactly
//     afterwards, out of the unrolled loop.
// Sums wrap modulo 2^32 (or 2^64) exactly, as the true window sums fit.
//
// Built with FAST_STATS=1 the same pass writes, instead of pixels, each group's minimum gray and
// largest window variance to `partial` (Wolf's image statistics; wolf_statistics finishes them).
//
// Measured on the H100 and dropped (10 Mpx page, `ccl bench binarize --kernels fast`, medians of
// 20 runs, A/B on one machine, two rounds; CUDA W = 9 / 45 / 101 / 201: 51-54 / 58.5-62 / 62-65 /
// 75-79 us before): column_blocks reading a word of 4 columns a row (63-65 / 77 us at W = 101 /
// 201: no faster); tiles started from the window's rows alone, without column_blocks (one
// launch: 65-70 / 90-94 us); step 4 skipping every column past the tile, not only the last
// (60 / 65 / 71 / 85-87 us: the branches cost more than the decisions they save); step 4 with
// no skip at all (55 / 61 / 66 / 83 us); the decisions as two bit masks (ink, unsure) instead of
// two bits per pixel, and root_float as x * rsqrt(x + 1e-30) without its compare (52 / 59 / 63
// / 77 us: within noise). NVIDIA OpenCL moved the same way or not at all.
// Later (one H100, A/B, two or three rounds, CUDA W = 9 / 45 / 101 / 201: 51-52 / 57-60 / 62-64 /
// 76-77 us before): step 1's running sums written to local memory after its barrier (no registers
// held through the scan; step 3 adds the offsets to them there): 62-64 / 68 / 73-75 / 90-93 us;
// the scan by 64 items of 16 totals, then 4 items of 16 sums (fewer instructions, one barrier
// fewer: a few warps work while the rest wait): 60 / 67 / 72 / 86 us; items past the span
// skipping step 1's sums: 54-56 / 60 / 65-66 / 78-79 us; 4 groups per unit (64 registers: spills,
// tiles retuned with CCL_FAST_TILE): 53-60 / 59-62 / 66-69 / 79-81 us. Nsight Compute then showed
// where the time went: a fifth of the stall samples were warps waiting at the barrier after step
// 1 for the warps at the page's edges, which read their rows byte by byte (items wholly outside
// the page now read nothing: 48-49 / 54-55 / 59-60 / 70-72 us). After that, and dropped: step 4's
// pixels shared out evenly between the warps (a tile of 834 columns gave 3 warps 16 pixels a
// batch and the others 12; the columns past the whole steps of FAST_GROUP split over all items,
// each with its own row: 54-58 / 60-63 / 65-66 / 78-79 us), and a tile's first rows read 16 at a
// time instead of 8 (within noise). After the edge tiles: the pixels' and window sums'
// conversions to float by exponent bits (x | 0x4B000000 as a float, minus 2^23; the sums of
// squares in two 16-bit halves) instead of the conversion instruction: within noise. Step 2 as
// a scan of the totals within each warp by shuffles (CUDA's __shfl_up_sync; on NVIDIA's OpenCL
// the same PTX, shfl.sync.up.b32, as inline assembly, which its compiler takes), then the warps'
// totals: one barrier instead of four per batch, and 40 shuffles an item (queued timing, two
// rounds, CUDA W = 9 / 15 / 45 / 101 / 201: 44.4-44.7 / 45.9 / 49.4-49.6 / 54.6-54.7 / 55.3 ->
// 48.5 / 50.0-50.1 / 54.6 / 59.6-60.1 / 60.1-60.5 us; OpenCL within noise). On NVIDIA's
// OpenCL, FRSQRT as CUDA's inline PTX (rsqrt.approx.ftz.f32) or as native_rsqrt instead of
// rsqrt: 1-3 % slower at every window (the same pixels).
// Where NVIDIA's OpenCL loses its 10-12 % (one H100, queued timing, medians of 20 runs, two
// rounds, W = 9 / 45 / 201; experiment builds, none of them kept): in the driver's assembly of
// the PTX its compiler writes. That PTX, assembled by ptxas 13.0 (CUDA toolkit, -O3, 80
// registers, sm_90 or sm_90a), runs in 43.1-43.3 / 47.4-47.9 / 53.1-53.8 us launched through
// CUDA (CUDA's own build: 44.4-44.7 / 49.4-49.9 / 55.3-55.7; NVRTC's PTX hoists fewer invariants
// out of the batch loop), and NVIDIA's OpenCL takes that CUBIN as a program binary (a kernel
// cache entry): 41.9-42.1 / 46.2-46.4 / 53.7-54.0 us through OpenCL, against 49.6-51.6 /
// 53.5-55.4 / 61.0-63.8 for OpenCL's own build. ptxas's fast-compile levels (-Ofc min or mid)
// give the slow code (51.6-51.9 / 55.3-55.7 / 62.4-62.9 through CUDA), and so did CUBINs of
// the CUDA driver's JIT linker (cuLink*, optimisation level 4, the register cap as an option or
// as .maxnreg, the target named or not) through OpenCL: 50.4-51.1 / 54.2-55.2 / 62.5-63.4; yet
// the driver's JIT of the same PTX with .maxnreg 80 through cuModuleLoadData, launched through
// CUDA, ran as fast as ptxas's CUBIN (43.1-43.3 / 47.4-47.9 / 53.1-53.8): not resolved. With the
// driver's build, a probe (each group's SM, clock and globaltimer written over the page's last
// rows) shows the same SM clock (1.93-1.95 GHz), residency (3 groups on 111 units, 2 on 21) and
// start-up as CUDA's, and the batch loop taking 22 % more cycles (38.7 against 31.8 us a group).
// nvJitLink 13.0 (-arch=sm_90 -O3 -maxrregcount=80, also through -Xptxas) writes a CUBIN of the
// driver JIT linker's size (95776 bytes; threshold_fast 2656 instructions, against 2808 from
// ptxas 13.0 and 2704 from ptxas -Ofc min; not timed on the GPU). Where a CUDA toolkit's ptxas
// is installed, the OpenCL backend now assembles NVIDIA OpenCL's PTX with it (ptxas.rs there):
// 42.5-53.5 us at W = 9-201, 0.92-0.97x CUDA; elsewhere the driver's build remains. Also within noise
// or slower there: -cl-nv-arch sm_90, -cl-nv-opt-level 3 or 4, register caps of 72 or 88, the
// shared-memory carveout (through CUDA, with OpenCL's spills: 32 / 40 bytes at 80 registers).

// Where windows taller than 64 rows lose their time (one H100, Nsight Compute over one
// `ccl binarize` of the 10 Mpx page, --cache-control none): column_blocks takes 6.1-6.7 us, as it
// reads the page from DRAM (10 MB, L2 hit rate 50-56 %; 3.1-3.2 us on a page of 0.86 Mpx:
// about 3 us of it is fixed), and threshold_fast 45.3-46.2 us, reading the page from DRAM again.
// Dropped then (queued timing, two rounds, CUDA W = 9 / 101 / 201: 41.9-42.2 / 51.8-52.3 /
// 52.5-53.1 us before): column_blocks with a work-item per word of 4 columns (6.1-6.4 us: no
// faster; 8.4 us instead of 3.1 on a page whose width is not a multiple of 4, read by bytes);
// blocks starting where the windows of the tiles' first rows start (the host choosing the start
// that leaves the fewest rows to read one by one: 5 a column at W = 101 instead of 37), which
// gave 51.4 us at W = 101 and nothing at W = 201 (9 rows either way), and made NVIDIA OpenCL's
// real pages 0.5-0.9 us slower; and the tiles summing the blocks instead of column_blocks (block
// b summed and stored by the first tile whose window holds it, which marks it with the launch's
// number after a fence; the tiles below take it once marked, or sum it from the image after 16
// looks): exact, and clean under compute-sanitizer's memcheck, racecheck and synccheck, but
// 43.6-43.8 / 53.0-53.2 / 59.9 us (the batch loop spilled 36 bytes, and, presumably, tiles
// found the blocks of the tiles above them unmarked and summed them again). (Host work between
// a run's first mark and its launches counts in NVIDIA OpenCL's queued timing: a loop of 4000
// steps before the launch added 10-20 us there, none on CUDA.) What did help: the fast kernel
// launched to overlap column_blocks on CUDA (see threshold_fast's WAIT_FOR_PREVIOUS_KERNEL).
// With that overlap (one H100, queued timing, A/B in one call, two or three rounds, CUDA W = 101
// / 201: 50.3-50.6 / 50.8-51.2 us before): the block sums read 4 columns a 16-byte load where
// the item's columns are whole words (kept: 50.2-50.6 / 50.2-50.7 us). Dropped: column_blocks
// storing each block's sums added to those of the blocks before it in its segment of 8 (two reads
// per segment a window's blocks cross instead of one per block; groups of 32 columns x 8 blocks
// sharing local memory): column_blocks 6.1 -> 7.4 us alone, 51.4 / 50.8 us; blocks starting where
// the tiles' windows start (above; threshold_fast alone 45.3 -> 44.3 us at W = 101, yet 51.3 us
// overlapped: the rows it saves were read while column_blocks ran); column_blocks with 2 or 4
// blocks an item (one wave of groups), with 32 registers (launch bounds of 8 groups a unit), or
// letting the next kernel start at its end instead of its start: within noise or slower; the
// first batch's rows read before the wait (12 bytes of spills: 0.3-0.6 us slower everywhere);
// column_blocks with an item per 4 columns, a word of each row (313 groups, one wave): 50.0-50.2 /
// 50.2-50.6 us against 50.4-50.7 / 50.5-50.9, but 0.8 us slower on DIBCO 2009-H01, whose width
// is no multiple of 4 (read by bytes), and the same kernel keeping an item per column for such
// widths took 72 registers and 52.6 / 52.7 us;
// and the groups summing every block themselves, their share each, then meeting at a grid
// barrier (a count and a generation in global memory, bounded polls, the rows read from the
// image where the barrier stays closed): outputs equal on 72 configurations, NVIDIA OpenCL 2-4 us
// faster at W = 101 and 201 (49.5-52.2 / 50.1-52.0 us against 53.7-54.4), but CUDA 52.4 / 53.0-53.6
// us (and 1.2 us slower at W = 9, which never takes that path: the loop spilled), and it needs
// every group of the grid resident at once, which OpenCL cannot promise. So W = 101 and 201 still
// take about 8 us more than W = 9 (42 us): column_blocks ends about 6 us after the start (1221
// groups in two waves, the page read from L2), and the tiles' batches start only then.
// Later (queued timing, medians of 30 runs, A/B in one call, two or three rounds, on five H100s that
// measured the kernel before at 49.4-50.4 / 49.8-50.7 us at W = 101 / 201): after the wait, each
// item adds the sums of up to 4 blocks from loads issued together, one wait for memory where
// there was one per block (W = 201 reads 6 blocks, W = 101 2 or 3): kept, 49.4-50.2 / 49.2-50.0
// us, 0-0.3 / 0.4-0.8 us faster on each machine, W = 9 and 45 unchanged, NVIDIA OpenCL within
// noise. Dropped in the same calls: column_blocks as a few groups of 128 items of 32 registers
// that walk all the blocks (the registers threshold_fast's three groups leave free, so that
// both kernels run side by side from the start): 60.4-60.9 us with 132 groups, 55.5-56.0 with
// 264, as so few items keep too few loads in flight; column_blocks by words (an item per word of
// 4 columns, 313 groups) on top of the batched loads: no faster (49.5-49.8 us); the tile's first
// rows read 16 at a time: W = 9 0.5 us slower, the rest within noise; the first batch's rows
// read before the wait and kept in `totals` until the loop: the loop spilled (8-12 bytes),
// 0.7-1.0 us slower everywhere; and blocks starting where the tiles' windows start (5 rows read
// one by one at W = 101 instead of 37, 3 blocks instead of 2): 50.8-51.2 / 52.6-52.9 us on CUDA
// against 49.8-50.2 / 49.7-50.0, though NVIDIA OpenCL gained 0.5-1 us at W = 101. Then (a sixth
// H100) the tile's first rows read 8 at a time with the loads past the count predicated off,
// instead of the compiler's remainder, which waits for each of the last count % 8 rows on its
// own: 0.8-1.4 us slower at every window on both backends (W = 9 42.5-42.6 against 41.6-41.8).
// And (2026-11-28, one H100, medians of 30 runs, three rounds, the synthetic 10 Mpx page) W = 101
// started from its rows alone, without column_blocks: 51.0-51.3 us against 50.0 (W = 201 so:
// 59.5-59.7 against 49.7-49.8).

#define FAST_COLS (FAST_SPAN / FAST_GROUP)           // span columns per item in steps 1 and 3
#define FAST_ROW_ITEMS (FAST_GROUP / FAST_BATCH)     // items per row in step 2
#define FAST_CHUNK (FAST_GROUP / FAST_ROW_ITEMS)     // item totals each of them scans (FAST_BATCH)
#define FAST_PIXELS (FAST_BATCH * FAST_COLS)         // output pixels per item and batch (step 4)
// Chunks per super-chunk in step 2's scan (it divides FAST_ROW_ITEMS).
#if FAST_ROW_ITEMS >= 256
#define FAST_SUPER 16
#else
#define FAST_SUPER 8
#endif
// Where prefix position p (0 ..= FAST_SPAN; position s + 1 ends with span column s) of a row lies
// in local memory: 3 words on, so that each item's positions start on a multiple of 4 words.
#define FAST_AT(p) ((p) + 3)
#define FAST_ROW_STRIDE (FAST_SPAN + 4)
// FAST_GROUPS_PER_UNIT (a define): groups of the fast kernel that a compute unit should hold at
// once (its register budget; the host passes the matching REGISTER_BUDGET too).
#if FAST_PIXELS > 16
#error "the fast kernel keeps two bits per output pixel of a batch in a 32-bit word"
#endif

// The image row `y` that a window row stands for (the nearest edge row with BORDER_REPLICATE),
// or -1 for none (BORDER_CLIP, outside the image).
DEVICE_FN int window_row(int y, int h)
{
#if BORDER == BORDER_REPLICATE
    return y < 0 ? 0 : (y >= h ? h - 1 : y);
#else
    return y >= 0 && y < h ? y : -1;
#endif
}

// FAST_BLOCK_ROWS (a define): rows per block of the column sums that start a tile whose window is
// tall (column_blocks): 16 or 32, as the host picks for the window (block_rows in
// src/binarize/device.rs).
// Blocks whose sums a work-item of threshold_fast loads at once, before it adds any: 4 (one wait
// for memory instead of 4; 6 or more made the batch loop spill registers), but 1 with
// BORDER_REPLICATE, whose build spilled with more (NVRTC 13.0, sm_90).
#if BORDER == BORDER_REPLICATE
#define FAST_BLOCK_LOADS 1
#else
#define FAST_BLOCK_LOADS 4
#endif

// The sums of every column over each whole block of FAST_BLOCK_ROWS rows: S1 of block b at
// blocks[b * width + x], S2 at blocks[(blocks_down + b) * width + x] (blocks_down = height /
// FAST_BLOCK_ROWS). With them the fast kernel starts a tile from a tall window in O(W / 32 + 64)
// reads per column instead of O(W). One work-item per column and block.
KERNEL void column_blocks(GLOBAL const uchar *gray, GLOBAL uint *blocks, uint width, uint height)
{
    const uint x = GLOBAL_ID_X, b = GLOBAL_ID_Y, blocks_down = height / FAST_BLOCK_ROWS;
    LET_NEXT_KERNEL_START(); // (threshold_fast waits for these sums before it reads them)
    if (x >= width || b >= blocks_down)
        return;
    uint s1 = 0, s2 = 0;
    for (uint i = 0; i < FAST_BLOCK_ROWS; i++) {
        const uint p = gray[PIXEL_INDEX(x, b * FAST_BLOCK_ROWS + i, width)];
        s1 += p;
        s2 += p * p;
    }
    blocks[(index_t)b * width + x] = s1;
    blocks[((index_t)blocks_down + b) * width + x] = s2;
}

// The pair (S1, S2) of the fast kernel's prefix sums as one value: with 32-bit sums, one 64-bit
// word S1 * 2^32 + S2 modulo 2^64 (sums and differences of pairs are then one 64-bit operation,
// and a window's difference splits back exactly, as its S1 and S2 are below 2^32 for W <= 257);
// with 64-bit sums, a structure.
#if WIDE_SUMS
typedef struct {
    uint s1;
    ulong s2;
} sums_t;
DEVICE_FN sums_t sums_of(uint s1, sum_t s2)
{
    sums_t v;
    v.s1 = s1;
    v.s2 = s2;
    return v;
}
DEVICE_FN sums_t sums_add(sums_t a, sums_t b)
{
    return sums_of(a.s1 + b.s1, a.s2 + b.s2);
}
DEVICE_FN sums_t sums_sub(sums_t a, sums_t b)
{
    return sums_of(a.s1 - b.s1, a.s2 - b.s2);
}
#define SUMS_S1(v) ((v).s1)
#define SUMS_S2(v) ((v).s2)
// Local arrays of pairs: two arrays (S1, S2) of 4 and 8 bytes per pair.
#define SUMS_ARRAY(name, size) \
    LOCAL_ARRAY(uint, name##_s1, size); \
    LOCAL_ARRAY(ulong, name##_s2, size)
#define SUMS_LOAD(name, i) sums_of(name##_s1[i], name##_s2[i])
// Where pair i of a local array lies, and pair k on from there.
typedef struct {
    LOCAL const uint *s1;
    LOCAL const ulong *s2;
} sums_ref;
DEVICE_FN sums_ref sums_ref_of(LOCAL const uint *s1, LOCAL const ulong *s2, int i)
{
    sums_ref ref;
    ref.s1 = s1 + i;
    ref.s2 = s2 + i;
    return ref;
}
#define SUMS_REF(name, i) sums_ref_of(name##_s1, name##_s2, (i))
#define SUMS_READ(ref, k) sums_of((ref).s1[k], (ref).s2[k])
#define SUMS_STORE(name, i, v) \
    do { \
        const sums_t stored_ = (v); \
        name##_s1[i] = stored_.s1; \
        name##_s2[i] = stored_.s2; \
    } while (0)
#else
typedef ulong sums_t;
#define sums_of(s1, s2) (((ulong)(s1) << 32) + (ulong)(s2))
#define sums_add(a, b) ((a) + (b))
#define sums_sub(a, b) ((a) - (b))
#define SUMS_S1(v) ((uint)((v) >> 32))
#define SUMS_S2(v) ((uint)(v))
#define SUMS_ARRAY(name, size) LOCAL_ARRAY(ulong, name, size)
#define SUMS_LOAD(name, i) ((name)[i])
typedef LOCAL const ulong *sums_ref;
#define SUMS_REF(name, i) ((sums_ref) & (name)[i])
#define SUMS_READ(ref, k) ((ref)[k])
#define SUMS_STORE(name, i, v) ((name)[i] = (v))
#endif

#define FAST_WORDS (FAST_COLS / 4) // 4-byte words of an item's columns in a row
#if FAST_COLS % 4 != 0
#error "the fast kernel's items own whole words of 4 columns"
#endif
// Byte c of the words `row` (an item's column c).
#define FAST_BYTE(row, c) (((row)[(c) / 4] >> (8 * ((c) % 4))) & 0xffu)

// An item's columns of the image row starting at index `line` into `row`, four per word (0 where
// !`valid`): with `words`, the whole words from column x0 on; otherwise each column's byte from
// `column` (0 for -1: outside the image).
DEVICE_FN void fetch_row(GLOBAL const uchar *gray, index_t line, int valid, int words, int x0, const int *column,
                         uint *row)
{
    if (words) {
        GLOBAL const uint *from = (GLOBAL const uint *)(gray + line + x0);
        for (int k = 0; k < FAST_WORDS; k++)
            row[k] = valid ? from[k] : 0u;
    } else {
        for (int k = 0; k < FAST_WORDS; k++) {
            uint word = 0;
            for (int c = 4 * k; c < 4 * k + 4; c++)
                word |= (valid && column[c] >= 0 ? (uint)gray[line + column[c]] : 0u) << (8 * (c % 4));
            row[k] = word;
        }
    }
}

// Step 1's reads for the batch of rows from y0: an item's columns of the rows entering and
// leaving their windows, four per word (0 for a row outside the image, for the tile's first row,
// which has its sums already, and for an item that reads nothing: `reads` 0). `x0`: the item's
// first column; `words`, `column`: as fetch_row.
DEVICE_FN void fetch_batch(GLOBAL const uchar *gray, uint width, int h, int y0, int tile_y, int before, int after,
                           int reads, int words, int x0, const int *column, uint entering[FAST_BATCH][FAST_WORDS],
                           uint leaving[FAST_BATCH][FAST_WORDS])
{
    if (!reads) {
        for (int b = 0; b < FAST_BATCH; b++)
            for (int k = 0; k < FAST_WORDS; k++)
                entering[b][k] = leaving[b][k] = 0;
    } else if (words && y0 > tile_y && y0 - 1 - before >= 0 && y0 + FAST_BATCH + after <= h) {
        // Every row of the batch slides, and every window row lies in the image.
        GLOBAL const uchar *in = gray + PIXEL_INDEX(x0, y0 + after, width);
        GLOBAL const uchar *out = gray + PIXEL_INDEX(x0, y0 - 1 - before, width);
        for (int b = 0; b < FAST_BATCH; b++) {
            for (int k = 0; k < FAST_WORDS; k++) {
                entering[b][k] = ((GLOBAL const uint *)(in + (index_t)b * width))[k];
                leaving[b][k] = ((GLOBAL const uint *)(out + (index_t)b * width))[k];
            }
        }
    } else {
        for (int b = 0; b < FAST_BATCH; b++) {
            const int y = y0 + b;
            const int in = window_row(y + after, h), leave = window_row(y - 1 - before, h);
            const int slide = y > tile_y;
            fetch_row(gray, PIXEL_INDEX(0, in < 0 ? 0 : in, width), slide && in >= 0, words, x0, column, entering[b]);
            fetch_row(gray, PIXEL_INDEX(0, leave < 0 ? 0 : leave, width), slide && leave >= 0, words, x0, column,
                      leaving[b]);
        }
    }
}

// The prefix positions that start and end the window of tile column x (span positions x + shift
// and x + shift + W), clamped to the image with BORDER_CLIP (`limit`: the image's end in span
// positions; columns outside the image add nothing).
DEVICE_FN int window_first(int x, int shift)
{
#if BORDER == BORDER_REPLICATE
    return x + shift;
#else
    return x + shift > 0 ? x + shift : 0;
#endif
}

DEVICE_FN int window_last(int x, int shift, int W, int limit)
{
#if BORDER == BORDER_REPLICATE
    (void)limit;
    return x + shift + W;
#else
    return x + shift + W < limit ? x + shift + W : limit;
#endif
}

KERNEL REQUIRED_GROUP_SIZE(FAST_GROUP, 1, 1, FAST_GROUPS_PER_UNIT) void threshold_fast(
    GLOBAL const uchar *gray, GLOBAL uchar *out, uint width, uint height, uint window, double k, double r,
    GLOBAL const double *stats, uint first_width, uint tile_width, uint tiles_across, uint tile_rows,
    GLOBAL double *partial, GLOBAL const uint *blocks, uint use_blocks)
{
    SUMS_ARRAY(prefix, FAST_BATCH * FAST_ROW_STRIDE);
    SUMS_ARRAY(totals, FAST_BATCH * FAST_GROUP);
    SUMS_ARRAY(chunks, FAST_GROUP);
    SUMS_ARRAY(supers, FAST_GROUP / FAST_SUPER);
    const int lid = (int)LOCAL_ID_X;
    const int w = (int)width, h = (int)height, W = (int)window;
    const int before = (W - 1) / 2, after = W / 2;
    // Of a row of `tiles_across` tiles the first is `first_width` columns wide, the last takes
    // the rest of the page, and the others are `tile_width` wide.
    const int tile_x = GROUP_ID_X == 0 ? 0 : (int)(first_width + (GROUP_ID_X - 1) * tile_width);
    const int tile_y = (int)(GROUP_ID_Y * tile_rows);
    if (tile_x >= w || tile_y >= h)
        return;
    const int columns = GROUP_ID_X + 1 == tiles_across ? w - tile_x // output columns
                        : (int)(GROUP_ID_X == 0 ? first_width : tile_width);
    // The span starts at the window's first column rounded down to a multiple of 4 (`shift`
    // columns before it), so that an item's columns are whole 4-byte words of a row when the
    // page's width is a multiple of 4 and the page starts on a word (`aligned`; a borrowed
    // buffer may not). With BORDER_CLIP it starts in the image and ends at its last column at
    // the latest: window columns outside the image add nothing to the sums, so a window's prefix
    // positions are clamped to the image (`span_end`), and the tiles at the page's left and
    // right edges can be wider than the others by half a window.
#if BORDER == BORDER_REPLICATE
    const int span_x = (tile_x - before) & ~3;
    const int span_end = tile_x + columns + after; // (exclusive, in image columns)
#else
    const int span_x = (tile_x - before > 0 ? tile_x - before : 0) & ~3;
    const int span_end = tile_x + columns + after < w ? tile_x + columns + after : w;
#endif
    const int shift = tile_x - before - span_x; // (negative at the page's left edge with BORDER_CLIP)
    const int aligned = (w & 3) == 0 && ((size_t)gray & 3) == 0;
    const int rows_end = tile_y + (int)tile_rows < h ? tile_y + (int)tile_rows : h;
    const int first = FAST_COLS * lid; // this item's first span column
    // Whether this item's columns all lie in the image, as whole words: none needs a border test
    // then, and they are read a word at a time. (Columns past the span add to prefix positions
    // that no output pixel reads.)
    const int words = aligned && span_x + first >= 0 && span_x + first + FAST_COLS <= w;
    // Whether any of this item's columns lies in the span, and so whether it reads the image at
    // all: items past the span (or, with BORDER_CLIP, past the page) read nothing, and their sums
    // stay 0 (no pixel reads them). (With BORDER_CLIP no span starts before the page either: on
    // a page whose width is a multiple of 4 no item reads byte by byte, as the items at the
    // page's edges did, which took the slowest warps' time in every batch.)
    const int reads = span_x + first < span_end;
#if FAST_STATS
    LOCAL_ARRAY(double, reduce_var, FAST_GROUP);
    LOCAL_ARRAY(uint, reduce_min, FAST_GROUP);
    double widest = 0.0;
    uint lowest = 255;
#endif
    if (lid < FAST_BATCH)
        SUMS_STORE(prefix, lid * FAST_ROW_STRIDE + FAST_AT(0), sums_of(0, 0)); // position 0 of a row, never written again

    // Step 1's columns: the image column each reads (-1: none, its sums stay 0), and their
    // vertical sums over the first output row's window.
    int column[FAST_COLS];
    uint v1[FAST_COLS];
    sum_t v2[FAST_COLS];
    for (int c = 0; c < FAST_COLS; c++) {
        const int x = span_x + first + c;
#if BORDER == BORDER_REPLICATE
        column[c] = x < 0 ? 0 : (x >= w ? w - 1 : x);
#else
        column[c] = x >= 0 && x < w ? x : -1;
#endif
        v1[c] = 0;
        v2[c] = 0;
    }
    const int lo = tile_y - before, hi = tile_y + after; // the window's rows
    const int top = lo > 0 ? lo : 0, bottom = hi < h - 1 ? hi : h - 1; // those in the image
    // With use_blocks, the whole blocks of FAST_BLOCK_ROWS rows between top and bottom come from
    // column_blocks, and only the rows above and below them are read here.
    int first_block = 0, end_block = 0;
    if (use_blocks) {
        first_block = (top + FAST_BLOCK_ROWS - 1) / FAST_BLOCK_ROWS;
        end_block = (bottom + 1) / FAST_BLOCK_ROWS;
        if (end_block < first_block)
            end_block = first_block;
    }
    const int whole = end_block > first_block;
    const int upper = whole ? first_block * FAST_BLOCK_ROWS - top : bottom - top + 1; // rows from top
    const int lower_start = end_block * FAST_BLOCK_ROWS, lower = whole ? bottom + 1 - lower_start : 0;
    // (The word reads step a row pointer down instead of calling fetch_row: with fetch_row's row
    // index per read the kernel spilled more registers and took 3-8 % longer on the H100.)
    for (int part = 0; part < 2 && reads; part++) {
        const int from = part == 0 ? top : lower_start, count = part == 0 ? upper : lower;
        if (words) {
            GLOBAL const uchar *row = gray + PIXEL_INDEX(span_x + first, from, width);
#pragma unroll 8
            for (int i = 0; i < count; i++) {
                for (int k = 0; k < FAST_WORDS; k++) {
                    const uint word = ((GLOBAL const uint *)(row + (index_t)i * width))[k];
                    for (int c = 4 * k; c < 4 * k + 4; c++) {
                        const uint p = (word >> (8 * (c % 4))) & 0xffu;
                        v1[c] += p;
                        v2[c] += p * p;
                    }
                }
            }
        } else {
            for (int i = 0; i < count; i++) {
                uint row[FAST_WORDS];
                fetch_row(gray, PIXEL_INDEX(0, from + i, width), 1, 0, span_x + first, column, row);
                for (int c = 0; c < FAST_COLS; c++) {
                    const uint p = FAST_BYTE(row, c);
                    v1[c] += p;
                    v2[c] += p * p;
                }
            }
        }
    }
    // The host may launch this kernel while column_blocks ends (Gpu::launch_overlapping): the
    // work above overlaps it, and the block sums are read once it has finished.
    if (use_blocks)
        WAIT_FOR_PREVIOUS_KERNEL();
    const index_t plane = (index_t)(h / FAST_BLOCK_ROWS) * width;
    for (int b0 = first_block; b0 < end_block && reads; b0 += FAST_BLOCK_LOADS) {
        if (words) {
            // The item's columns are whole words of the page: 4 columns' sums a 16-byte load,
            // the loads of FAST_BLOCK_LOADS blocks issued before their sums are added (a load
            // past the last block reads nothing and adds 0).
            for (int k = 0; k < FAST_WORDS; k++) {
                uint4 s1[FAST_BLOCK_LOADS], s2[FAST_BLOCK_LOADS];
                for (int i = 0; i < FAST_BLOCK_LOADS; i++) {
                    const index_t at = (index_t)(b0 + i) * width + column[4 * k];
                    if (b0 + i < end_block) {
                        s1[i] = *(GLOBAL const uint4 *)(blocks + at);
                        s2[i] = *(GLOBAL const uint4 *)(blocks + plane + at);
                    } else {
                        s1[i].x = s1[i].y = s1[i].z = s1[i].w = 0;
                        s2[i] = s1[i];
                    }
                }
                for (int i = 0; i < FAST_BLOCK_LOADS; i++) {
                    v1[4 * k] += s1[i].x;
                    v1[4 * k + 1] += s1[i].y;
                    v1[4 * k + 2] += s1[i].z;
                    v1[4 * k + 3] += s1[i].w;
                    v2[4 * k] += s2[i].x;
                    v2[4 * k + 1] += s2[i].y;
                    v2[4 * k + 2] += s2[i].z;
                    v2[4 * k + 3] += s2[i].w;
                }
            }
        } else {
            for (int b = b0; b < b0 + FAST_BLOCK_LOADS && b < end_block; b++) {
                for (int c = 0; c < FAST_COLS; c++) {
                    if (column[c] >= 0) {
                        v1[c] += blocks[(index_t)b * width + column[c]];
                        v2[c] += blocks[plane + (index_t)b * width + column[c]];
                    }
                }
            }
        }
    }
#if BORDER == BORDER_REPLICATE
    // Window rows above (below) the image repeat its first (last) row.
    for (int c = 0; c < FAST_COLS; c++) {
        const uint first_p = gray[column[c]], last_p = gray[PIXEL_INDEX(column[c], h - 1, width)];
        const uint above = (uint)(top - lo), below = (uint)(hi - bottom);
        v1[c] += above * first_p + below * last_p;
        v2[c] += (sum_t)above * (first_p * first_p) + (sum_t)below * (last_p * last_p);
    }
#endif
    // Step 4's output columns x = lid + j * FAST_GROUP (the last column of the tile stands in for
    // those past it): where their windows' prefix sums start and end in a batch's first row,
    // their columns' share of NP and its reciprocal (a row's share multiplies it: no division per
    // pixel), and which are in the tile.
    sums_ref window_start[FAST_COLS], window_end[FAST_COLS];
    uint columns_np[FAST_COLS];
    float columns_inverse[FAST_COLS];
    uint columns_valid = 0; // bit 2j + 1: column lid + j * FAST_GROUP is in the tile
    for (int j = 0; j < FAST_COLS; j++) {
        const int x = lid + j * FAST_GROUP < columns ? lid + j * FAST_GROUP : columns - 1;
        window_start[j] = SUMS_REF(prefix, FAST_AT(window_first(x, shift)));
        window_end[j] = SUMS_REF(prefix, FAST_AT(window_last(x, shift, W, span_end - span_x)));
        columns_np[j] = window_extent(tile_x + x, w, W);
        columns_inverse[j] = 1.0f / (float)columns_np[j];
        columns_valid |= (lid + j * FAST_GROUP < columns ? 2u : 0u) << (2 * j);
    }
    const float window_inverse = 1.0f / (float)W;
    const method_params params = method_params_of(k, r);

    const int slice_row = lid / FAST_ROW_ITEMS, slice = lid % FAST_ROW_ITEMS;
    const int chunk_base = slice_row * FAST_GROUP + slice * FAST_CHUNK;
    uint entering[FAST_BATCH][FAST_WORDS], leaving[FAST_BATCH][FAST_WORDS];
    fetch_batch(gray, width, h, tile_y, tile_y, before, after, reads, words, span_x + first, column, entering, leaving);
    for (int y0 = tile_y; y0 < rows_end; y0 += FAST_BATCH) {
        // 1. The vertical sums of the batch's rows (read during the previous batch, or before the
        // first), their running sums along the row, the totals; then the next batch's reads, in
        // flight during steps 2-4.
        sums_t run[FAST_BATCH][FAST_COLS];
        for (int b = 0; b < FAST_BATCH; b++) {
            sums_t sum = sums_of(0, 0);
            for (int c = 0; c < FAST_COLS; c++) {
                const uint e = FAST_BYTE(entering[b], c), l = FAST_BYTE(leaving[b], c);
                v1[c] += e - l;
                v2[c] += (sum_t)(e * e) - (sum_t)(l * l);
                sum = sums_add(sum, sums_of(v1[c], v2[c]));
                run[b][c] = sum;
            }
            SUMS_STORE(totals, b * FAST_GROUP + lid, sum);
        }
        fetch_batch(gray, width, h, y0 + FAST_BATCH, tile_y, before, after, reads && y0 + FAST_BATCH < rows_end,
                    words, span_x + first, column, entering, leaving);
        LOCAL_BARRIER();
        // 2. Each item's offset in its row: an exclusive scan of the totals along each row, in two
        // levels. FAST_ROW_ITEMS items per row sum FAST_CHUNK consecutive totals each (a chunk),
        // the first items of each row scan FAST_SUPER consecutive chunks each (a super-chunk),
        // and each item adds the super-chunks before its own and its chunk's offset in its
        // super-chunk to its offsets within its chunk, which it writes over its chunk.
        {
            sums_t before[FAST_CHUNK];
            sums_t sum = sums_of(0, 0);
            for (int i = 0; i < FAST_CHUNK; i++) {
                before[i] = sum;
                sum = sums_add(sum, SUMS_LOAD(totals, chunk_base + i));
            }
            SUMS_STORE(chunks, lid, sum);
            LOCAL_BARRIER();
            // The first items of each row: their super-chunk's sum, and over it each chunk's
            // offset within the super-chunk (over the chunk sums: each is read before it is
            // overwritten, by this item alone).
            if (slice < FAST_ROW_ITEMS / FAST_SUPER) {
                sums_t super = sums_of(0, 0);
                for (int i = 0; i < FAST_SUPER; i++) {
                    const int at = slice_row * FAST_ROW_ITEMS + slice * FAST_SUPER + i;
                    const sums_t chunk = SUMS_LOAD(chunks, at);
                    SUMS_STORE(chunks, at, super);
                    super = sums_add(super, chunk);
                }
                SUMS_STORE(supers, slice_row * (FAST_ROW_ITEMS / FAST_SUPER) + slice, super);
            }
            LOCAL_BARRIER();
            sums_t offset = SUMS_LOAD(chunks, lid);
            for (int i = 0; i < FAST_ROW_ITEMS / FAST_SUPER; i++)
                if (i < slice / FAST_SUPER)
                    offset = sums_add(offset, SUMS_LOAD(supers, slice_row * (FAST_ROW_ITEMS / FAST_SUPER) + i));
            for (int i = 0; i < FAST_CHUNK; i++)
                SUMS_STORE(totals, chunk_base + i, sums_add(offset, before[i]));
        }
        LOCAL_BARRIER();
        // 3. The rows' prefix sums; then the batch's output pixels' gray values, whose reads are
        // in flight during the barrier.
        for (int b = 0; b < FAST_BATCH; b++) {
            const sums_t offset = SUMS_LOAD(totals, b * FAST_GROUP + lid);
            for (int c = 0; c < FAST_COLS; c++)
                SUMS_STORE(prefix, b * FAST_ROW_STRIDE + FAST_AT(first + c + 1), sums_add(run[b][c], offset));
        }
        uint centre[FAST_BATCH][FAST_COLS];
        for (int b = 0; b < FAST_BATCH; b++) {
            GLOBAL const uchar *row = gray + PIXEL_INDEX(tile_x, y0 + b < rows_end ? y0 + b : y0, width);
            for (int j = 0; j < FAST_COLS; j++)
                centre[b][j] = lid + j * FAST_GROUP < columns ? row[lid + j * FAST_GROUP] : 0;
        }
        LOCAL_BARRIER();
        // 4. The output pixels (those past the tile are decided too, and dropped). Pixel (row y0 + b,
        // column lid + j * FAST_GROUP) is number i = b * FAST_COLS + j: bits 2i and 2i + 1 of
        // `decided` hold decide_float's answer.
#if !FAST_STATS
        uint decided = 0;
#endif
        // The rows' share of NP and its reciprocal: W and 1 / W unless a window row is clipped.
        uint batch_np[FAST_BATCH];
        float batch_inverse[FAST_BATCH];
        if (BORDER == BORDER_REPLICATE || (y0 - before >= 0 && y0 + FAST_BATCH - 1 + after < h)) {
            for (int b = 0; b < FAST_BATCH; b++) {
                batch_np[b] = (uint)W;
                batch_inverse[b] = window_inverse;
            }
        } else {
            for (int b = 0; b < FAST_BATCH; b++) {
                batch_np[b] = window_extent(y0 + b, h, W);
                batch_inverse[b] = 1.0f / (float)batch_np[b];
            }
        }
        for (int b = 0; b < FAST_BATCH; b++) {
            const uint rows_np = batch_np[b];
            const float rows_inverse = batch_inverse[b];
            const int base = b * FAST_ROW_STRIDE;
            for (int j = 0; j < FAST_COLS; j++) {
                if (j == FAST_COLS - 1 && lid + j * FAST_GROUP >= columns)
                    continue; // (only to save the work: earlier columns past the tile are dropped later)
                const sums_t window_sums = sums_sub(SUMS_READ(window_end[j], base), SUMS_READ(window_start[j], base));
                const uint s1 = SUMS_S1(window_sums);
                const sum_t s2 = SUMS_S2(window_sums);
                const uint np = columns_np[j] * rows_np;
                const uint p = centre[b][j];
#if FAST_STATS
                if (y0 + b < rows_end && lid + j * FAST_GROUP < columns) {
                    const double n = (double)np;
                    const double variance = DDIV((double)((ulong)np * s2 - (ulong)s1 * s1), DMUL(n, n));
                    widest = variance > widest ? variance : widest;
                    lowest = p < lowest ? p : lowest;
                }
#else
                decided |= decide_float(p, s1, s2, np, columns_inverse[j] * rows_inverse, params, stats)
                           << (2 * (b * FAST_COLS + j));
#endif
            }
        }
#if !FAST_STATS
        // The pixels in the tile that decide_float left unsure (rarely more than one per item), one
        // at a time: their window sums again, and the exact decision.
        uint in_tile = 0; // bit 2i + 1: pixel i lies in the tile
        for (int b = 0; b < FAST_BATCH; b++)
            in_tile |= y0 + b < rows_end ? columns_valid << (2 * b * FAST_COLS) : 0u;
        uint unsure = decided & in_tile;
        while (unsure != 0) {
            const int bit = 31 - (int)LEADING_ZEROS(unsure);
            unsure ^= 1u << bit;
            const int i = bit / 2, b = i / FAST_COLS, x = lid + (i % FAST_COLS) * FAST_GROUP, y = y0 + b;
            const int base = b * FAST_ROW_STRIDE;
            const sums_t window_sums = sums_sub(SUMS_LOAD(prefix, base + FAST_AT(window_last(x, shift, W, span_end - span_x))),
                                                SUMS_LOAD(prefix, base + FAST_AT(window_first(x, shift))));
            const uint s1 = SUMS_S1(window_sums);
            const sum_t s2 = SUMS_S2(window_sums);
            const uint np = window_extent(tile_x + x, w, W) * window_extent(y, h, W);
            const uint p = gray[PIXEL_INDEX(tile_x + x, y, width)]; // (read in step 3: a cache hit)
            decided ^= (2u ^ (uint)is_ink_exact(p, s1, s2, np, params.k, params.r, stats)) << (2 * i);
        }
        // Where every pixel of the item's batch lies in the tile (all but the last columns' items,
        // and the tile's last batch), the stores need no test each.
        const uint everywhere = 0xaaaaaaaau >> (32 - 2 * FAST_PIXELS);
        if (in_tile == everywhere) {
            for (int b = 0; b < FAST_BATCH; b++) {
                GLOBAL uchar *row = out + PIXEL_INDEX(tile_x, y0 + b, width);
                for (int j = 0; j < FAST_COLS; j++)
                    row[lid + j * FAST_GROUP] = (uchar)((decided >> (2 * (b * FAST_COLS + j))) & 1u);
            }
        } else {
            for (int b = 0; b < FAST_BATCH; b++) {
                GLOBAL uchar *row = out + PIXEL_INDEX(tile_x, y0 + b, width);
                for (int j = 0; j < FAST_COLS; j++) {
                    if ((in_tile >> (2 * (b * FAST_COLS + j) + 1)) & 1u)
                        row[lid + j * FAST_GROUP] = (uchar)((decided >> (2 * (b * FAST_COLS + j))) & 1u);
                }
            }
        }
#endif
    }
#if FAST_STATS
    reduce_var[lid] = widest;
    reduce_min[lid] = lowest;
    LOCAL_BARRIER();
    for (uint step = FAST_GROUP / 2; step > 0; step /= 2) {
        if (lid < step) {
            reduce_var[lid] = reduce_var[lid + step] > reduce_var[lid] ? reduce_var[lid + step] : reduce_var[lid];
            reduce_min[lid] = reduce_min[lid + step] < reduce_min[lid] ? reduce_min[lid + step] : reduce_min[lid];
        }
        LOCAL_BARRIER();
    }
    if (lid == 0) {
        const uint group = GROUP_ID_Y * tiles_across + GROUP_ID_X;
        partial[2 * group] = (double)reduce_min[0];
        partial[2 * group + 1] = reduce_var[0];
    }
#endif
}

// Wolf's image statistics from the groups' partial ones: stats[0] = the minimum gray M,
// stats[1] = the largest window deviation R. One work-item.
KERNEL void wolf_statistics(GLOBAL const double *partial, uint groups, GLOBAL double *stats)
{
    if (GLOBAL_ID_X != 0)
        return;
    double lowest = 255.0, widest = 0.0;
    for (uint g = 0; g < groups; g++) {
        lowest = partial[2 * g] < lowest ? partial[2 * g] : lowest;
        widest = partial[2 * g + 1] > widest ? partial[2 * g + 1] : widest;
    }
    stats[0] = lowest;
    stats[1] = DSQRT(widest);
}

// ---- Otsu (1979): one global threshold from the page's histogram. One-dimensional launches of
// FAST_GROUP items per group.

// The histogram: each group counts its `chunk` pixels in local memory, then adds its counts to
// `histogram` (256 bins, zeroed before).
KERNEL void otsu_histogram(GLOBAL const uchar *gray, GLOBAL uint *histogram, index_t n, uint chunk)
{
    LOCAL_ARRAY(uint, bins, 256);
    const uint lid = LOCAL_ID_X;
    for (uint v = lid; v < 256; v += FAST_GROUP)
        bins[v] = 0;
    LOCAL_BARRIER();
    const index_t start = (index_t)GROUP_ID_X * chunk;
    for (uint i = lid; i < chunk && start + i < n; i += FAST_GROUP)
        ATOMIC_ADD(&bins[gray[start + i]], 1u);
    LOCAL_BARRIER();
    for (uint v = lid; v < 256; v += FAST_GROUP)
        if (bins[v] != 0)
            ATOMIC_ADD(&histogram[v], bins[v]);
}

// Otsu's threshold t (ink: p <= t): the first t that maximises the between-class variance, in
// proportion (S(t) N - S W(t))^2 / (W(t) (N - W(t))), where W(t) and S(t) count and sum the
// pixels of gray <= t, N and S all of them. A page of one gray level has no split: t = 0.
// One work-item.
KERNEL void otsu_threshold(GLOBAL const uint *histogram, GLOBAL uint *threshold)
{
    if (GLOBAL_ID_X != 0)
        return;
    ulong n = 0, total = 0;
    for (uint v = 0; v < 256; v++) {
        n += histogram[v];
        total += (ulong)v * histogram[v];
    }
    ulong below = 0, below_sum = 0;
    double best = -1.0;
    uint t = 0;
    for (uint v = 0; v < 256; v++) {
        below += histogram[v];
        below_sum += (ulong)v * histogram[v];
        if (below == 0 || below == n)
            continue;
        const double d = DSUB(DMUL((double)below_sum, (double)n), DMUL((double)total, (double)below));
        const double between = DDIV(DMUL(d, d), DMUL((double)below, (double)(n - below)));
        if (between > best) {
            best = between;
            t = v;
        }
    }
    threshold[0] = t;
}

// Ink where gray <= the threshold.
KERNEL void otsu_apply(GLOBAL const uchar *gray, GLOBAL uchar *out, GLOBAL const uint *threshold, index_t n)
{
    const index_t i = GLOBAL_ID_X;
    if (i < n)
        out[i] = gray[i] <= threshold[0] ? 1 : 0;
}

