// GENERATED from kernels-cu/prelude.cuh and kernels/{common.h, regionprops.kernel}: edit those, then run
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

// ---- regionprops.kernel
// Region properties from consecutive labels 1..N (issue 53; what scikit-image's
// regionprops_table and cuCIM's give): per component the sums its properties are derived from
// (on the host, src/regions/table.rs). The area, bounding box and centroid come first, from the
// statistics stage (kernels/stats.kernel); this file adds
// - region_moments: the central moments about each component's centroid, the sums over its
//   pixels of dz^a dy^b dx^c for a, b, c in 0..=ORDER (a = 0 only for images), in double
//   precision, summed a block of pixels at a time in registers; with INTENSITY, the sum,
//   minimum and maximum of an intensity image over it;
// - region_shape: the Euler number, as the sum over the 2x2 (volumes: 2x2x2) windows that touch
//   a component of the coefficient of the window's pattern of its pixels (the host passes
//   scikit-image's table), and for images the perimeter, as the counts of the component's border
//   pixels in the three classes of scikit-image's `perimeter` (neighbourhood 4).
// Layout (N components, k = label - 1): moments[k * MOMENTS + (a * SIDE + b) * SIDE + c], with
// MOMENTS = SIDE^2 for images and SIDE^3 for volumes; intensity[k], [N + k], [2 N + k]: sum,
// minimum, maximum (the host sets them to 0, +inf, -inf); euler[k]; perimeter[class * N + k].
// Both kernels skip labels above N (consecutive labels never have them).
// Build-time defines: ORDER (0..3; 0: no moments), INTENSITY (0: none; 1: float, 2: double
// intensities), SEGMENT x ROWS (the pixels of a work-item of region_moments), FLOAT64=1,
// FLOAT64_ATOMICS=1.

#define SIDE (ORDER + 1)
#if INTENSITY == 2
typedef double intensity_t;
#else
typedef float intensity_t;
#endif

// *p += v, atomically (a compare-and-swap loop where the dialect has no double add).
DEVICE_FN void atomic_add_f64(GLOBAL double *p, double v)
{
#if defined(NATIVE_ATOMIC_ADD_F64)
    NATIVE_ATOMIC_ADD_F64(p, v);
#else
    ulong seen = 0; // a guess: the first swap returns the value there
    for (;;) {
        const ulong old = ATOMIC_CMPXCHG64(p, seen, DOUBLE_BITS(BITS_DOUBLE(seen) + v));
        if (old == seen)
            return;
        seen = old;
    }
#endif
}

// *p = min(*p, v) (`lower`) or max(*p, v), atomically.
DEVICE_FN void atomic_bound_f64(GLOBAL double *p, double v, int lower)
{
    ulong seen = ATOMIC_CMPXCHG64(p, (ulong)0, (ulong)0); // an atomic read (swaps 0 for 0 only)
    while (lower ? v < BITS_DOUBLE(seen) : v > BITS_DOUBLE(seen)) {
        const ulong old = ATOMIC_CMPXCHG64(p, seen, DOUBLE_BITS(v));
        if (old == seen)
            return;
        seen = old;
    }
}

// Adds a block's pixels of component `label` (all in slice z) to its sums: `sums[b * SIDE + c]`
// the sum of dy^b dx^c over them, and their intensities' sum, minimum and maximum.
DEVICE_FN void add_block(GLOBAL double *moments, GLOBAL double *intensity, GLOBAL const double *centroid, uint n,
                         label_t label, uint z, uint axes, const double *sums, double total, double low, double high)
{
    const uint k = (uint)(label - 1);
#if ORDER > 0
    const double dz = (double)z - centroid[3 * (ulong)k + 2];
    const uint planes = axes == 3 ? SIDE : 1;
    GLOBAL double *m = moments + (ulong)k * planes * SIDE * SIDE;
    double pz = 1.0;
    for (uint a = 0; a < planes; a++) {
        for (uint bc = 0; bc < SIDE * SIDE; bc++)
            atomic_add_f64(&m[a * SIDE * SIDE + bc], pz * sums[bc]);
        pz *= dz;
    }
#endif
#if INTENSITY
    atomic_add_f64(&intensity[k], total);
    atomic_bound_f64(&intensity[n + k], low, 1);
    atomic_bound_f64(&intensity[2 * (ulong)n + k], high, 0);
#endif
}

// One work-item per block of SEGMENT pixels x ROWS rows of one slice (blocks numbered through
// the slices: block row r covers rows ROWS (r % blocks) .. of slice r / blocks, `blocks` =
// ceil(height / ROWS)). It sums the pixels of one component in registers, dy^b dx^c for each
// (b, c), walking the block row by row, and adds them to the component's sums when the next
// pixel of another component comes (background does not end it) and at the end: a component
// covering the block costs one set of atomics per block, not one per pixel or row.
KERNEL void region_moments(GLOBAL const label_t *L, GLOBAL const intensity_t *image, GLOBAL const double *centroid,
                           uint n, uint width, uint height, uint block_rows, uint axes, GLOBAL double *moments,
                           GLOBAL double *intensity)
{
    const uint x0 = GLOBAL_ID_X * SEGMENT, r = GLOBAL_ID_Y;
    if (x0 >= width || r >= block_rows)
        return;
    const uint blocks = (height + ROWS - 1) / ROWS;
    const uint y0 = r % blocks * ROWS, z = r / blocks;
    const uint x_end = x0 + SEGMENT < width ? x0 + SEGMENT : width;
    const uint y_end = y0 + ROWS < height ? y0 + ROWS : height;
    label_t current = 0;
    double cx = 0.0, cy = 0.0, sums[SIDE * SIDE], total = 0.0, low = 0.0, high = 0.0;
    for (uint bc = 0; bc < SIDE * SIDE; bc++)
        sums[bc] = 0.0;
    for (uint y = y0; y < y_end; y++) {
        const index_t row = VOXEL_INDEX(0, y, z, width, height);
        for (uint x = x0; x < x_end; x++) {
            const label_t label = L[row + x];
            if (label == 0 || label > n)
                continue;
            if (label != current) {
                if (current != 0)
                    add_block(moments, intensity, centroid, n, current, z, axes, sums, total, low, high);
                current = label;
                cx = centroid[3 * (ulong)(label - 1)];
                cy = centroid[3 * (ulong)(label - 1) + 1];
                for (uint bc = 0; bc < SIDE * SIDE; bc++)
                    sums[bc] = 0.0;
#if INTENSITY
                total = 0.0;
                low = (double)image[row + x];
                high = low;
#endif
            }
            const double dx = (double)x - cx, dy = (double)y - cy;
            double py = 1.0;
            for (uint b = 0; b < SIDE; b++) {
                double pxy = py;
                for (uint c = 0; c < SIDE; c++) {
                    sums[b * SIDE + c] += pxy;
                    pxy *= dx;
                }
                py *= dy;
            }
#if INTENSITY
            const double v = (double)image[row + x];
            total += v;
            low = v < low ? v : low;
            high = v > high ? v : high;
#endif
        }
    }
    if (current != 0)
        add_block(moments, intensity, centroid, n, current, z, axes, sums, total, low, high);
}

// The label at (x, y, z), 0 outside the array or above n.
DEVICE_FN label_t label_at(GLOBAL const label_t *L, int x, int y, int z, uint width, uint height, uint depth,
                           uint n)
{
    if (x < 0 || y < 0 || z < 0 || x >= (int)width || y >= (int)height || z >= (int)depth)
        return 0;
    const label_t label = L[VOXEL_INDEX(x, y, z, width, height)];
    return label <= n ? label : 0;
}

// Whether pixel (x, y) of an image is a border pixel of component `label`: one of its pixels
// with a 4-neighbour outside it (or outside the image), as scikit-image's erosion by a cross
// with a border of background leaves it.
DEVICE_FN int on_border(GLOBAL const label_t *L, int x, int y, label_t label, uint width, uint height, uint n)
{
    return label_at(L, x, y, 0, width, height, 1, n) == label &&
           (label_at(L, x - 1, y, 0, width, height, 1, n) != label ||
            label_at(L, x + 1, y, 0, width, height, 1, n) != label ||
            label_at(L, x, y - 1, 0, width, height, 1, n) != label ||
            label_at(L, x, y + 1, 0, width, height, 1, n) != label);
}

// One work-item per window: the 2x2 (volumes: 2x2x2) window whose last corner is (x, y, z), x in
// 0..=width, y in 0..=height, z in 0..=depth (volumes; 0 for images), so that the windows cover
// the array padded by a pixel of background, as scikit-image pads it. Corner i of the window is
// (x - (i >> 1 & 1), y - (i & 1), z - (i >> 2)), bit i of a pattern: scikit-image's
// configuration numbers (1 the last corner, 2 the row before, 4 the column before, 8 both, 16 to
// 128 the same in the slice before). Each component among the corners adds the coefficient of
// its own pattern. The work-items of the windows ending on a pixel of an image also add that
// pixel to the perimeter classes where it is a border pixel: its code is 1, plus 2 for each
// 4-neighbour and 10 for each diagonal neighbour that is a border pixel of the same component;
// codes 5, 7, 15, 17, 25, 27 are class 0 (a unit length), 21 and 33 class 1 (sqrt 2), 13 and 23
// class 2 ((1 + sqrt 2) / 2), the others add nothing.
KERNEL void region_shape(GLOBAL const label_t *L, uint n, uint width, uint height, uint depth, uint axes,
                         GLOBAL const int *coefficients, GLOBAL int *euler, GLOBAL uint *perimeter)
{
    const uint x = GLOBAL_ID_X, r = GLOBAL_ID_Y;
    const uint windows = axes == 3 ? (height + 1) * (depth + 1) : height + 1;
    if (x > width || r >= windows)
        return;
    const int ix = (int)x, iy = (int)(r % (height + 1)), iz = (int)(r / (height + 1));
    const uint corners = axes == 3 ? 8 : 4;
    label_t corner[8];
    for (uint i = 0; i < corners; i++)
        corner[i] = label_at(L, ix - (int)(i >> 1 & 1u), iy - (int)(i & 1u), iz - (int)(i >> 2), width, height, depth,
                             n);
    for (uint i = 0; i < corners; i++) {
        if (corner[i] == 0)
            continue;
        uint pattern = 0;
        int first = 1;
        for (uint j = 0; j < corners; j++) {
            if (corner[j] == corner[i]) {
                first = first && j >= i;
                pattern |= 1u << j;
            }
        }
        const int coefficient = coefficients[pattern];
        if (first && coefficient != 0)
            ATOMIC_ADD(&euler[corner[i] - 1], coefficient);
    }
    if (axes != 2 || x >= width || (uint)iy >= height)
        return;
    const label_t label = corner[0];
    if (label == 0 || !on_border(L, ix, iy, label, width, height, n))
        return;
    uint code = 1;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            if ((dx != 0 || dy != 0) && on_border(L, ix + dx, iy + dy, label, width, height, n))
                code += dx == 0 || dy == 0 ? 2u : 10u;
    const uint unit = code == 5 || code == 7 || code == 15 || code == 17 || code == 25 || code == 27;
    const uint diagonal = code == 21 || code == 33, corner_class = code == 13 || code == 23;
    if (unit || diagonal || corner_class)
        ATOMIC_ADD(&perimeter[(ulong)(unit ? 0u : diagonal ? 1u : 2u) * n + label - 1], 1u);
}

