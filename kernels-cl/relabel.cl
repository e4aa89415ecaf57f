// GENERATED from kernels-cl/prelude.h and kernels/{common.h, relabel.kernel}: edit those, then run
// `CCL_BLESS=1 cargo test --test kernel_sources`.

// ---- kernels-cl/prelude.h
// OpenCL C dialect prelude: maps the portable kernel vocabulary of kernels/ to OpenCL C 1.2.
#define KERNEL __kernel
// The work-group size a kernel is always launched with, and how many of its groups a compute
// unit should hold at once: a register budget for CUDA; OpenCL C has no such hint, so nothing.
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
#if defined(LABEL_BITS) && LABEL_BITS == 64
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
// 64-bit add (kernels built with -D INT64_ATOMICS=1; the device must have
// cl_khr_int64_base_atomics).
#if defined(INT64_ATOMICS) && INT64_ATOMICS
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define ATOMIC_ADD64(p, v) atom_add((p), (v))
#endif
// Double precision (kernels built with -D FLOAT64=1): IEEE operations, correctly rounded in
// OpenCL for double, and never contracted into fused multiply-adds, so that a kernel's results
// equal the host reference's bit for bit.
#if defined(FLOAT64) && FLOAT64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#pragma OPENCL FP_CONTRACT OFF
#define DADD(a, b) ((a) + (b))
#define DSUB(a, b) ((a) - (b))
#define DMUL(a, b) ((a) * (b))
#define DDIV(a, b) ((a) / (b))
#define DSQRT(a) sqrt(a)
#define DRINT(a) rint(a)
// Single precision reciprocal square root (at most 2 ulp in both dialects' specifications).
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

// Foreground test: any nonzero pixel value is foreground (never `& 1`: inputs of 255 or 2 must
// work).
#define FG(v) ((v) != 0)

// ---- relabel.kernel
// Consecutive relabeling on the device: raw labels of any convention become 1..N in raster order
// of each component's first pixel (background stays 0), and N is counted, without the labels
// leaving the device. The result is the same as the host's renumbering in raster order of first
// appearance.
//
// With first-pixel labels (label = index of the component's first pixel + 1), pixel i is the
// first of its component exactly when L[i] == i + 1. Block conventions are brought to that form
// first: relabel_first_pixels finds each component's smallest pixel index with an atomic
// maximum of its complement (so a zeroed array is the starting point), and
// relabel_to_first_pixel rewrites every label to it. Then:
//   1. relabel_rank: the pixels are cut into spans of SPAN; in its span each first pixel gets its
//      rank among the span's first pixels (M[i]), and the span's count goes to counts[span].
//   2. scan_spans / scan_add: an exclusive prefix sum of the counts (over as many levels as the
//      number of spans needs), whose last level's total is N.
//   3. relabel_final: every pixel takes offsets[span of its root] + M[root] + 1.
//
// One-dimensional launches: work-group g handles elements [g * SPAN, (g + 1) * SPAN), its work-items
// striding by GROUP_SIZE so that neighbouring items touch neighbouring elements.
// Build-time defines: GROUP_SIZE (work-items per group, a power of two), ITEMS (elements per item).

#define SPAN (GROUP_SIZE * ITEMS)

// An exclusive scan of the work-group's `value`s in work-item order, in local memory (Hillis and
// Steele); returns the sum of the values before this item's, and leaves the group's total in
// *total. Every item of the group must call it.
DEVICE_FN uint group_exclusive_scan(LOCAL uint *scratch, uint value, uint lid, uint *total)
{
    scratch[lid] = value;
    LOCAL_BARRIER();
    for (uint offset = 1; offset < GROUP_SIZE; offset *= 2) {
        const uint add = lid >= offset ? scratch[lid - offset] : 0u;
        LOCAL_BARRIER();
        scratch[lid] += add;
        LOCAL_BARRIER();
    }
    const uint inclusive = scratch[lid];
    *total = scratch[GROUP_SIZE - 1];
    LOCAL_BARRIER();
    return inclusive - value;
}

// Block conventions: F[root] = the complement of the smallest index of a pixel labeled
// root + 1 (F starts zeroed; the complement of any index is above zero). The root is the
// top-left pixel of the component's first 2x2 block, so the component's first pixel lies in
// that block's two rows: only pixels there take part, which keeps the atomics off the rest of
// a large component. `line` is the pixels of one row, or of one slice for volumes (2x2x2 blocks
// span two slices).
KERNEL void relabel_first_pixels(GLOBAL const label_t *L, GLOBAL label_t *F, index_t n, uint line)
{
    const index_t i = GLOBAL_ID_X;
    if (i >= n)
        return;
    const label_t l = L[i];
    if (l == 0)
        return;
    const index_t root_row = (l - 1) / line, row = i / line;
    if (row == root_row || row == root_row + 1)
        ATOMIC_MAX(&F[l - 1], ~(label_t)i);
}

// Block conventions: every label becomes its component's first pixel + 1.
KERNEL void relabel_to_first_pixel(GLOBAL label_t *L, GLOBAL const label_t *F, index_t n)
{
    const index_t i = GLOBAL_ID_X;
    if (i >= n)
        return;
    const label_t l = L[i];
    if (l != 0)
        L[i] = ~F[l - 1] + 1;
}

// Step 1: ranks of the first pixels within each span, and the count of each span.
KERNEL void relabel_rank(GLOBAL const label_t *L, GLOBAL label_t *M, GLOBAL uint *counts, index_t n)
{
    LOCAL_ARRAY(uint, scratch, GROUP_SIZE);
    const uint lid = LOCAL_ID_X;
    const index_t base = (index_t)GROUP_ID_X * SPAN;
    uint before = 0;
    for (uint k = 0; k < ITEMS; k++) {
        const index_t i = base + k * GROUP_SIZE + lid;
        const uint first = i < n && L[i] == i + 1;
        uint total;
        const uint rank = group_exclusive_scan(scratch, first, lid, &total);
        if (first)
            M[i] = before + rank;
        before += total;
    }
    if (lid == 0)
        counts[GROUP_ID_X] = before;
}

// Step 2: exclusive prefix sum of data[0..n) span by span, in place; each span's total goes to
// sums[span] (the next level scans those).
KERNEL void scan_spans(GLOBAL uint *data, GLOBAL uint *sums, uint n)
{
    LOCAL_ARRAY(uint, scratch, GROUP_SIZE);
    const uint lid = LOCAL_ID_X;
    const uint base = GROUP_ID_X * SPAN;
    uint before = 0;
    for (uint k = 0; k < ITEMS; k++) {
        const uint i = base + k * GROUP_SIZE + lid;
        const uint value = i < n ? data[i] : 0u;
        uint total;
        const uint prefix = group_exclusive_scan(scratch, value, lid, &total);
        if (i < n)
            data[i] = before + prefix;
        before += total;
    }
    if (lid == 0)
        sums[GROUP_ID_X] = before;
}

// Step 2, upward: adds each span's offset (the scanned sums) to its elements.
KERNEL void scan_add(GLOBAL uint *data, GLOBAL const uint *offsets, uint n)
{
    const uint i = GLOBAL_ID_X;
    if (i < n)
        data[i] += offsets[i / SPAN];
}

// Step 3: the consecutive label of every pixel, from its root's span offset and rank.
KERNEL void relabel_final(GLOBAL label_t *L, GLOBAL const label_t *M, GLOBAL const uint *offsets, index_t n)
{
    const index_t i = GLOBAL_ID_X;
    if (i >= n)
        return;
    const label_t l = L[i];
    if (l != 0) {
        const index_t root = l - 1;
        L[i] = offsets[root / SPAN] + M[root] + 1;
    }
}

