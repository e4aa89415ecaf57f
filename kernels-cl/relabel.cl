// GENERATED from kernels-cl/prelude.h and kernels/{common.h, ranks.h, relabel.kernel}: edit those, then run
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

// ---- ranks.h
// Consecutive labels from relabel.kernel's rank tables: R holds, per word of 32 pixels, the count
// of first pixels before it in its span and the word's marks of first pixels (relabel_rank_labels);
// offsets, per span, the count of first pixels before the span (scan_spans, scan_add).

// The rank of first pixel f among the first pixels of its span, from its word's entry in R.
DEVICE_FN uint rank_in_span(uint2 entry, index_t f)
{
    return entry.x + POPCOUNT(entry.y & ((1u << (uint)(f % 32)) - 1u));
}

// ---- relabel.kernel
// Consecutive relabeling on the device: raw labels of any convention become 1..N in raster order
// of each component's first pixel (background stays 0), and N is counted, without the labels
// leaving the device. The result is the same as the host's renumbering in raster order of first
// appearance.
//
// With first-pixel labels (label = index of the component's first pixel + 1), pixel i is the
// first of its component exactly when L[i] == i + 1. With block labels (label = index of the
// top-left pixel of the component's first 2x2 or 2x2x2 block + 1, the root), the first pixel
// is found first: relabel_first_pixels keeps, per root, the smallest index of the component's
// pixels with an atomic maximum of its complement (so a zeroed array is the starting point), in
// F at root / 2 (roots lie on even rows and columns, so their halves are distinct and F needs n
// / 2 entries). Every pixel of a component lies at or after its root, and its first pixel within
// two lines (rows of an image, slices of a volume) of it: only pixels there take part, which
// keeps the atomics off the rest of a large component. Then:
//   1. relabel_rank_labels: the pixels are cut into spans of RANK_SPAN; the first pixels of a span are
//      marked in a bitmask in local memory, and the span's count goes to counts[span]. Each word
//      of 32 pixels keeps its marks and the count of marks before it in its span (R, a pair per
//      word, written whole: 8 bytes per 32 pixels, instead of a rank written at each first
//      pixel, which scattered a 4-byte write per component over a table of n entries).
//   2. scan_spans / scan_add: an exclusive prefix sum of the counts (over as many levels as the
//      number of spans needs), whose last level's total is N.
//   3. relabel_final: every pixel takes offsets[span of its first pixel] + its first pixel's
//      rank in its span + 1, the rank from the first pixel's word in R (rank_in_span).
//
// One-dimensional launches: work-group g handles elements [g * SPAN, (g + 1) * SPAN), its work-items
// striding by GROUP_SIZE so that neighbouring items touch neighbouring elements.
// Build-time defines: GROUP_SIZE (work-items per group, a power of two, at least 32 and at most
// 1024), ITEMS (elements per item of the scans), RANK_ITEMS (pixels per item of relabel_rank_labels, at
// most 32), PASS_ITEMS (pixels per item of relabel_first_pixels and relabel_final).

#define SPAN (GROUP_SIZE * ITEMS)
#define RANK_SPAN (GROUP_SIZE * RANK_ITEMS)
// Pixels per group of relabel_first_pixels and relabel_final.
#define PASS_SPAN (GROUP_SIZE * PASS_ITEMS)
// Words of relabel_rank_labels's bitmask: one bit per pixel of its span.
#define RANK_WORDS (RANK_SPAN / 32)
#if RANK_ITEMS > 32 || RANK_WORDS % 32 || RANK_WORDS / 32 > GROUP_SIZE
#error "relabel_rank_labels needs RANK_ITEMS <= 32 and whole runs of 32 words, one item per run"
#endif

// An exclusive scan of the work-group's `value`s in work-item order, in local memory (Hillis and
// Steele, between two halves of `scratch`, 2 * GROUP_SIZE words, so that a step needs one
// barrier, not two); returns the sum of the values before this item's, and leaves the group's
// total in *total. Every item of the group must call it.
DEVICE_FN uint group_exclusive_scan(LOCAL uint *scratch, uint value, uint lid, uint *total)
{
    uint side = 0, sum = value;
    scratch[lid] = value;
    LOCAL_BARRIER();
    for (uint offset = 1; offset < GROUP_SIZE; offset *= 2) {
        if (lid >= offset)
            sum += scratch[side + lid - offset];
        side ^= GROUP_SIZE;
        scratch[side + lid] = sum;
        LOCAL_BARRIER();
    }
    *total = scratch[side + GROUP_SIZE - 1];
    LOCAL_BARRIER();
    return sum - value;
}

// The exclusive prefix sums of a span of ITEMS * GROUP_SIZE values, in place, item lid holding
// elements lid * ITEMS .. in `v`: each item's own, then the group's scan of their sums; the
// span's total in *total. Every item of the group must call it.
DEVICE_FN void span_exclusive_scan(LOCAL uint *scratch, uint *v, uint lid, uint *total)
{
    uint sum = 0;
#pragma unroll
    for (uint k = 0; k < ITEMS; k++) {
        const uint value = v[k];
        v[k] = sum;
        sum += value;
    }
    const uint before = group_exclusive_scan(scratch, sum, lid, total);
#pragma unroll
    for (uint k = 0; k < ITEMS; k++)
        v[k] += before;
}

// The labels of pixels first, first + GROUP_SIZE, ... (`count` of them; 0 past n), every load
// issued before any is used, so that they are in flight together.
DEVICE_FN void load_strided(GLOBAL const label_t *L, index_t first, index_t n, label_t *l, uint count)
{
#pragma unroll
    for (uint k = 0; k < count; k++) {
        const index_t i = first + k * GROUP_SIZE;
        l[k] = i < n ? L[i] : 0;
    }
}

// Whether pixel i with block label l (nonzero) may be its component's first pixel: it lies
// within two lines of the root l - 1 (the unsigned difference wraps for a pixel before it).
DEVICE_FN int near_root(index_t i, label_t l, uint line)
{
    const index_t d = i - (index_t)(l - 1);
    return d < line || d - line < line;
}

// Block conventions: F[root / 2] = the complement of the smallest index of a pixel labeled
// root + 1 (F starts zeroed; the complement of any index is above zero). Each item reads
// PASS_ITEMS pixels of its group's span of PASS_SPAN.
KERNEL void relabel_first_pixels(GLOBAL const label_t *L, GLOBAL label_t *F, index_t n, uint line)
{
    const index_t base = (index_t)GROUP_ID_X * PASS_SPAN + LOCAL_ID_X;
    label_t l[PASS_ITEMS];
    load_strided(L, base, n, l, PASS_ITEMS);
#pragma unroll
    for (uint k = 0; k < PASS_ITEMS; k++) {
        const index_t i = base + k * GROUP_SIZE;
        if (l[k] != 0 && near_root(i, l[k], line))
            ATOMIC_MAX(&F[(l[k] - 1) >> 1], ~(label_t)i);
    }
}

// The entry of F that holds the first pixel of the component of block label l, or entry 0 for
// background (F has n / 2 entries, rounded up, and at least one; M at least one too): lookups
// read it unconditionally, so that a work-item's lookups are in flight together instead of one
// branch at a time.
DEVICE_FN index_t first_entry(label_t l)
{
    return l != 0 ? (index_t)((l - 1) >> 1) : 0;
}

// Lookups of F per batch in relabel_rank_labels (it divides RANK_ITEMS).
#define RANK_LOOKUPS (RANK_ITEMS < 16 ? RANK_ITEMS : 16)
#if RANK_ITEMS % RANK_LOOKUPS
#error "relabel_rank_labels looks up F in whole batches"
#endif

// The end of step 1 for a span whose marks are in local memory (from `base`): each word's count
// of marks before it in the span, R for its words and the span's count. Called by every
// work-item of the group, after a barrier that follows the marks.
DEVICE_FN void rank_span(LOCAL uint *marks, LOCAL uint *before, LOCAL uint *partial, GLOBAL uint2 *R,
                         GLOBAL uint *counts, index_t base, index_t n)
{
    const uint lid = LOCAL_ID_X;
    // Exclusive prefix sums of the words' counts: within runs of 32 words, then across runs.
    for (uint w = lid; w < RANK_WORDS; w += GROUP_SIZE)
        before[w] = POPCOUNT(marks[w]);
    LOCAL_BARRIER();
    if (lid < RANK_WORDS / 32) {
        uint sum = 0;
        for (uint w = lid * 32; w < lid * 32 + 32; w++) {
            const uint c = before[w];
            before[w] = sum;
            sum += c;
        }
        partial[lid] = sum;
    }
    LOCAL_BARRIER();
    if (lid == 0) {
        uint sum = 0;
        for (uint r = 0; r < RANK_WORDS / 32; r++) {
            const uint c = partial[r];
            partial[r] = sum;
            sum += c;
        }
        STORE_RELAXED(&counts[GROUP_ID_X], sum); // (read by the last group: scan_if_last)
    }
    LOCAL_BARRIER();
    // (R's entry 0 is written for no pixels too: relabel_final reads it for background.)
    const index_t words = n > 0 ? n / 32 + (n % 32 != 0) : 1; // (n + 31 wraps near 2^32)
    for (uint w = lid; w < RANK_WORDS; w += GROUP_SIZE) {
        const index_t word = base / 32 + w;
        if (word < words) {
            uint2 entry;
            entry.x = partial[w / 32] + before[w];
            entry.y = marks[w];
            R[word] = entry;
        }
    }
}

// Step 2 in step 1's launch, where the spans' counts fit one scan span (`scan_groups`, the
// launch's groups, at most SPAN, else 0: every array up to 8 Mpx): the group that finishes last
// scans the `groups` counts in place and writes their total, as scan_spans would, one launch
// fewer. Each group's count is stored (by item 0, a relaxed atomic store), fenced, and only then
// its ticket taken; the group that takes the last ticket fences, reads the counts (relaxed atomic
// loads: other groups wrote them), writes them back scanned and puts the ticket counter back to
// 0 for the next launch (relaxed atomic stores: the other groups' accesses to both came before
// their tickets, but a plain access would still race with them in the memory model).
// `scratch` holds 2 * GROUP_SIZE words, `last` one.
DEVICE_FN void scan_if_last(GLOBAL uint *counts, GLOBAL uint *total, GLOBAL uint *tickets, uint groups,
                            LOCAL uint *scratch, LOCAL uint *last)
{
    const uint lid = LOCAL_ID_X;
    if (lid == 0) {
        GLOBAL_FENCE();
        last[0] = ATOMIC_ADD(tickets, 1u) == groups - 1;
    }
    LOCAL_BARRIER();
    if (!last[0])
        return;
    GLOBAL_FENCE();
    const uint first = lid * ITEMS;
    uint v[ITEMS], all;
#pragma unroll
    for (uint k = 0; k < ITEMS; k++)
        v[k] = first + k < groups ? LOAD_RELAXED(&counts[first + k]) : 0u;
    span_exclusive_scan(scratch, v, lid, &all);
#pragma unroll
    for (uint k = 0; k < ITEMS; k++)
        if (first + k < groups)
            STORE_RELAXED(&counts[first + k], v[k]);
    if (lid == 0) {
        *total = all;
        STORE_RELAXED(tickets, 0u);
    }
}

// Step 1: the marks of the first pixels of each span of RANK_SPAN pixels with, per word of 32,
// the count of marks before it in the span (R[word] = (count, marks), the words of the image in
// pixel order), and the count of each span. Item lid reads pixels base + k * GROUP_SIZE + lid
// (k < RANK_ITEMS), whose marks are bit lid % 32 of word k * (GROUP_SIZE / 32) + lid / 32: the
// words are in pixel order.
KERNEL void relabel_rank_labels(GLOBAL const label_t *L, GLOBAL const label_t *F, GLOBAL uint2 *R, GLOBAL uint *counts,
                         index_t n, uint blocks, uint line, GLOBAL uint *total, GLOBAL uint *tickets, uint scan_groups)
{
    LOCAL_ARRAY(uint, marks, RANK_WORDS);
    LOCAL_ARRAY(uint, before, RANK_WORDS);
    LOCAL_ARRAY(uint, partial, RANK_WORDS / 32 + 1);
    LOCAL_ARRAY(uint, scratch, 2 * GROUP_SIZE);
    LOCAL_ARRAY(uint, last, 1);
    const uint lid = LOCAL_ID_X;
    const index_t base = (index_t)GROUP_ID_X * RANK_SPAN;
    for (uint w = lid; w < RANK_WORDS; w += GROUP_SIZE)
        marks[w] = 0;
    LOCAL_BARRIER();
    WAIT_FOR_PREVIOUS_KERNEL(); // (launched to overlap the labeling's last kernel, as it may be)
    LET_NEXT_KERNEL_START();
    // All loads first, then every test, then the marks. Pixel i (label l) is the first of its
    // component when l == i + 1 (first-pixel labels), or, with block labels, when it lies near
    // its root and F's entry names it: RANK_LOOKUPS lookups at a time, all issued before any is
    // tested (a pixel far from its root reads entry 0 and ignores it).
    label_t l[RANK_ITEMS];
    load_strided(L, base + lid, n, l, RANK_ITEMS);
    uint mine = 0; // bit k: pixel k of this item is a first pixel
    if (!blocks) {
#pragma unroll
        for (uint k = 0; k < RANK_ITEMS; k++)
            mine |= (uint)(l[k] != 0 && l[k] == (label_t)(base + k * GROUP_SIZE + lid) + 1) << k;
    } else {
#pragma unroll
        for (uint c = 0; c < RANK_ITEMS; c += RANK_LOOKUPS) {
            uint near = 0; // bit j: pixel c + j lies near its root
            label_t found[RANK_LOOKUPS];
#pragma unroll
            for (uint j = 0; j < RANK_LOOKUPS; j++) {
                const label_t lj = l[c + j];
                const int candidate = lj != 0 && near_root(base + (c + j) * GROUP_SIZE + lid, lj, line);
                near |= (uint)candidate << j;
                found[j] = F[candidate ? first_entry(lj) : 0];
            }
#pragma unroll
            for (uint j = 0; j < RANK_LOOKUPS; j++) {
                const label_t i = (label_t)(base + (c + j) * GROUP_SIZE + lid);
                mine |= (uint)((near >> j & 1u) != 0 && ~found[j] == i) << (c + j);
            }
        }
    }
#pragma unroll
    for (uint k = 0; k < RANK_ITEMS; k++) {
        if (mine >> k & 1u)
            ATOMIC_OR(&marks[k * (GROUP_SIZE / 32) + lid / 32], 1u << (lid % 32));
    }
    LOCAL_BARRIER();
    rank_span(marks, before, partial, R, counts, base, n);
    if (scan_groups != 0)
        scan_if_last(counts, total, tickets, scan_groups, scratch, last);
}

// Step 1 from marks made elsewhere (TUF's pass 1 and border merge: bit p % 32 of M[p / 32] set
// where pixel p is its component's first): 1 bit per pixel read instead of a label.
KERNEL void relabel_rank_marks(GLOBAL const uint *M, GLOBAL uint2 *R, GLOBAL uint *counts, index_t n,
                               GLOBAL uint *total, GLOBAL uint *tickets, uint scan_groups)
{
    LOCAL_ARRAY(uint, marks, RANK_WORDS);
    LOCAL_ARRAY(uint, before, RANK_WORDS);
    LOCAL_ARRAY(uint, partial, RANK_WORDS / 32 + 1);
    LOCAL_ARRAY(uint, scratch, 2 * GROUP_SIZE);
    LOCAL_ARRAY(uint, last, 1);
    const index_t base = (index_t)GROUP_ID_X * RANK_SPAN, words = n / 32 + (n % 32 != 0);
    WAIT_FOR_PREVIOUS_KERNEL(); // (launched to overlap the labeling's last kernel, as it may be)
    LET_NEXT_KERNEL_START();
    for (uint w = LOCAL_ID_X; w < RANK_WORDS; w += GROUP_SIZE)
        marks[w] = base / 32 + w < words ? M[base / 32 + w] : 0u;
    LOCAL_BARRIER();
    rank_span(marks, before, partial, R, counts, base, n);
    if (scan_groups != 0)
        scan_if_last(counts, total, tickets, scan_groups, scratch, last);
}

// Step 2: exclusive prefix sum of data[0..n) span by span, in place; each span's total goes to
// sums[span] (the next level scans those). Item lid takes the ITEMS consecutive elements from
// lid * ITEMS of its span, so that the group scans once (its items' sums), not once per element.
KERNEL void scan_spans(GLOBAL uint *data, GLOBAL uint *sums, uint n)
{
    LOCAL_ARRAY(uint, scratch, 2 * GROUP_SIZE);
    const uint lid = LOCAL_ID_X;
    const uint first = GROUP_ID_X * SPAN + lid * ITEMS;
    WAIT_FOR_PREVIOUS_KERNEL(); // (launched to overlap the kernel before it, as it may be)
    LET_NEXT_KERNEL_START();
    uint v[ITEMS], total;
#pragma unroll
    for (uint k = 0; k < ITEMS; k++)
        v[k] = first + k < n ? data[first + k] : 0u;
    span_exclusive_scan(scratch, v, lid, &total);
#pragma unroll
    for (uint k = 0; k < ITEMS; k++)
        if (first + k < n)
            data[first + k] = v[k];
    if (lid == 0)
        sums[GROUP_ID_X] = total;
}

// Step 2, upward: adds each span's offset (the scanned sums) to its elements.
KERNEL void scan_add(GLOBAL uint *data, GLOBAL const uint *offsets, uint n)
{
    const uint i = GLOBAL_ID_X;
    WAIT_FOR_PREVIOUS_KERNEL(); // (launched to overlap the kernel before it, as it may be)
    LET_NEXT_KERNEL_START();
    if (i < n)
        data[i] += offsets[i / SPAN];
}

// Step 3: the consecutive label of every pixel, from its first pixel's span offset and rank;
// PASS_ITEMS pixels per item, each step's loads issued together.
KERNEL void relabel_final(GLOBAL label_t *L, GLOBAL const label_t *F, GLOBAL const uint2 *R,
                          GLOBAL const uint *offsets, index_t n, uint blocks)
{
    const index_t base = (index_t)GROUP_ID_X * PASS_SPAN + LOCAL_ID_X;
    label_t l[PASS_ITEMS];
    load_strided(L, base, n, l, PASS_ITEMS);
    // Every first-pixel lookup, then every rank lookup, then the stores: a store between the
    // loads would make the compiler wait for each load (it cannot tell that the store leaves
    // what the next load reads alone), instead of having them in flight together. The lookups
    // are unconditional (background reads entry 0 and drops it), for the same reason: a lookup
    // behind a branch is waited for before the next branch.
    index_t first[PASS_ITEMS];
    if (blocks) {
#pragma unroll
        for (uint k = 0; k < PASS_ITEMS; k++) {
            const index_t found = (index_t)(label_t)~F[first_entry(l[k])];
            first[k] = l[k] != 0 ? found : 0;
        }
    } else {
#pragma unroll
        for (uint k = 0; k < PASS_ITEMS; k++)
            first[k] = l[k] != 0 ? (index_t)(l[k] - 1) : 0;
    }
#pragma unroll
    for (uint k = 0; k < PASS_ITEMS; k++) {
        const label_t value = offsets[first[k] / RANK_SPAN] + rank_in_span(R[first[k] / 32], first[k]) + 1;
        l[k] = l[k] != 0 ? value : 0;
    }
#pragma unroll
    for (uint k = 0; k < PASS_ITEMS; k++) {
        if (l[k] != 0)
            L[base + k * GROUP_SIZE] = l[k];
    }
}

