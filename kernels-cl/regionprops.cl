// GENERATED from kernels-cl/prelude.h and kernels/{common.h, regionprops.kernel}: edit those, then run
// `CCL_BLESS=1 cargo test --test kernel_sources`.

// ---- kernels-cl/prelude.h
// OpenCL C dialect prelude: maps the portable kernel vocabulary of kernels/ to OpenCL C 1.2.
#define KERNEL __kernel
// The work-group size a kernel is always launched with, and how many of its groups a compute
// unit should hold at once: a register budget for CUDA. Here nothing: OpenCL C has no hint of the
// second, and `reqd_work_group_size` made NVIDIA's build of the fast Nick kernel 5-10 % slower
// (H100); NVIDIA's compiler takes the register budget as an option (REGISTER_BUDGET).
#define REQUIRED_GROUP_SIZE(x, y, z, groups)
#define GLOBAL __global
#define LOCAL __local
#define DEVICE_FN
#define LOCAL_ARRAY(type, name, size) __local type name[size]
#define LOCAL_ID_X ((uint)get_local_id(0))
#define LOCAL_ID_Y ((uint)get_local_id(1))
#define LOCAL_ID_Z ((uint)get_local_id(2))
#define GROUP_ID_X ((uint)get_group_id(0))
#define GROUP_ID_Y ((uint)get_group_id(1))
#define GROUP_ID_Z ((uint)get_group_id(2))
#define GLOBAL_ID_X ((uint)get_global_id(0))
#define GLOBAL_ID_Y ((uint)get_global_id(1))
#define GLOBAL_ID_Z ((uint)get_global_id(2))
#define LOCAL_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
// Kernels of an in-order queue never overlap here: nothing to wait for (see the CUDA prelude).
#define WAIT_FOR_PREVIOUS_KERNEL() ((void)0)
#define LET_NEXT_KERNEL_START() ((void)0)
#if defined(LABEL_BITS) && LABEL_BITS == 64
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
#define ATOMIC_MIN(p, v) atom_min((p), (v))
#define ATOMIC_MAX(p, v) atom_max((p), (v))
#else
#define ATOMIC_MIN(p, v) atomic_min((p), (v))
#define ATOMIC_MAX(p, v) atomic_max((p), (v))
#endif
#define ATOMIC_ADD(p, v) atomic_add((p), (v))
// 32-bit compare-and-swap: returns the old value, stores v where it equalled cmp.
#define ATOMIC_CMPXCHG(p, cmp, v) atomic_cmpxchg((p), (cmp), (v))
// Relaxed atomic loads and stores of locations that other work-items of the same launch write
// (or read while this one writes): a plain access there would be a data race, undefined
// behaviour in the OpenCL memory model. LOAD_RELAXED / STORE_RELAXED take a global uint,
// LOAD_RELAXED_LOCAL / STORE_RELAXED_LOCAL a local one, LOAD_LABEL / STORE_LABEL a global
// label_t (32 or 64 bits). The OpenCL backend sets ATOMICS from what the device's OpenCL C offers:
//   ATOMICS_C11: OpenCL C 2.0, or 3.0 with device-scope atomics (built with -cl-std=CL2.0 or
//     CL3.0): atomic_load_explicit / atomic_store_explicit, memory_order_relaxed;
//   ATOMICS_PTX_WEAK (NVIDIA's OpenCL, by default): volatile stores, which its compiler turns into
//     PTX's st.volatile, relaxed atomic stores at system scope in the PTX memory model, and PTX
//     weak loads as inline assembly, which its compiler cannot assume free of races and which the
//     PTX memory model gives a meaning when they race (see kernels-cu/prelude.cuh: CUDA's
//     kernels make the same accesses, and why not strong loads);
//   ATOMICS_PTX (NVIDIA's OpenCL with CCL_ATOMIC_LOADS=strict): volatile loads too (PTX's
//     ld.volatile, relaxed atomic loads at system scope);
//   ATOMICS_RMW (the default): OpenCL C 1.2, whose only atomic reads and writes are
//     read-modify-writes: atomic_or(p, 0) reads, atomic_xchg writes.
#define ATOMICS_RMW 0
#define ATOMICS_PTX 1
#define ATOMICS_C11 2
#define ATOMICS_PTX_WEAK 3
#ifndef ATOMICS
#define ATOMICS ATOMICS_RMW
#endif
// STORE_LABEL4 stores four 32-bit labels from a 16-byte aligned p, each a relaxed atomic store.
// LOAD_OWN_LABEL (a global label_t) and LOAD_OWN_LABEL4 (four 32-bit labels from a 16-byte aligned
// p) read labels that only this work-item writes and that others read with LOAD_LABEL: a plain
// load, except with read-modify-write atomics, where the others' reads are writes too.
// GLOBAL_FENCE orders this work-item's global accesses before and after it, for the work-items of
// every group (a store before a ticket's atomic, the ticket before loads of what other groups
// stored): in OpenCL C 2.0 and later a plain mem_fence only reaches the work-group.
#if ATOMICS == ATOMICS_C11
#define GLOBAL_FENCE() atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_acq_rel, memory_scope_device)
#else
#define GLOBAL_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif
#if ATOMICS == ATOMICS_C11
#define LOAD_RELAXED(p) atomic_load_explicit((volatile __global atomic_uint *)(p), memory_order_relaxed, memory_scope_device)
#define STORE_RELAXED(p, v) atomic_store_explicit((volatile __global atomic_uint *)(p), (v), memory_order_relaxed, memory_scope_device)
#define LOAD_RELAXED_LOCAL(p) atomic_load_explicit((volatile __local atomic_uint *)(p), memory_order_relaxed, memory_scope_work_group)
#define STORE_RELAXED_LOCAL(p, v) atomic_store_explicit((volatile __local atomic_uint *)(p), (v), memory_order_relaxed, memory_scope_work_group)
#if defined(LABEL_BITS) && LABEL_BITS == 64
#define LOAD_LABEL(p) atomic_load_explicit((volatile __global atomic_ulong *)(p), memory_order_relaxed, memory_scope_device)
#define STORE_LABEL(p, v) atomic_store_explicit((volatile __global atomic_ulong *)(p), (v), memory_order_relaxed, memory_scope_device)
#else
#define LOAD_LABEL(p) LOAD_RELAXED(p)
#define STORE_LABEL(p, v) STORE_RELAXED(p, v)
#endif
#define STORE_LABEL4(p, v)                                                                             \
    do {                                                                                               \
        const uint4 four_ = (v);                                                                       \
        STORE_RELAXED((p), four_.x);                                                                   \
        STORE_RELAXED((p) + 1, four_.y);                                                               \
        STORE_RELAXED((p) + 2, four_.z);                                                               \
        STORE_RELAXED((p) + 3, four_.w);                                                               \
    } while (0)
#define LOAD_OWN_LABEL(p) (*(p))
#define LOAD_OWN_LABEL4(p) (*(__global const uint4 *)(p))
#elif ATOMICS == ATOMICS_PTX || ATOMICS == ATOMICS_PTX_WEAK
#if ATOMICS == ATOMICS_PTX_WEAK
DEVICE_FN uint ccl_weak_load(__global const uint *p)
{
    uint v;
    asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}
DEVICE_FN ulong ccl_weak_load64(__global const ulong *p)
{
    ulong v;
    asm volatile("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(p));
    return v;
}
// (A local pointer converts to its offset in the shared window, what ld.shared takes.)
DEVICE_FN uint ccl_weak_load_local(__local const uint *p)
{
    uint v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "l"((ulong)p));
    return v;
}
#define LOAD_RELAXED(p) ccl_weak_load((__global const uint *)(p))
#define LOAD_RELAXED_LOCAL(p) ccl_weak_load_local((__local const uint *)(p))
#define LOAD_WIDE_LABEL(p) ccl_weak_load64((__global const ulong *)(p))
#else
#define LOAD_RELAXED(p) (*(volatile __global const uint *)(p))
#define LOAD_RELAXED_LOCAL(p) (*(volatile __local const uint *)(p))
#define LOAD_WIDE_LABEL(p) (*(volatile __global const ulong *)(p))
#endif
#define STORE_RELAXED(p, v) (*(volatile __global uint *)(p) = (v))
#define STORE_RELAXED_LOCAL(p, v) (*(volatile __local uint *)(p) = (v))
// (A volatile vector store is st.volatile.v4.u32: four relaxed stores in the PTX memory model.)
#define STORE_LABEL4(p, v) (*(volatile __global uint4 *)(p) = (v))
#define LOAD_OWN_LABEL(p) (*(p))
#define LOAD_OWN_LABEL4(p) (*(__global const uint4 *)(p))
#if defined(LABEL_BITS) && LABEL_BITS == 64
#define LOAD_LABEL(p) LOAD_WIDE_LABEL(p)
#define STORE_LABEL(p, v) (*(volatile __global ulong *)(p) = (v))
#else
#define LOAD_LABEL(p) LOAD_RELAXED(p)
#define STORE_LABEL(p, v) STORE_RELAXED(p, v)
#endif
#else
#define LOAD_RELAXED(p) atomic_or((volatile __global uint *)(p), 0u)
#define STORE_RELAXED(p, v) ((void)atomic_xchg((volatile __global uint *)(p), (v)))
#define LOAD_RELAXED_LOCAL(p) atomic_or((volatile __local uint *)(p), 0u)
#define STORE_RELAXED_LOCAL(p, v) ((void)atomic_xchg((volatile __local uint *)(p), (v)))
#define LOAD_OWN_LABEL(p) LOAD_LABEL(p)
#define LOAD_OWN_LABEL4(p) ccl_load_own_label4(p)
DEVICE_FN uint4 ccl_load_own_label4(__global const uint *p)
{
    uint4 v;
    v.x = LOAD_RELAXED(p);
    v.y = LOAD_RELAXED(p + 1);
    v.z = LOAD_RELAXED(p + 2);
    v.w = LOAD_RELAXED(p + 3);
    return v;
}
#define STORE_LABEL4(p, v)                                                                             \
    do {                                                                                               \
        const uint4 four_ = (v);                                                                       \
        STORE_RELAXED((p), four_.x);                                                                   \
        STORE_RELAXED((p) + 1, four_.y);                                                               \
        STORE_RELAXED((p) + 2, four_.z);                                                               \
        STORE_RELAXED((p) + 3, four_.w);                                                               \
    } while (0)
#if defined(LABEL_BITS) && LABEL_BITS == 64
#define LOAD_LABEL(p) atom_or((volatile __global ulong *)(p), 0ul)
#define STORE_LABEL(p, v) ((void)atom_xchg((volatile __global ulong *)(p), (v)))
#else
#define LOAD_LABEL(p) LOAD_RELAXED(p)
#define STORE_LABEL(p, v) STORE_RELAXED(p, v)
#endif
#endif
// Atomic bitwise or and and on a 32-bit word (local or global), the count of set bits of one,
// and its count of leading zero bits (32 for 0).
#define ATOMIC_OR(p, v) atomic_or((p), (v))
#define ATOMIC_AND(p, v) atomic_and((p), (v))
#define POPCOUNT(x) popcount((uint)(x))
#define LEADING_ZEROS(x) clz((uint)(x))
// 64-bit add (kernels built with -D INT64_ATOMICS=1). With OpenCL C 1.2's atomics
// (ATOMICS_RMW), where 64-bit atomics are an optional extension, as two 32-bit atomic adds: the
// low word's, then its carry and the high part into the high word (every add's carry is counted
// once, so the sum is exact once the adds are done; nothing reads it before). Else the
// extension's atom_add (cl_khr_int64_base_atomics, which OpenCL C 2.0 and later devices with
// 64-bit atomics have).
#if defined(INT64_ATOMICS) && INT64_ATOMICS
#if ATOMICS == ATOMICS_RMW
DEVICE_FN void ccl_atomic_add64(volatile __global ulong *p, ulong v)
{
#if defined(__ENDIAN_LITTLE__)
    volatile __global uint *low = (volatile __global uint *)p, *high = low + 1;
#else
    volatile __global uint *high = (volatile __global uint *)p, *low = high + 1;
#endif
    const uint part = (uint)v, old = atomic_add(low, part);
    const uint carried = (uint)(v >> 32) + (old + part < old ? 1u : 0u);
    if (carried != 0)
        atomic_add(high, carried);
}
#define ATOMIC_ADD64(p, v) ccl_atomic_add64((p), (ulong)(v))
#else
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define ATOMIC_ADD64(p, v) atom_add((p), (v))
#endif
#endif
// Double precision (kernels built with -D FLOAT64=1): IEEE operations, correctly rounded in
// OpenCL for double, and never contracted into fused multiply-adds, so that a kernel's results
// equal the host reference's bit for bit.
#if defined(FLOAT64) && FLOAT64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#pragma OPENCL FP_CONTRACT OFF
// Double-precision atomics (kernels built with -D FLOAT64_ATOMICS=1, with FLOAT64): a 64-bit
// compare-and-swap (cl_khr_int64_base_atomics) and the bits of a double. OpenCL C has no atomic
// add, minimum or maximum of doubles; kernels build them from the compare-and-swap.
#if defined(FLOAT64_ATOMICS) && FLOAT64_ATOMICS
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define ATOMIC_CMPXCHG64(p, cmp, v) atom_cmpxchg((volatile __global ulong *)(p), (cmp), (v))
#define DOUBLE_BITS(d) as_ulong(d)
#define BITS_DOUBLE(u) as_double(u)
#endif
#define DADD(a, b) ((a) + (b))
#define DSUB(a, b) ((a) - (b))
#define DMUL(a, b) ((a) * (b))
#define DDIV(a, b) ((a) / (b))
#define DSQRT(a) sqrt(a)
#define DRINT(a) rint(a)
// Single precision a * b + c, fused or rounded twice (whichever the device does faster; both
// within an ulp of each operation, as the callers' error bounds assume).
#define FMAD(a, b, c) mad((a), (b), (c))
// Single precision reciprocal square root of a normal positive x (at most 2 ulp in both dialects'
// specifications).
#define FRSQRT(x) rsqrt(x)

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

