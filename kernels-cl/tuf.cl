// GENERATED from kernels-cl/prelude.h and kernels/{common.h, bits.h, union_find.h, ranks.h, tuf.kernel}: edit those, then run
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

// ---- bits.h
// Bit positions in 32-bit words, shared by the kernels that work on bit masks of pixels.

// Index of the highest set bit of a nonzero word.
DEVICE_FN uint highest_bit(uint w)
{
    return 31u - LEADING_ZEROS(w);
}

// Index of the lowest set bit of a nonzero word.
DEVICE_FN uint lowest_bit(uint w)
{
    return highest_bit(w & (0u - w));
}

// ---- union_find.h
// Union-find over a label array (TPDS 2020 Sec. 2.1, Alg. 1; IPAS 2018 Alg. 1).
//
// Convention: L[i] holds the index of i's parent plus one, and 0 for background, so node i is a
// root when L[i] == i + 1. Union always hangs the larger root under the smaller one, so the root
// of a finished tree is its smallest index. Block algorithms use the same convention on the
// top-left pixel of each block (the node index is that pixel's raster index).
//
// OpenCL C 1.2 has no generic address space, so the functions are instantiated once for global
// memory (labels of type label_t) and once for local (shared) memory (tile-local uint labels).
//
// Other work-items hang roots and shorten paths while a find walks, so every read of a parent
// is a relaxed atomic load (LOAD, the preludes' LOAD_LABEL or LOAD_RELAXED_LOCAL) and every
// write that is not an atomic minimum a relaxed atomic store: a stale parent is still an
// ancestor (parents only ever move to a smaller index of the same tree), so no ordering is
// needed, only freedom from data races. find_read_only walks a forest that nothing writes in the
// launch, with plain loads.

#define CCL_DEFINE_UNION_FIND(SPACE, SUFFIX, T, LOAD)                                            \
    /* Find: the root of the tree holding node i. */                                             \
    DEVICE_FN T find_##SUFFIX(SPACE const T *L, T i)                                             \
    {                                                                                            \
        T parent = LOAD(&L[i]) - 1;                                                              \
        while (parent != i) {                                                                    \
            i = parent;                                                                          \
            parent = LOAD(&L[i]) - 1;                                                            \
        }                                                                                        \
        return i;                                                                                \
    }                                                                                            \
    CCL_DEFINE_UNION(SPACE, SUFFIX, T, find_##SUFFIX)

/* Union: joins the trees of a and b, whose roots the statement FIND_ROOTS puts in a and b.   */
/* atomic_min can lose to a concurrent union: then the old parent it returns is followed and   */
/* both roots are found again (IPAS 2018 Alg. 1). ON_HOOK runs once root b hangs under a.     */
#define CCL_UNION_LOOP(T, FIND_ROOTS) CCL_UNION_LOOP_HOOK(T, FIND_ROOTS, (void)0)
#define CCL_UNION_LOOP_HOOK(T, FIND_ROOTS, ON_HOOK)                                              \
    for (;;) {                                                                                   \
        FIND_ROOTS;                                                                              \
        if (a == b)                                                                              \
            return;                                                                              \
        if (a > b) {                                                                             \
            T t = a;                                                                             \
            a = b;                                                                               \
            b = t;                                                                               \
        }                                                                                        \
        T old = ATOMIC_MIN(&L[b], a + 1);                                                        \
        if (old == b + 1) {                                                                      \
            ON_HOOK;                                                                             \
            return;                                                                              \
        }                                                                                        \
        b = old - 1;                                                                             \
    }

/* Union with a given find (a kernel file may bring its own, e.g. one that compresses). */
#define CCL_DEFINE_UNION(SPACE, SUFFIX, T, FIND)                                                 \
    DEVICE_FN void union_##SUFFIX(SPACE T *L, T a, T b)                                          \
    {                                                                                            \
        CCL_UNION_LOOP(T, (a = FIND(L, a), b = FIND(L, b)))                                      \
    }

/* Union with a find of both nodes at once: FIND_BOTH(L, &a, &b) puts their roots in a, b. */
#define CCL_DEFINE_UNION_BOTH(SPACE, SUFFIX, T, FIND_BOTH)                                       \
    DEVICE_FN void union_##SUFFIX(SPACE T *L, T a, T b)                                          \
    {                                                                                            \
        CCL_UNION_LOOP(T, FIND_BOTH(L, &a, &b))                                                  \
    }

CCL_DEFINE_UNION_FIND(GLOBAL, global, label_t, LOAD_LABEL)
CCL_DEFINE_UNION_FIND(LOCAL, local, uint, LOAD_RELAXED_LOCAL)

// The root of node i in a forest that no work-item writes during the launch (plain loads).
DEVICE_FN index_t find_read_only(GLOBAL const label_t *L, index_t i)
{
    index_t parent = L[i] - 1;
    while (parent != i) {
        i = parent;
        parent = L[i] - 1;
    }
    return i;
}

// Compress (TPDS 2020 Alg. 1): links node i directly to its root. With INLINE_COMPRESSION=1
// (the _IC variants) it is InlineCompress instead: every step of the walk rewrites i's parent,
// so threads that read i meanwhile already see a shorter path.
DEVICE_FN void compress_global(GLOBAL label_t *L, index_t i)
{
#if INLINE_COMPRESSION
    const index_t start = i;
    label_t parent = LOAD_LABEL(&L[i]) - 1;
    while (parent != i) {
        i = parent;
        STORE_LABEL(&L[start], i + 1);
        parent = LOAD_LABEL(&L[i]) - 1;
    }
#else
    STORE_LABEL(&L[i], find_global(L, i) + 1);
#endif
}

// ---- ranks.h
// Consecutive labels from relabel.kernel's rank tables: R holds, per word of 32 pixels, the count
// of first pixels before it in its span and the word's marks of first pixels (relabel_rank_labels);
// offsets, per span, the count of first pixels before the span (scan_spans, scan_add).

// The rank of first pixel f among the first pixels of its span, from its word's entry in R.
DEVICE_FN uint rank_in_span(uint2 entry, index_t f)
{
    return entry.x + POPCOUNT(entry.y & ((1u << (uint)(f % 32)) - 1u));
}

// ---- tuf.kernel
// TUF: tiled run union-find, this project's algorithm (beyond the papers; issue 12). The image is
// cut into tiles of 32 x 32 pixels. Three passes:
//
// 1. tuf_tiles_groups (LocalMerge): a 32 x 32 tile is labeled in local memory with its rows as 32-bit
//    masks (Playne & Hawick, TPDS 2018, label tiles in shared memory). Only the first pixel of
//    each horizontal run is a union-find node (run starts as in Hennequin et al., DASIP 2018),
//    and one work-item per row handles all the runs of its row with bit operations: a run hangs
//    under the first run above that touches it (KE's linking, IPAS 2018 Alg. 4, on runs),
//    pointer jumping flattens those chains, and the pairs of neighbouring runs above that a run
//    of the row bridges need a union. A work-group's 8 tiles side by side are joined across the
//    borders between them there too. Each pixel then stores (global index of its group-local
//    root) + 1.
// 2. tuf_border_merge_2d (BorderMerge): the pixel pairs across the borders of the work-groups'
//    tiles are joined in global memory (union-find with atomic_min, union_find.h), skipping a
//    pair when the pixel before it along the border, on the same side, already joins the same
//    pieces.
// 3. tuf_compress_2d (Compression): every pixel whose local root was joined to another is linked to
//    its root. For consecutive labels, tuf_compress_ranked_2d instead writes each pixel's root's
//    rank (ranks.h) into the output, from the forest passes 1 and 2 left in scratch memory; with
//    8 tiles per work-group passes 1 and 2 also leave a bit per pixel on the components' first
//    pixels (mark_roots, union_tracked), which the relabeling ranks (relabel_rank_marks)
//    instead of reading the forest.
//
// Nodes are numbered so that union-find's "smaller index wins" picks the first pixel in raster
// order: inside a work-group's tiles by node (GROUP_ROW below, which orders like the image's
// raster index), across them by the image's raster index. Raw labels: (raster index of the
// component's first pixel) + 1, background 0, as UF.
//
// Volumes (CONNECTIVITY 6): the same three passes on regions of 32 x 16 x 16 voxels (tuf_tiles_3d,
// tuf_border_merge_3d, tuf_compress_3d; see "Volumes" below), where for raw labels pass 1 leaves
// the voxels of a region of few components to pass 3, which then writes them once.
//
// Multi-label images (MULTILABEL=1): a run is a stretch of equal foreground values,
// so runs may touch; each row keeps its run starts beside its mask, and its joins with the row
// above as masks of equal neighbours (pixel_flags, joined_above, join_stretches). A row then has
// up to 32 runs, and its tiles are labeled one per work-group (tuf_tiles_small); the border merge
// compares values (JOINS) where binary images test foreground. A multi-label volume
// (6-connectivity) takes the image kernels over its slices stacked along the rows, kept apart,
// then tuf_slice_merge joins each voxel to the one in front of it where their values are equal.
//
// Build-time defines: CONNECTIVITY (4 or 8; 6 for volumes); for volumes FACE_ROW_LANES and
// DEFER_SLOTS (see where they are used). In pass 1 a work-group of 32 x 8 work-items labels
// 8 tiles side by side, a warp (sub-group) each, or one tile with all 8 warps; one of 32 x 16
// labels 8 tiles with two warps each: lane `lane` of a tile's warp reads and writes column
// `lane` of the tile, and labels row `lane` of it (the runs of a row shared among the tile's
// warps).

#define TILE_W 32
#define TILE_H 32
// Pass 1's union-find nodes are the run starts: the k-th run start of row r of tile t of a
// work-group's 8 tiles side by side is node r * GROUP_ROW + t * START_SLOTS + k (a row of 32
// has at most 16 runs), with one tile r * START_SLOTS + k: the group's rows one after the other,
// each tile's part of a row padded to 17 entries and the row to 137, so that the work-items of a
// warp, each on its own row, reach different banks of local memory when they work on their k-th
// run (without padding, a node per pixel, 65 % of the tile pass's local-memory reads were bank
// conflicts, H100, 8192^2 at 50 %). The nodes order as the run starts do in raster order. A
// group of 8 tiles takes 18 KiB of local memory with its masks (34 with a node per pixel), so
// that with a budget of 32 registers 8 groups fit an H100 compute unit instead of 6.
#define TILE_PIXELS (TILE_W * TILE_H)
// A multi-label row has up to 32 runs (every pixel a value of its own): 33 slots a row, so that
// its tiles are labeled one per work-group (tuf_tiles_small; 8 tiles would take 34 KiB of local
// memory, past the 32 KiB every OpenCL device has, and the 8-tile kernels are left out).
#if MULTILABEL
#define START_SLOTS 33
#else
#define START_SLOTS 17
#endif
#define GROUP_ROW (8 * START_SLOTS + 1)
#define GROUP_SLOTS (TILE_H * GROUP_ROW)
#define SMALL_SLOTS (TILE_H * START_SLOTS) // one tile per work-group (tuf_tiles_small)

// Bits 0..b of a word (b in 0..31).
DEVICE_FN uint bits_through(uint b)
{
    return (2u << b) - 1u;
}

// Bit k: byte k of w is foreground (nonzero, as FG), four pixels at a time. The bytes' high bits
// flag the nonzero bytes, and the multiply gathers them (little-endian, as on every OpenCL and
// CUDA device this runs on) into bits 24..27.
DEVICE_FN uint nonzero_bytes(uint w)
{
    const uint high = (((w & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | w) & 0x80808080u;
    return (high >> 7) * 0x01020408u >> 24 & 0xFu;
}

// Bit k: byte k of the 16 bytes of v is foreground.
DEVICE_FN uint nonzero_bytes16(uint4 v)
{
    return nonzero_bytes(v.x) | nonzero_bytes(v.y) << 4 | nonzero_bytes(v.z) << 8 | nonzero_bytes(v.w) << 12;
}

// The mask of the 32 pixels from raster index `start` of an image of `pixels` pixels. Read as
// the two or three aligned 16-byte words that hold them where those lie in the image, else a byte
// at a time (the first or last bytes of a buffer that does not start on 16 bytes).
DEVICE_FN uint row_mask(GLOBAL const uchar *img, index_t start, index_t pixels)
{
    const size_t address = (size_t)(img + start), aligned = address & ~(size_t)15u;
    const uint offset = (uint)(address - aligned);
    uint mask = 0;
    if (aligned >= (size_t)img && aligned + (offset != 0 ? 48u : 32u) <= (size_t)(img + pixels)) {
        GLOBAL const uint4 *words = (GLOBAL const uint4 *)(img + (start - offset));
        ulong bits = (ulong)nonzero_bytes16(words[0]) | (ulong)nonzero_bytes16(words[1]) << 16;
        if (offset != 0)
            bits |= (ulong)nonzero_bytes16(words[2]) << 32;
        mask = (uint)(bits >> offset);
    } else {
        for (uint c = 0; c < TILE_W; c++)
            mask |= (uint)FG(img[start + c]) << c;
    }
    return mask;
}

// The first pixel of each run of a row mask.
DEVICE_FN uint run_starts(uint mask)
{
    return mask & ~(mask << 1);
}

// The bits of the run of `mask` that holds bit b, from b to the run's end.
DEVICE_FN uint run_from(uint mask, uint b)
{
    const uint zeros = ~mask & (~0u << b);
    const uint first_zero = zeros & (0u - zeros); // 0 when the run reaches bit 31
    return (first_zero - 1u) & (~0u << b);
}

// ---- Multi-label images (MULTILABEL=1, common.h; volumes as their slices): a row's runs are
// its longest stretches of equal foreground values, so two runs may touch, and a row keeps its
// run starts beside its foreground mask (a binary row's are run_starts(mask)). Rows are compared
// with the row above through three masks of joins, bit c for pixel c of the row: `up` (its value
// equals the pixel's above), `up_left` and `up_right` (8-connectivity: the pixels above-left and
// above-right), all within the tile; the tile's borders are the border merge's.
#if MULTILABEL
#define ROW_STARTS(masks, starts, i) ((starts)[i])
#else
#define ROW_STARTS(masks, starts, i) run_starts((masks)[i])
#endif

// The bits of the run that starts at bit c of a row of foreground `mask` and run starts `starts`.
DEVICE_FN uint run_at(uint mask, uint starts, uint c)
{
    const uint ends = (~mask | starts) & (~0u << c) << 1; // the bits after c that end the run
    const uint end = ends & (0u - ends);                  // 0 when the run reaches bit 31
    return (end - 1u) & (~0u << c);
}

// The pixels of the row above that the run of a multi-label row starting at bit c joins: their
// values equal the run's. Consecutive ones lie in one run above (equal neighbours), and a pixel
// between two stretches of them, under the run, differs from the run's value: each stretch is
// a run above of its own.
DEVICE_FN uint joined_above(uint mask, uint starts, uint c, uint up, uint up_left, uint up_right)
{
    const uint run = run_at(mask, starts, c);
#if CONNECTIVITY == 8
    return (up & run) | (up_left & run) >> 1 | (up_right & run) << 1;
#else
    (void)up_left;
    (void)up_right;
    return up & run;
#endif
}

// The pixel flags of a multi-label tile, a byte per pixel (the bit numbers), and how they become a
// row's masks.
#define ML_FG 0u          // foreground
#define ML_LEFT 1u        // equal to the pixel on its left, in the tile
#define ML_UP 2u          // joins the pixel above, in the tile
#define ML_UP_LEFT 3u     // joins the pixel above-left, in the tile (8-connectivity)
#define ML_UP_RIGHT 4u    // joins the pixel above-right, in the tile (8-connectivity)

// Flag `flag` of the 4 pixels of a word of flag bytes, as 4 bits.
DEVICE_FN uint flag_bits(uint word, uint flag)
{
    return ((word >> flag & 0x01010101u) * 0x01020408u) >> 24 & 0xFu;
}

// Find with path halving in local memory: each node on the way is linked to its grandparent
// (with atomic_min: parents only ever move to a smaller index, an ancestor, whatever the order of
// concurrent updates), so trees stay shallow while unions go on. Parents are read with relaxed
// atomic loads (LOAD_RELAXED_LOCAL): other work-items of the group update them meanwhile.
DEVICE_FN uint find_halving(LOCAL uint *parents, uint i)
{
    uint parent = LOAD_RELAXED_LOCAL(&parents[i]) - 1;
    while (parent != i) {
        const uint grandparent = LOAD_RELAXED_LOCAL(&parents[parent]) - 1;
        if (grandparent != parent)
            ATOMIC_MIN(&parents[i], grandparent + 1);
        i = grandparent;
        parent = LOAD_RELAXED_LOCAL(&parents[i]) - 1;
    }
    return i;
}

// union_halving: union_find.h's union, with find_halving.
CCL_DEFINE_UNION(LOCAL, halving, uint, find_halving)

// find_halving on nodes *a and *b at once, both walks a step at a time together: their reads
// overlap, and a warp's loop runs as long as its longest pair of walks, not as its longest walk
// plus its longest other walk. A walk at its root steps onto itself.
DEVICE_FN void find_halving_both(LOCAL uint *parents, uint *a, uint *b)
{
    uint parent_a = LOAD_RELAXED_LOCAL(&parents[*a]) - 1, parent_b = LOAD_RELAXED_LOCAL(&parents[*b]) - 1;
    while (parent_a != *a || parent_b != *b) {
        const uint grandparent_a = LOAD_RELAXED_LOCAL(&parents[parent_a]) - 1;
        const uint grandparent_b = LOAD_RELAXED_LOCAL(&parents[parent_b]) - 1;
        if (grandparent_a != parent_a)
            ATOMIC_MIN(&parents[*a], grandparent_a + 1);
        if (grandparent_b != parent_b)
            ATOMIC_MIN(&parents[*b], grandparent_b + 1);
        *a = grandparent_a;
        *b = grandparent_b;
        parent_a = LOAD_RELAXED_LOCAL(&parents[*a]) - 1;
        parent_b = LOAD_RELAXED_LOCAL(&parents[*b]) - 1;
    }
}

// union_find.h's union, with find_halving_both.
CCL_DEFINE_UNION_BOTH(LOCAL, halving_both, uint, find_halving_both)

// The unions of pass 1: on volumes both finds walk together (H100, 256^3: the tile pass 7-12 %
// faster at 50-90 %), on images one after the other (together: 8192^2 5 % slower at 10 %,
// 2.5 % faster at 50 %; 4-connectivity 2-5 % slower).
#if CONNECTIVITY == 6
#define union_tile union_halving_both
#else
#define union_tile union_halving
#endif

// A word without its `n` lowest set bits.
DEVICE_FN uint without_lowest(uint w, uint n)
{
    for (; n > 0 && w != 0; n--)
        w &= w - 1u;
    return w;
}

// The image's raster index of node i of the work-group whose first tile is at (x0, y0), whose
// rows of nodes are row_stride entries apart, and whose tiles' row masks are masks_all (TILE_H
// per tile; their run starts starts_all, ROW_STARTS): the column of the row's k-th run start.
DEVICE_FN index_t node_to_image(uint i, LOCAL const uint *masks_all, LOCAL const uint *starts_all, uint x0, uint y0,
                                uint width, uint row_stride)
{
    const uint r = i / row_stride, in_row = i % row_stride, t = in_row / START_SLOTS;
    uint starts = ROW_STARTS(masks_all, starts_all, t * TILE_H + r);
    for (uint k = in_row % START_SLOTS; k > 0; k--)
        starts &= starts - 1u;
    return PIXEL_INDEX(x0 + t * TILE_W + lowest_bit(starts), y0 + r, width);
}

// The runs of the row above that touch the run of `mask` starting at bit c: their bits in
// `above` (with the diagonal neighbours for 8-connectivity).
DEVICE_FN uint touching_above(uint mask, uint c, uint above)
{
    const uint run = run_from(mask, c);
#if CONNECTIVITY == 8
    return above & (run | run << 1 | run >> 1);
#else
    return above & run;
#endif
}

// Which of its foreground neighbours across a border a pixel b just after the border joins
// (JOIN_* bits), for the borders between the regions that pass 1 labeled: `mid` faces b,
// `before` and `after` (8-connectivity) lie on either side of mid, and `prev` is the pixel
// before b along the border, on b's side. The first pixel of a region along a border makes all
// its unions; a later one (prev_in: prev lies in b's region, and before in mid's) skips what is
// joined already: a foreground prev joined mid and before (or skipped them for the same
// reason), and a foreground mid is joined in its region to before, and to after where after
// lies in that region too (after_in).
#define JOIN_MID 1u
#define JOIN_BEFORE 2u
#define JOIN_AFTER 4u
DEVICE_FN uint border_joins(int prev, int mid, int before, int after, int prev_in, int after_in)
{
#if CONNECTIVITY == 8
    const uint join_after = after && !(mid && after_in) ? JOIN_AFTER : 0u;
    if (prev_in && prev)
        return join_after;
    return (mid ? JOIN_MID : 0u) | (before && !(mid && prev_in) ? JOIN_BEFORE : 0u) | join_after;
#else
    (void)after;
    (void)after_in;
    return mid && !(prev_in && prev && before) ? JOIN_MID : 0u;
#endif
}

// The last bit of each run of `mask` that meets `x`: a carry started at each run's first bit runs
// through the run's bits outside x, and leaves the run (sets the bit after its end, 64-bit so
// that a run ending at bit 31 keeps it) only where the run misses x.
DEVICE_FN uint run_ends_meeting(uint mask, uint x)
{
    const ulong carried = (ulong)(mask & ~x) + (ulong)run_starts(mask);
    return mask & ~(mask >> 1) & ~(uint)(carried >> 1);
}

// The node of the run of a row that holds bit `bit`: the row's run starts are `starts`, its
// first is node row_node.
DEVICE_FN uint run_node(uint starts, uint bit, uint row_node)
{
    return row_node + POPCOUNT(starts & bits_through(bit)) - 1u;
}

// A 16-byte word of four 32-bit ones.
DEVICE_FN uint4 uint4_of(uint x, uint y, uint z, uint w)
{
    uint4 out;
    out.x = x;
    out.y = y;
    out.z = z;
    out.w = w;
    return out;
}

// The runs of pixels q .. q + 3 of a row whose run starts are `s` (q a multiple of 4): run[b] = k
// where pixel q + b lies in the row's k-th run (from 0; meaningful for a foreground pixel): pixel
// q's, then one more at each run start.
DEVICE_FN void quad_runs(uint s, uint q, uint run[4])
{
    uint k = run_node(s, q, 0);
    for (uint b = 0; b < 4u; b++) {
        k += b > 0 ? s >> (q + b) & 1u : 0u;
        run[b] = k;
    }
}

// The entries of pixels q .. q + 3 of a row `mask` whose run starts are `starts` (q a multiple of
// 4), whose k-th run start's entry is entries[row_node + k], as one 16-byte word: each pixel its
// run's entry, a background pixel 0.
DEVICE_FN uint4 quad_labels(LOCAL const uint *entries, uint mask, uint starts, uint q, uint row_node)
{
    const uint m = mask >> q;
    uint run[4], w[4];
    quad_runs(starts, q, run);
    for (uint b = 0; b < 4u; b++)
        w[b] = m >> b & 1u ? entries[row_node + run[b]] : 0u;
    return uint4_of(w[0], w[1], w[2], w[3]);
}

// The node of the last run of a row whose run starts are `starts` (not 0), whose first run start
// is node `row_node`.
DEVICE_FN uint last_run_node(uint starts, uint row_node)
{
    return row_node + POPCOUNT(starts) - 1u;
}

// Links run starts of a row (the bits of `starts`; the k-th is node row_node + k) to their root:
// the k-th for k = first, first + step, ... (a row's runs shared by `step` work-items).
DEVICE_FN void link_to_roots(LOCAL uint *parents, uint starts, uint row_node, uint first, uint step)
{
    for (uint i = row_node + first; i < row_node + POPCOUNT(starts); i += step)
        ATOMIC_MIN(&parents[i], find_halving(parents, i) + 1);
}

// After link_to_roots, with 32-bit labels: the entry of every run start of a row (the bits of
// `starts`, the k-th at node row_node + k, for k = first, first + step, ...) becomes its root's
// label, (raster index of the root's pixel) + 1, where the row's first pixel has raster index
// row_index. Each root takes its own from its column, then, after a barrier, every other run
// start copies its root's: two short passes instead of finding each root's column from the row
// masks at every run start (H100, 256^3 volumes at 50 %: that search was 11 % of the tile pass's
// instructions). Ends with a barrier.
DEVICE_FN uint label_roots(LOCAL uint *parents, uint starts, uint row_node, uint first, uint step, uint row_index)
{
    uint roots = 0, k = first; // bit k: the k-th run start is a root
    uint columns = 0;          // bit c: the run start at column c is a root
    for (uint todo = without_lowest(starts, first); todo != 0; todo = without_lowest(todo, step), k += step) {
        const uint i = row_node + k;
        if (parents[i] == i + 1) {
            roots |= 1u << k;
            columns |= todo & (0u - todo);
            parents[i] = row_index + lowest_bit(todo) + 1;
        }
    }
    LOCAL_BARRIER();
    k = first;
    for (uint todo = without_lowest(starts, first); todo != 0; todo = without_lowest(todo, step), k += step) {
        const uint i = row_node + k;
        if ((roots >> k & 1u) == 0)
            parents[i] = parents[parents[i] - 1];
    }
    LOCAL_BARRIER();
    return columns;
}

// Pass 1's root marks, for consecutive labels: bit p % 32 of marks[p / 32] is set where pixel p
// is a work-group's root (the first pixel of a component within the group), so that the
// relabeling ranks the components from 1 bit per pixel (relabel_rank_marks) instead of reading
// the whole forest. `columns`: the roots among the 32 pixels from raster index `start`, a whole
// word on an image whose width is a multiple of 32 (every word is written then), else or-ed
// into the word or two they fall in, which other rows share (the host zeroes the marks first).
// The border merge then clears the mark of each root it hangs under another (union_tracked).
DEVICE_FN void mark_roots(GLOBAL uint *marks, uint columns, index_t start, uint width)
{
    const uint shift = (uint)(start % 32u);
    if (width % 32u == 0) {
        marks[start / 32u] = columns;
        return;
    }
    if (columns << shift != 0)
        ATOMIC_OR(&marks[start / 32u], columns << shift);
    if (shift != 0 && columns >> (32u - shift) != 0)
        ATOMIC_OR(&marks[start / 32u + 1u], columns >> (32u - shift));
}

// Pointer jumping over the run starts of a row (bits of `starts`, the k-th at node row_node + k)
// after each hung under a run of an earlier row: the links form chains up the tile (at most 31
// long in an image's tile), which `rounds` rounds of "parent = grandparent" cut to at most
// 2^rounds - 1 steps; the finds after it walk the rest, halving it. In place, with atomic_min: a
// parent only moves up its chain, whatever the order of the updates. Images take 3 rounds (H100,
// 8192^2 at 10/50/90 %: 5 rounds, chains cut to one step, were 2-6 % slower; 1 round 4 % faster
// at 10 %, 2 % slower at 50 and 90 %), volumes 2 (256^3: 1-3 % faster than 3 at 10-50 %, the
// same from 70 %; 1 round slower at 70 %). A work-item stops after a round that moved none of
// its parents (sparse rows, whose chains are short): H100, CUDA, A/B in one call, two rounds,
// 2048^2 at 10 / 20 / 30 %, 4-connectivity 22.8 / 26.4 / 29.2 -> 22.1 / 26.0-26.1 / 29.2-29.3 us,
// 8-connectivity 26.5-26.6 / 33.4-33.5 / 39.3-39.5 -> 26.2-26.4 / 33.2-33.4 / 38.9-39.0, the rest
// of the density grid, 8192^2 and 256^3 volumes within noise. (Two rounds at most on images:
// 4-connectivity at 50 % 34.5-34.6 -> 33.9-34.0 us, but 1 us slower at 70-90 %.) (The k-th
// for k = first, first + step, ..., as link_to_roots.)
DEVICE_FN void jump_pointers(LOCAL uint *parents, uint starts, uint row_node, uint first, uint step, uint rounds)
{
    const uint end = row_node + POPCOUNT(starts);
    for (uint round = 0; round < rounds; round++) {
        uint moved = 0;
        for (uint i = row_node + first; i < end; i += step) {
            const uint parent = LOAD_RELAXED_LOCAL(&parents[i]);
            const uint grandparent = LOAD_RELAXED_LOCAL(&parents[parent - 1]);
            if (grandparent != parent) {
                ATOMIC_MIN(&parents[i], grandparent);
                moved = 1;
            }
        }
        if (!moved)
            break;
    }
}

// The unions between the runs of a neighbour row `above` (whose first run start is node above_node)
// that the runs of row `mask` touch, each of which hangs under (or is joined to) the first run
// above it touches. The runs above that a run touches are consecutive; joining each pair of
// consecutive runs above that one run of the row touches both of gives the same components.
// Such a pair is bridged by the row: the gap between them (8-connectivity), or the gap and the
// two pixels around it (4 and 6), is foreground in the row. Adding the gaps' uncovered pixels to
// the row above's zeros carries into the start of the run after each gap that is not bridged,
// so all of a row's unions come from a few bit operations and one loop over them, the same
// length for every work-item of a warp. The k-th union for k = first, first + step, ... (as
// link_to_roots).
DEVICE_FN void join_bridged(LOCAL uint *parents, uint mask, uint above, uint above_node, uint first, uint step)
{
    const uint above_starts = run_starts(above), zeros = ~above;
#if CONNECTIVITY == 8
    const uint uncovered = zeros & ~mask;
    const uint ends_bridged = ~0u;
#else
    const uint uncovered = (zeros & ~mask) | (above & ~(above >> 1) & ~mask) << 1;
    const uint ends_bridged = mask;
#endif
    // Starts of runs above with a run before them, whose gap the row bridges.
    uint bridged = (above_starts & (above_starts - 1u)) & ~((zeros + uncovered) & above) & ends_bridged;
    for (bridged = without_lowest(bridged, first); bridged != 0; bridged = without_lowest(bridged, step)) {
        const uint node = run_node(above_starts, lowest_bit(bridged), above_node);
        union_tile(parents, node - 1, node);
    }
}

#if MULTILABEL
// The value of pixel (x, y) of an image of width x height values; background outside it.
DEVICE_FN pixel_t value_at(GLOBAL const pixel_t *img, uint x, uint y, uint width, uint height)
{
    return x < width && y < height ? img[PIXEL_INDEX(x, y, width)] : BACKGROUND;
}

// The flags (ML_* bits) of pixel (x, y) of a multi-label image, at column `lane` and row `row` of
// its tile: its value compared with its neighbours' (0 for background). The image may be the
// slices of a volume stacked along the rows, `slice_height` rows each (its height for an
// image): a pixel is not compared with the row above at a slice's first row.
DEVICE_FN uint pixel_flags(GLOBAL const pixel_t *img, uint x, uint y, uint width, uint height, uint slice_height,
                           uint lane, uint row)
{
    const pixel_t v = value_at(img, x, y, width, height);
    if (!FG(v))
        return 0;
    uint flags = 1u << ML_FG;
    if (lane > 0)
        flags |= (uint)(value_at(img, x - 1u, y, width, height) == v) << ML_LEFT;
    if (row > 0 && y % slice_height != 0) {
        flags |= (uint)(value_at(img, x, y - 1u, width, height) == v) << ML_UP;
        if (CONNECTIVITY == 8 && lane > 0)
            flags |= (uint)(value_at(img, x - 1u, y - 1u, width, height) == v) << ML_UP_LEFT;
        if (CONNECTIVITY == 8 && lane + 1 < TILE_W)
            flags |= (uint)(value_at(img, x + 1u, y - 1u, width, height) == v) << ML_UP_RIGHT;
    }
    return flags;
}

// join_bridged for a multi-label row: each run hangs under the run of the first stretch of pixels
// above that it joins (joined_above), and the run of each later stretch is joined to that one.
// The k-th run for k = first, first + step, ... (as link_to_roots).
DEVICE_FN void join_stretches(LOCAL uint *parents, uint mask, uint starts, uint up, uint up_left, uint up_right,
                              uint above_starts, uint above_node, uint first, uint step)
{
    for (uint todo = without_lowest(starts, first); todo != 0; todo = without_lowest(todo, step)) {
        const uint joined = joined_above(mask, starts, lowest_bit(todo), up, up_left, up_right);
        uint stretches = joined & ~(joined << 1);
        if ((stretches & (stretches - 1u)) == 0)
            continue;
        const uint node = run_node(above_starts, lowest_bit(stretches), above_node);
        for (stretches &= stretches - 1u; stretches != 0; stretches &= stretches - 1u)
            union_tile(parents, node, run_node(above_starts, lowest_bit(stretches), above_node));
    }
}
#endif

// Pass 1: the 32 x 32 tiles of a work-group are labeled in local memory, and every pixel stores
// (global index of its group-local root) + 1, background 0. A work-group of 32 x (group_tiles *
// tile_warps) work-items labels group_tiles tiles side by side (8, or 1), with tile_warps warps
// of 32 work-items each (1, 2 or 8), and with 8 tiles also joins them across the borders between
// them. Its local memory holds:
//   masks: per tile, one 32-bit mask per row (bit c: column c is foreground);
//   parents: union-find over the tiles' run starts, node + 1 (union_find.h's convention);
//   before the masks are made, its first 1024 bytes per tile hold the pixels of a tile across
//   the image's edge (1 foreground).
DEVICE_FN void label_tiles(GLOBAL const pixel_t *img, GLOBAL label_t *L, uint width, uint height, uint slice_height,
                           uint group_tiles, uint tile_warps, LOCAL uint *masks_all, LOCAL uint *starts_all,
                           LOCAL uint *parents, GLOBAL uint *marks, uint track)
{
    // Warp `sub` of a tile's tile_warps reads and writes rows sub, sub + tile_warps, ...; its
    // first warp labels the rows.
    const uint lane = LOCAL_ID_X, t = LOCAL_ID_Y / tile_warps, sub = LOCAL_ID_Y % tile_warps;
    // A group past a folded grid (y0 >= height) sees only background and writes nothing (no
    // early return: POCL mishandles a return before a barrier, even a uniform one).
    const uint group_x0 = GROUP_ID_X * group_tiles * TILE_W, x0 = group_x0 + t * TILE_W, y0 = GROUP_ID_Y * TILE_H;
    const uint x = x0 + lane;
    LOCAL uint *masks = masks_all + t * TILE_H;
    LOCAL uint *starts_tile = starts_all + t * TILE_H; // (multi-label rows' run starts: ROW_STARTS)
    // Node of the k-th run start of the tile's row r: r * row_stride + base + k (GROUP_ROW, or
    // START_SLOTS with one tile).
    const uint row_stride = group_tiles > 1 ? GROUP_ROW : START_SLOTS;
    const uint base = t * START_SLOTS;

    // Load. A tile wholly inside the image: work-item `lane` of its first warp reads row `lane`
    // in 16-byte words and makes the row's mask in registers. A tile across the image's edge:
    // column `lane`, one byte per pixel (coalesced along the tile's rows) into local memory, then
    // row `lane`'s mask from its 32 bytes, 4 at a time. A multi-label tile: column `lane`'s flag
    // bytes (pixel_flags) into local memory, then every warp's work-item `lane` makes row
    // `lane`'s masks from them.
    const int inside = x0 + TILE_W <= width && y0 + TILE_H <= height;
    LOCAL uint *fg_words = parents + t * (TILE_PIXELS / 4);
    LOCAL uchar *fg_bytes = (LOCAL uchar *)fg_words;
    const uint r = lane;
#if MULTILABEL
    (void)inside;
    for (uint row = sub; row < TILE_H; row += tile_warps)
        fg_bytes[row * TILE_W + lane] = (uchar)pixel_flags(img, x, y0 + row, width, height, slice_height, lane, row);
    LOCAL_BARRIER();
    uint mask = 0, left = 0, joins_up = 0, joins_up_left = 0, joins_up_right = 0;
    for (uint w = 0; w < TILE_W / 4; w++) {
        const uint word = fg_words[r * (TILE_W / 4) + w];
        mask |= flag_bits(word, ML_FG) << (4 * w);
        left |= flag_bits(word, ML_LEFT) << (4 * w);
        joins_up |= flag_bits(word, ML_UP) << (4 * w);
        joins_up_left |= flag_bits(word, ML_UP_LEFT) << (4 * w);
        joins_up_right |= flag_bits(word, ML_UP_RIGHT) << (4 * w);
    }
    const uint starts = mask & ~left;
    if (sub == 0) {
        masks[r] = mask;
        starts_tile[r] = starts;
    }
    LOCAL_BARRIER();
#else
    if (!inside) {
        for (uint row = sub; row < TILE_H; row += tile_warps) {
            const uint y = y0 + row;
            fg_bytes[row * TILE_W + lane] = (uchar)(x < width && y < height && FG(img[PIXEL_INDEX(x, y, width)]));
        }
    }
    LOCAL_BARRIER();
    uint mask = 0;
    if (sub == 0) {
        if (inside) {
            mask = row_mask(img, PIXEL_INDEX(x0, y0 + r, width), (index_t)width * height);
        } else {
            for (uint w = 0; w < TILE_W / 4; w++)
                mask |= ((fg_words[r * (TILE_W / 4) + w] * 0x01020408u) >> 24 & 0xFu) << (4 * w);
        }
        masks[r] = mask;
    }
    LOCAL_BARRIER();
    if (sub != 0)
        mask = masks[r];
    const uint starts = run_starts(mask);
#endif
    // From here on, work-item (lane r, warp sub) of a tile works on the k-th run start (or
    // union) of row r for k = sub, sub + tile_warps, ...: with one tile per work-group, a row's
    // runs are shared by 8 work-items, whose loops are 8 times shorter (the labeling of a few
    // tiles is latency bound).

    // Link (KE's initialization, IPAS 2018 Alg. 4, on runs): each run start of row r hangs under
    // the start of the first run above that touches its run, or is a root.
    const uint row_node = r * row_stride + base, above_node = row_node - row_stride; // first run's
    const uint above = r > 0 ? masks[r - 1] : 0;
    const uint above_starts = r > 0 ? ROW_STARTS(masks, starts_tile, r - 1) : 0u;
    uint k = sub;
    for (uint todo = without_lowest(starts, sub); todo != 0; todo = without_lowest(todo, tile_warps), k += tile_warps) {
        const uint c = lowest_bit(todo), i = row_node + k;
#if MULTILABEL
        (void)above;
        const uint touching = joined_above(mask, starts, c, joins_up, joins_up_left, joins_up_right);
#else
        const uint touching = touching_above(mask, c, above);
#endif
        parents[i] = touching != 0 ? run_node(above_starts, lowest_bit(touching), above_node) + 1 : i + 1;
    }
    LOCAL_BARRIER();
    jump_pointers(parents, starts, row_node, sub, tile_warps, 3);
    // Unions with the other runs above each run touches (join_bridged; join_stretches).
#if MULTILABEL
    join_stretches(parents, mask, starts, joins_up, joins_up_left, joins_up_right, above_starts, above_node, sub,
                   tile_warps);
#else
    join_bridged(parents, mask, above, above_node, sub, tile_warps);
#endif
    LOCAL_BARRIER();
    // Every run start is linked to its root.
    link_to_roots(parents, starts, row_node, sub, tile_warps);
    LOCAL_BARRIER();
    // With 8 tiles, unions across the borders between them, on the tiles' roots (finds of one
    // step), then every run start is linked to its root again: work-item r of tile t > 0 joins its
    // pixel (0, r) with its foreground neighbours in column 31 of tile t - 1, within the tiles'
    // rows (pairs across the group's top and bottom edges are the border merge's), skipping what
    // is joined already as tuf_border_merge_2d does (border_joins).
    // (Multi-label tiles are labeled one per work-group: no such borders.)
#if !MULTILABEL
    if (group_tiles > 1 && t > 0 && sub == 0 && (mask & 1u) != 0) {
        LOCAL const uint *left = masks - TILE_H; // tile t - 1's
        const uint left_node = row_node - START_SLOTS;
        const int up = r > 0 && (masks[r - 1] & 1u) != 0;
        const int w = left[r] >> 31, nw = r > 0 && left[r - 1] >> 31 != 0;
        const int sw = CONNECTIVITY == 8 && r + 1 < TILE_H && left[r + 1] >> 31 != 0;
        const uint joins = border_joins(up, w, nw, sw, r > 0, r + 1 < TILE_H);
        if (joins & JOIN_MID)
            union_tile(parents, row_node, last_run_node(run_starts(left[r]), left_node));
        if (joins & JOIN_BEFORE)
            union_tile(parents, row_node, last_run_node(run_starts(left[r - 1]), left_node - row_stride));
        if (joins & JOIN_AFTER)
            union_tile(parents, row_node, last_run_node(run_starts(left[r + 1]), left_node + row_stride));
    }
#endif
    LOCAL_BARRIER();
    if (group_tiles > 1)
        link_to_roots(parents, starts, row_node, sub, tile_warps);
    LOCAL_BARRIER();
#if LABEL_BITS == 32
    // Every run start's entry becomes its root's label, (image raster index of the root) + 1:
    // once per run instead of once per pixel (a 64-bit label does not fit an entry). With 8
    // tiles by label_roots; with one (tuf_tiles_small, 8 work-items per row, where latency
    // rules) each run start finds its root's column itself, a barrier fewer (label_roots there:
    // the DIBCO pages 5 % slower).
    if (group_tiles > 1) {
        const uint row_index = (uint)PIXEL_INDEX(x0, y0 + r, width);
        uint columns = label_roots(parents, starts, row_node, sub, tile_warps, row_index);
        if (track && tile_warps > 1) {
            // The roots of a row found by the tile's two warps, or-ed in local memory (after the
            // masks: tuf_tiles_wide's masks_all holds 16 rows of words per tile), so that one
            // work-item writes the row's whole word.
            LOCAL uint *found = masks_all + 8 * TILE_H + t * TILE_H;
            if (sub == 1)
                found[r] = columns;
            LOCAL_BARRIER();
            columns |= sub == 0 ? found[r] : 0u;
        }
        if (track && sub == 0 && x0 < width && y0 + r < height)
            mark_roots(marks, columns, PIXEL_INDEX(x0, y0 + r, width), width);
    } else {
        for (uint i = row_node + sub; i < row_node + POPCOUNT(starts); i += tile_warps)
            parents[i] = node_to_image(parents[i] - 1, masks_all, starts_all, group_x0, y0, width, row_stride) + 1;
        LOCAL_BARRIER();
    }
#endif

    // Write: each pixel takes the root of its run's start. With 32-bit labels and 8 tiles, a
    // tile inside the image whose rows start on 16 bytes is written in 16-byte words, work-item
    // `lane` of its warp on pixels 4 (lane % 8) .. + 3 of rows lane / 8, + 4, ... (a quarter of
    // the store instructions); otherwise column `lane`.
#if LABEL_BITS == 32
    if (group_tiles > 1 && inside && (size_t)L % 16u == 0 && width % 4u == 0) {
        const uint q = lane % 8u * 4u;
        for (uint row = lane / 8u + 4u * sub; row < TILE_H; row += 4u * tile_warps)
            *(GLOBAL uint4 *)(L + PIXEL_INDEX(x0 + q, y0 + row, width)) =
                quad_labels(parents, masks[row], ROW_STARTS(masks, starts_tile, row), q, row * row_stride + base);
        return;
    }
#endif
    if (x >= width)
        return;
    for (uint row = sub; row < TILE_H && y0 + row < height; row += tile_warps) {
        const uint m = masks[row];
        label_t label = 0;
        if (m >> lane & 1u) {
            const uint entry = parents[run_node(ROW_STARTS(masks, starts_tile, row), lane, row * row_stride + base)];
#if LABEL_BITS == 32
            label = entry;
#else
            label = node_to_image(entry - 1, masks_all, starts_all, group_x0, y0, width, row_stride) + 1;
#endif
        }
        L[PIXEL_INDEX(x, y0 + row, width)] = label;
    }
}

// The tile kernels' run starts of a multi-label tile's rows (ROW_STARTS): `starts_all`, a local
// array of n entries; a binary row's come from its mask (the pointer is not read).
#if MULTILABEL
#define STARTS_ARRAY(n) LOCAL_ARRAY(uint, starts_all, n)
#else
#define STARTS_ARRAY(n) LOCAL uint *starts_all = masks_all
#endif

#if !MULTILABEL
// Pass 1 on 8 tiles per work-group (32 x 8 work-items, a warp per tile), for images of many
// tiles.
// (With `track`, it also writes the root marks of consecutive labelings: mark_roots.)
KERNEL REQUIRED_GROUP_SIZE(32, 8, 1, 8) void tuf_tiles_groups(GLOBAL const pixel_t *img, GLOBAL label_t *L, uint width,
                                                             uint height, GLOBAL uint *marks, uint track)
{
    LOCAL_ARRAY(uint, masks_all, 8 * TILE_H);
    STARTS_ARRAY(8 * TILE_H);
    LOCAL_ARRAY(uint, parents, GROUP_SLOTS);
    LET_NEXT_KERNEL_START(); // (the border merge waits for this kernel before it reads labels)
    label_tiles(img, L, width, height, height, 8, 1, masks_all, starts_all, parents, marks, track);
}

// Pass 1 on 8 tiles per work-group of 32 x 16 work-items, two warps per tile (sharing each
// row's runs, as tuf_tiles_small's eight do), for images whose 8-tile groups would fill less
// than half of the device: twice the warps hide the latency of the tiles' local-memory chains.
KERNEL REQUIRED_GROUP_SIZE(32, 16, 1, 4) void tuf_tiles_wide(GLOBAL const pixel_t *img, GLOBAL label_t *L, uint width,
                                                             uint height, GLOBAL uint *marks, uint track)
{
    LOCAL_ARRAY(uint, masks_all, 16 * TILE_H); // the tiles' masks, then their rows' roots (label_tiles)
    STARTS_ARRAY(8 * TILE_H);
    LOCAL_ARRAY(uint, parents, GROUP_SLOTS);
    LET_NEXT_KERNEL_START(); // (the border merge waits for this kernel before it reads labels)
    label_tiles(img, L, width, height, height, 8, 2, masks_all, starts_all, parents, marks, track);
}
#endif

// Pass 1 on one tile per work-group of 32 x 8 work-items, for images of few tiles: 8 warps
// share the tile's reads and writes (its rows are still labeled by one), more latency hidden.
// Multi-label images too (every one of them), and the slices of a multi-label volume stacked
// along the rows, `slice_height` rows each, none joined to another (the height for an image).
KERNEL REQUIRED_GROUP_SIZE(32, 8, 1, 8) void tuf_tiles_small(GLOBAL const pixel_t *img, GLOBAL label_t *L, uint width,
                                                            uint height, uint slice_height)
{
    LOCAL_ARRAY(uint, masks_all, TILE_H);
    STARTS_ARRAY(TILE_H);
    LOCAL_ARRAY(uint, parents, SMALL_SLOTS);
    LET_NEXT_KERNEL_START(); // (the border merge waits for this kernel before it reads labels)
    label_tiles(img, L, width, height, slice_height, 1, 8, masks_all, starts_all, parents, (GLOBAL uint *)0, 0);
}

// ---- Volumes, 6-connectivity (CONNECTIVITY=6): the same three passes on regions of
// 32 x REGION_H x REGION_D voxels, each a work-group's, labeled in local memory as one tile of
// 256 rows of 32 voxels. Row r of a region is its row yy = r % REGION_H of slice zz = r /
// REGION_H, so the rows (and nodes, row by row) order as the voxels do in raster order.
// A row has two earlier neighbour rows: above (yy - 1, same slice) and in front (zz - 1, same
// yy), and 6-connectivity joins the runs a run overlaps in either (as 4-connectivity the runs
// above). Each run start hangs under the first run above it overlaps, else the first one in
// front; the pairs of consecutive runs above, and in front, that a run bridges are joined
// (join_bridged), and a run hung above is joined to the first run in front it overlaps. The
// border merge then joins the voxel pairs across the regions' faces: x = 32k, y = REGION_H m,
// z = REGION_D n (a sixth of the voxels, against 4 % of the pixels of an image).
//
// A region's nodes are compact: row r's k-th run start is node r * START_SLOTS + k (a row of 32
// has at most 16 runs; rows of 17 slots, so that the work-items of a warp, each on its own row,
// reach different banks of local memory). 17 KiB of local memory per work-group instead of 34
// with a slot per voxel: 8 groups fit a compute unit instead of 6 (H100, 256^3 at 50 %: 2.6
// waves of groups became 1.9).
#define REGION_H 16
#define REGION_D 16
#define REGION_ROWS (REGION_H * REGION_D)
#define REGION_SLOTS (REGION_ROWS * START_SLOTS)
// DEFER_SLOTS (a define, at most 256: a byte per run's slot): roots a region may have for pass
// 1 to defer its labels to pass 3.
#if DEFER_SLOTS > 256
#error "a run's slot is a byte"
#endif

// The slot of run k of a deferred region's row, whose 16 runs' slots are the bytes of `bytes`.
DEVICE_FN uint run_slot(uint4 bytes, uint k)
{
    const uint word = k < 4 ? bytes.x : k < 8 ? bytes.y : k < 12 ? bytes.z : bytes.w;
    return word >> (8 * (k % 4)) & 0xFFu;
}

// The index of the region that holds voxel (x, y, z): regions along x, then y, then z (the
// order of pass 1's work-groups).
DEVICE_FN uint region_of(uint x, uint y, uint z, uint width, uint height)
{
    const uint across = (width + TILE_W - 1) / TILE_W, down = (height + REGION_H - 1) / REGION_H;
    return (z / REGION_D * down + y / REGION_H) * across + x / TILE_W;
}

// The word of pass 1's row masks that holds row (y, z) of the region of voxel (x, y, z).
DEVICE_FN index_t mask_word(uint x, uint y, uint z, uint width, uint height)
{
    return (index_t)region_of(x, y, z, width, height) * REGION_ROWS + z % REGION_D * REGION_H + y % REGION_H;
}

// The region of a work-group of pass 1 or 3 on volumes: its first voxel and its index
// (region_of). The groups run over a 2D range, the regions along y and z one after the other
// along its y (so that the host folds it into the grid as a tall image's); a group past the
// regions has z0 >= depth.
typedef struct {
    uint x0, y0, z0, index;
} volume_region;

DEVICE_FN volume_region group_region(uint width, uint height)
{
    const uint down = (height + REGION_H - 1) / REGION_H;
    volume_region g;
    g.x0 = GROUP_ID_X * TILE_W;
    g.y0 = GROUP_ID_Y % down * REGION_H;
    g.z0 = GROUP_ID_Y / down * REGION_D;
    g.index = region_of(g.x0, g.y0, g.z0, width, height);
    return g;
}

// The volume's raster index of node i of the region whose first voxel is (x0, y0, z0), whose
// rows' masks are `masks`: the column of the row's k-th run start.
DEVICE_FN index_t node_to_volume(uint i, LOCAL const uint *masks, uint x0, uint y0, uint z0, uint width,
                                 uint height)
{
    const uint r = i / START_SLOTS;
    uint starts = run_starts(masks[r]);
    for (uint k = i % START_SLOTS; k > 0; k--)
        starts &= starts - 1u;
    return VOXEL_INDEX(x0 + lowest_bit(starts), y0 + r % REGION_H, z0 + r / REGION_H, width, height);
}

// Pass 1 on volumes: a work-group of 32 x 8 work-items labels a region; work-item (lane, warp)
// labels row warp * 32 + lane, and warp `warp` reads rows warp, warp + 8, ... a voxel per lane
// (coalesced along x). Every voxel stores (raster index of its region-local root) + 1,
// background 0, or, in a region it defers (`defer`, below), only the roots do. A group past the
// regions (group_region) sees only background and writes nothing.
KERNEL void tuf_tiles_3d(GLOBAL const uchar *img, GLOBAL label_t *L, uint width, uint height, uint depth,
                         GLOBAL uint *row_masks, GLOBAL uint *dirty, GLOBAL uint *deferred, GLOBAL uint *slots,
                         GLOBAL uint4 *run_slots, uint defer)
{
    LOCAL_ARRAY(uint, masks, REGION_ROWS);
    LOCAL_ARRAY(uint, parents, REGION_SLOTS);
    LOCAL_ARRAY(uint, roots_found, 2);
    const uint lane = LOCAL_ID_X, warp = LOCAL_ID_Y, warps = REGION_ROWS / TILE_W; // 8
    const volume_region g = group_region(width, height);
    const uint x0 = g.x0, y0 = g.y0, z0 = g.z0, region = g.index;
    const uint x = x0 + lane;

    // Load, as pass 1 on images: a region wholly inside the volume, each row's 32 voxels in
    // 16-byte words by its work-item; across the volume's edge, a byte per voxel into local
    // memory (parents' first 8 KiB), then each row's mask from its 32 bytes.
    const int inside = x0 + TILE_W <= width && y0 + REGION_H <= height && z0 + REGION_D <= depth;
    LOCAL uint *fg_words = parents;
    LOCAL uchar *fg_bytes = (LOCAL uchar *)fg_words;
    if (!inside) {
        for (uint row = warp; row < REGION_ROWS; row += warps) {
            const uint y = y0 + row % REGION_H, z = z0 + row / REGION_H;
            const int fg = x < width && y < height && z < depth && FG(img[VOXEL_INDEX(x, y, z, width, height)]);
            fg_bytes[row * TILE_W + lane] = (uchar)fg;
        }
    }
    LOCAL_BARRIER();
    const uint r = warp * TILE_W + lane, yy = r % REGION_H, zz = r / REGION_H;
    uint mask = 0;
    if (inside) {
        mask = row_mask(img, VOXEL_INDEX(x0, y0 + yy, z0 + zz, width, height), (index_t)width * height * depth);
    } else {
        for (uint w = 0; w < TILE_W / 4; w++)
            mask |= ((fg_words[r * (TILE_W / 4) + w] * 0x01020408u) >> 24 & 0xFu) << (4 * w);
    }
    masks[r] = mask;
    // The rows' masks for the border merge, a region's one after the other (mask_word), and the
    // region's word of `dirty` cleared for it (not by a group past the regions).
    if (z0 < depth) {
        row_masks[(index_t)region * REGION_ROWS + r] = mask;
        if (r == 0)
            dirty[region] = 0;
    }
    if (r < 2)
        roots_found[r] = 0;
    LOCAL_BARRIER();

    // Link: each run start hangs under the first run above it overlaps, else the first in front.
    const uint starts = run_starts(mask), row_node = r * START_SLOTS;
    const uint above = yy > 0 ? masks[r - 1] : 0, front = zz > 0 ? masks[r - REGION_H] : 0;
    const uint above_node = row_node - START_SLOTS, front_node = row_node - REGION_H * START_SLOTS;
    const uint above_starts = run_starts(above), front_starts = run_starts(front);
    uint k = 0;
    for (uint todo = starts; todo != 0; todo &= todo - 1, k++) {
        const uint c = lowest_bit(todo), i = row_node + k, run = run_from(mask, c);
        const uint up = above & run, ahead = front & run;
        parents[i] = up != 0      ? run_node(above_starts, lowest_bit(up), above_node) + 1
                     : ahead != 0 ? run_node(front_starts, lowest_bit(ahead), front_node) + 1
                                  : i + 1;
    }
    LOCAL_BARRIER();
    jump_pointers(parents, starts, row_node, 0, 1, 2);
    // Unions: the pairs of runs above, and in front, that a run bridges, and each run hung above
    // with the first run in front it overlaps, unless they are joined through the row above the
    // one in front (the corner row) already: at a column where the run overlaps a run in front,
    // the voxels above both are foreground (a square). The run is joined to the run above there
    // (it hangs under or is bridged to every run above it overlaps), which is joined to every run
    // in front of it (by the same rule on its own row, one row up: at yy = 0 every union is
    // made), among them the run of the corner row there, which is joined to the run in front
    // below it (every run above a run is). At high density most such unions are skipped.
    // The three kinds of unions run one after the other over the whole region, a barrier between
    // them: each walks the trees that the ones before (and their finds' halving) left. Not needed
    // for the result, only for speed (H100, 256^3: with both barriers the tile pass takes 21-27 %
    // less time at 50-90 %, the labeling 9-14 %; a barrier before the bridged pairs gains nothing).
    join_bridged(parents, mask, above, above_node, 0, 1);
    LOCAL_BARRIER();
    join_bridged(parents, mask, front, front_node, 0, 1);
    LOCAL_BARRIER();
    // The runs that need it are found for the whole row at once (by their last bits), so the
    // loop visits only those (a quarter of the runs at 50 %, 2 % at 90 %).
    const uint squares = yy > 0 && zz > 0 ? above & masks[r - REGION_H - 1] : 0;
    for (uint todo = run_ends_meeting(mask, above) & run_ends_meeting(mask, front) &
                     ~run_ends_meeting(mask, front & squares);
         todo != 0; todo &= todo - 1) {
        const uint end = lowest_bit(todo), first = highest_bit(starts & bits_through(end));
        const uint ahead = front & bits_through(end) & (~0u << first);
        union_tile(parents, run_node(starts, end, row_node), run_node(front_starts, lowest_bit(ahead), front_node));
    }
    LOCAL_BARRIER();
    // Every run start is linked to its root (link_to_roots), and the row's roots are noted (bit
    // k: the k-th run start is one).
    uint roots = 0;
    for (k = 0; k < POPCOUNT(starts); k++) {
        const uint i = row_node + k, root = find_halving(parents, i);
        if (root == i)
            roots |= 1u << k;
        else
            ATOMIC_MIN(&parents[i], root + 1);
    }
#if LABEL_BITS != 32
    LOCAL_BARRIER();
#else
    // Whole rows on 16 bytes: written in 16-byte words, and (for raw labels) maybe deferred.
    const int vector_rows = inside && (size_t)L % 16u == 0 && width % 4u == 0;
    // Then every run start's entry becomes its root's label, (raster index of the root's voxel)
    // + 1, as label_roots does it. With `defer` (raw labels), a region of 1 to DEFER_SLOTS
    // roots (counted in roots_found[0]) is deferred instead: each root takes a slot (counting in
    // roots_found[1]) and its entry, and its runs', become the slot + 1; the region writes only
    // its roots' own voxels, each root's voxel in `slots`, each run's slot (a byte per run, 16
    // per row, in `run_slots`) and its count of roots + 1 in `deferred`; tuf_compress_3d then
    // writes all its voxels once, from the row masks and those slots, after the border merge.
    // Its labels are written once instead of twice and read back never: from about 50 %
    // density, where most regions have few roots, that is most of the traffic of passes 1 and
    // 3. A region of many roots (low density) makes no scattered root writes.
    const int may_defer = defer && vector_rows;
    if (may_defer && roots != 0)
        ATOMIC_ADD(&roots_found[0], POPCOUNT(roots));
    LOCAL_BARRIER();
    const uint found = roots_found[0];
    // (A region without foreground is written in pass 1, as zeros, and left alone by pass 3.)
    const int deferring = may_defer && found > 0 && found <= DEFER_SLOTS;
    const uint row_index = (uint)VOXEL_INDEX(x0, y0 + yy, z0 + zz, width, height);
    uint slot = deferring && roots != 0 ? ATOMIC_ADD(&roots_found[1], POPCOUNT(roots)) : 0;
    k = 0;
    for (uint todo = starts; todo != 0; todo &= todo - 1, k++) {
        if (roots >> k & 1u) {
            const uint voxel = row_index + lowest_bit(todo);
            if (deferring) {
                L[voxel] = voxel + 1;
                slots[(index_t)region * DEFER_SLOTS + slot] = voxel + 1;
                parents[row_node + k] = ++slot;
            } else {
                parents[row_node + k] = voxel + 1;
            }
        }
    }
    if (r == 0 && z0 < depth)
        deferred[region] = deferring ? found + 1 : 0;
    LOCAL_BARRIER();
    k = 0;
    for (uint todo = starts; todo != 0; todo &= todo - 1, k++)
        if ((roots >> k & 1u) == 0)
            parents[row_node + k] = parents[parents[row_node + k] - 1];
    LOCAL_BARRIER();
    if (deferring) {
        // Row r's runs' slots, a byte each (runs 0-7, then 8-15).
        ulong low = 0, high = 0;
        k = 0;
        for (uint todo = starts; todo != 0; todo &= todo - 1, k++) {
            const ulong run_slot = parents[row_node + k] - 1;
            if (k < 8)
                low |= run_slot << (8 * k);
            else
                high |= run_slot << (8 * (k - 8));
        }
        run_slots[(index_t)region * REGION_ROWS + r] =
            uint4_of((uint)low, (uint)(low >> 32), (uint)high, (uint)(high >> 32));
        return;
    }
#endif

    // Write: each voxel takes the root of its run's start. With 32-bit labels, a region inside
    // the volume whose rows start on 16 bytes is written in 16-byte words: work-item (lane, warp)
    // writes voxels 4 (lane % 8) .. + 3 of rows 4 warp + lane / 8, + 32, ... (a quarter of the
    // store instructions, and of the index arithmetic). Otherwise voxel `lane` of rows warp,
    // warp + 8, ...
#if LABEL_BITS == 32
    if (vector_rows) {
        const uint q = lane % 8u * 4u;
        for (uint row = warp * 4u + lane / 8u; row < REGION_ROWS; row += warps * 4u)
            *(GLOBAL uint4 *)(L + VOXEL_INDEX(x0 + q, y0 + row % REGION_H, z0 + row / REGION_H, width, height)) =
                quad_labels(parents, masks[row], run_starts(masks[row]), q, row * START_SLOTS);
        return;
    }
#endif
    if (x >= width)
        return;
    for (uint row = warp; row < REGION_ROWS; row += warps) {
        const uint y = y0 + row % REGION_H, z = z0 + row / REGION_H;
        if (y >= height || z >= depth)
            continue;
        const uint m = masks[row];
        label_t label = 0;
        if (m >> lane & 1u) {
            const uint entry = parents[run_node(run_starts(m), lane, row * START_SLOTS)];
#if LABEL_BITS == 32
            label = entry;
#else
            label = node_to_volume(entry - 1, masks, x0, y0, z0, width, height) + 1;
#endif
        }
        L[VOXEL_INDEX(x, y, z, width, height)] = label;
    }
}

// The roots of nodes *a and *b (union_find.h's convention: L[i] = parent + 1), both walks a step
// at a time together, so that their reads overlap: the border merge waits on them, not on
// bandwidth, where images are small. (A walk that has reached its root steps onto itself.)
DEVICE_FN void find_both(GLOBAL const label_t *L, label_t *a, label_t *b)
{
    label_t parent_a = LOAD_LABEL(&L[*a]) - 1, parent_b = LOAD_LABEL(&L[*b]) - 1;
    while (parent_a != *a || parent_b != *b) {
        *a = parent_a;
        *b = parent_b;
        parent_a = LOAD_LABEL(&L[parent_a]) - 1;
        parent_b = LOAD_LABEL(&L[parent_b]) - 1;
    }
}

// union_find.h's union with find_both.
CCL_DEFINE_UNION_BOTH(GLOBAL, both, label_t, find_both)

// union_both that, with `track`, clears the root mark (mark_roots) of each root it hangs under
// another: the marks left are the components' first pixels.
DEVICE_FN void union_tracked(GLOBAL label_t *L, label_t a, label_t b, GLOBAL uint *marks, uint track)
{
    CCL_UNION_LOOP_HOOK(label_t, find_both(L, &a, &b), if (track) ATOMIC_AND(&marks[b / 32u], ~(1u << (b % 32u))))
}

// The node a union of voxel v starts from: v, or where pass 1 deferred v's region (whose voxels
// are unwritten) the root of v's run: the run (its index from the mask of v's row, word `row`
// of the row masks, and v's column), its slot (run_slots) and the slot's root. The region's word
// and the row's slots are read together (with `defer` the buffers cover every region).
DEVICE_FN index_t union_start(index_t v, uint region, index_t row, uint mask, uint column, uint defer,
                              GLOBAL const uint *deferred, GLOBAL const uint *slots, GLOBAL const uint4 *run_slots)
{
#if LABEL_BITS == 32
    if (!defer)
        return v;
    const uint roots = deferred[region];
    const uint4 bytes = run_slots[row];
    if (roots == 0)
        return v;
    const uint k = POPCOUNT(run_starts(mask) & bits_through(column)) - 1u;
    return slots[(index_t)region * DEFER_SLOTS + run_slot(bytes, k)] - 1;
#else
    (void)region;
    (void)row;
    (void)mask;
    (void)column;
    (void)defer;
    (void)deferred;
    (void)slots;
    (void)run_slots;
    return v;
#endif
}

// The bits of a row's voxels 0, FACE_ROW_LANES, 2 FACE_ROW_LANES, ... (FACE_ROW_LANES: 1, 2, 4,
// 8, 16 or 32, a define).
#define FACE_LANE_BITS (0xFFFFFFFFu / ((1u << (FACE_ROW_LANES - 1)) * 2u - 1u))
// Pass 2 on volumes, over the regions' faces, from the row masks pass 1 wrote (`row_masks`, at
// mask_word). First one work-item per voxel b just after a face x = 32k (k >= 1; ordered by y,
// then z, then k): b joins the voxel across (mid), unless the voxel before b along the face, in
// b's region (prev: y - 1), and the one across from it (before) are both foreground: then b and
// prev, mid and before, are joined in their regions, and prev to before by prev's own merge
// (border_joins, as 4-connectivity). Then FACE_ROW_LANES work-items per row of 32 voxels just
// after a face y = REGION_H m or z = REGION_D n (m, n >= 1; ordered by region along x first):
// the same rule along the row is a union at the start of each run of voxels foreground on both
// sides (mask & mask across), a row's unions shared by its work-items (see the host's
// FACE_ROW_LANES for the measurements). A region with a union on a face is marked in `dirty`
// (one word per region, cleared by pass 1): only those have labels to compress. A union's voxel
// in a region pass 1 deferred (`defer`) starts from its run's root instead (union_start).
KERNEL void tuf_border_merge_3d(GLOBAL label_t *L, GLOBAL const uint *row_masks, GLOBAL uint *dirty, uint width,
                                uint height, uint depth, uint across_x, uint across_y, uint total, uint defer,
                                GLOBAL const uint *deferred, GLOBAL const uint *slots, GLOBAL const uint4 *run_slots)
{
    const uint id = GLOBAL_ID_X;
    if (id >= total)
        return;
    const uint across = (width + TILE_W - 1) / TILE_W;
    if (id < across_x) {
        const uint y = id % height, z = id / height % depth, k = id / height / depth + 1;
        // b's row; mid's is the same row of the region before (REGION_ROWS words before).
        const index_t word = mask_word(k * TILE_W, y, z, width, height);
        const uint mask = row_masks[word], mid_mask = row_masks[word - REGION_ROWS];
        if ((mask & 1u) == 0 || mid_mask >> 31 == 0)
            return; // b or mid is background
        const int prev_in = y % REGION_H != 0; // prev, before: the rows above (a word before)
        const int prev = prev_in && (row_masks[word - 1] & 1u) != 0;
        const int before = prev_in && row_masks[word - REGION_ROWS - 1] >> 31 != 0;
        if (border_joins(prev, 1, before, 0, prev_in, 0) & JOIN_MID) {
            const index_t b = VOXEL_INDEX(k * TILE_W, y, z, width, height);
            const uint region = region_of(k * TILE_W, y, z, width, height);
            union_both(L, union_start(b, region, word, mask, 0, defer, deferred, slots, run_slots),
                       union_start(b - 1, region - 1, word - REGION_ROWS, mid_mask, TILE_W - 1, defer, deferred,
                                   slots, run_slots));
            STORE_RELAXED(&dirty[region], 1u);
            STORE_RELAXED(&dirty[region - 1], 1u);
        }
        return;
    }
    // FACE_ROW_LANES work-items per row of 32 voxels across a y or z face (from the first
    // multiple of 32 after the x faces' work-items), lane `lane` on voxels lane, lane +
    // FACE_ROW_LANES, ...
    const uint rows_from = (across_x + 31u) / 32u * 32u;
    if (id < rows_from)
        return;
    const uint j = (id - rows_from) / FACE_ROW_LANES, lane = (id - rows_from) % FACE_ROW_LANES;
    const uint x = j % across * TILE_W;
    const int along_y = j < across_y; // a face y = REGION_H m (else z = REGION_D n)
    uint y, z;
    if (along_y) {
        const uint faces = (height - 1) / REGION_H;
        y = (j / across % faces + 1) * REGION_H;
        z = j / across / faces;
    } else {
        const uint k = j - across_y;
        y = k / across % height;
        z = (k / across / height + 1) * REGION_D;
    }
    // The rows across the face: one row up, or one slice to the front.
    const uint y_mid = along_y ? y - 1 : y, z_mid = along_y ? z : z - 1;
    const index_t word = mask_word(x, y, z, width, height), mid_word = mask_word(x, y_mid, z_mid, width, height);
    const uint mask = row_masks[word], mid_mask = row_masks[mid_word];
    const uint joins = run_starts(mask & mid_mask);
    if (joins == 0)
        return;
    const uint region = region_of(x, y, z, width, height), mid_region = region_of(x, y_mid, z_mid, width, height);
    for (uint mine = joins & (FACE_LANE_BITS << lane); mine != 0; mine &= mine - 1u) {
        const uint c = lowest_bit(mine);
        union_both(L,
                   union_start(VOXEL_INDEX(x + c, y, z, width, height), region, word, mask, c, defer, deferred,
                               slots, run_slots),
                   union_start(VOXEL_INDEX(x + c, y_mid, z_mid, width, height), mid_region, mid_word, mid_mask, c,
                               defer, deferred, slots, run_slots));
    }
    if (lane == 0) {
        STORE_RELAXED(&dirty[region], 1u);
        STORE_RELAXED(&dirty[mid_region], 1u);
    }
}

// Pass 2, one work-item per pixel b just after the border of a region that pass 1 labeled
// (`region_w` x 32 pixels: a work-group's tiles): first the vertical borders (b in column
// region_w * k, k >= 1, for every row), then the horizontal ones (b in row TILE_H * m, m >= 1,
// for every column). b joins its foreground neighbours across the border, unless the previous
// pixel along the border (in the same region) is foreground and already joined to them; a
// region's first pixel along a border makes all its unions, so each skip rests on the region's
// labeling and on the previous pixel of the same border.
// A batch of images stacked along the rows (`item_height` rows each, a multiple of TILE_H; the
// height for one image) is labeled as one: no pair across the border between two items is
// joined, so each item's components stay its own.
// In a multi-label image "foreground" reads "joins b" (JOINS: equal to b's value) throughout: the
// skips rest on the same joins among the pixels of b's value.
KERNEL void tuf_border_merge_2d(GLOBAL const pixel_t *img, GLOBAL label_t *L, uint width, uint height, uint region_w,
                             uint vertical, uint total, GLOBAL uint *marks, uint track, uint item_height)
{
    const uint id = GLOBAL_ID_X;
    LET_NEXT_KERNEL_START(); // (pass 3 waits for this kernel before it reads labels)
    if (id >= total)
        return;
    // The host may launch this kernel while pass 1 ends (Gpu::launch_overlapping): the image,
    // written before pass 1, is read at once, and the labels once pass 1 has finished.
    if (id < vertical) {
        // b = (x, y), x = region_w * k: neighbours W, NW, SW in column x - 1; previous pixel: up.
        const uint y = id % height, x = (id / height + 1) * region_w;
        const index_t b = PIXEL_INDEX(x, y, width);
        // (Every read at once, before b is tested: one wait instead of two.) The rows above and
        // below within b's item only.
        const int first_row = y % item_height == 0, last_row = (y + 1) % item_height == 0;
        const pixel_t centre = img[b], west = img[b - 1];
        const pixel_t north_west = !first_row ? img[b - width - 1] : BACKGROUND;
        const pixel_t north = !first_row ? img[b - width] : BACKGROUND;
        const pixel_t south_west = CONNECTIVITY == 8 && !last_row ? img[b + width - 1] : BACKGROUND;
        if (!FG(centre))
            return;
        WAIT_FOR_PREVIOUS_KERNEL();
        const int w = JOINS(centre, west), nw = JOINS(centre, north_west), up = JOINS(centre, north);
        const int sw = JOINS(centre, south_west);
        const uint joins = border_joins(up, w, nw, sw, y % TILE_H != 0, (y + 1) % TILE_H != 0);
        if (joins & JOIN_MID)
            union_tracked(L, b, b - 1, marks, track);
        if (joins & JOIN_BEFORE)
            union_tracked(L, b, b - width - 1, marks, track);
        if (joins & JOIN_AFTER)
            union_tracked(L, b, b + width - 1, marks, track);
    } else {
        // b = (x, y), y = TILE_H * m: neighbours N, NW, NE in row y - 1; previous pixel: left.
        const uint j = id - vertical;
        const uint x = j % width, y = (j / width + 1) * TILE_H;
        if (y % item_height == 0)
            return; // the border between two items of a batch
        const index_t b = PIXEL_INDEX(x, y, width);
        const pixel_t centre = img[b], north = img[b - width];
        const pixel_t north_west = x > 0 ? img[b - width - 1] : BACKGROUND, west = x > 0 ? img[b - 1] : BACKGROUND;
        const pixel_t north_east = CONNECTIVITY == 8 && x + 1 < width ? img[b - width + 1] : BACKGROUND;
        if (!FG(centre))
            return;
        WAIT_FOR_PREVIOUS_KERNEL();
        const int n = JOINS(centre, north), nw = JOINS(centre, north_west), left = JOINS(centre, west);
        const int ne = JOINS(centre, north_east);
        const uint joins = border_joins(left, n, nw, ne, x % region_w != 0, (x + 1) % region_w != 0);
        if (joins & JOIN_MID)
            union_tracked(L, b, b - width, marks, track);
        if (joins & JOIN_BEFORE)
            union_tracked(L, b, b - width - 1, marks, track);
        if (joins & JOIN_AFTER)
            union_tracked(L, b, b - width + 1, marks, track);
    }
}

#if MULTILABEL
// Pass 2 of a multi-label volume (6-connectivity), labeled as the image of its slices stacked
// along the rows (passes 1 and 2 of images, no pair joined across two slices): each voxel b of
// slices 1, 2, ... joins the voxel in front of it (z - 1) where their values are equal, unless
// the voxel before b along its row is of b's value and so is the one in front of that: then b is
// joined to it in b's slice, it to the voxel in front of it (by its own union, or for the same
// reason), and that one to b's in the slice in front (border_joins at 4-connectivity, along
// rows). A work-item per voxel of those slices (`total`: all their voxels; `slice_pixels` a
// slice's).
KERNEL void tuf_slice_merge(GLOBAL const pixel_t *img, GLOBAL label_t *L, uint width, uint slice_pixels, uint total)
{
    const uint id = GLOBAL_ID_X;
    if (id >= total)
        return;
    const index_t b = (index_t)slice_pixels + id, front = b - slice_pixels;
    const uint x = (uint)(b % width);
    const pixel_t centre = img[b];
    if (!FG(centre) || !JOINS(centre, img[front]))
        return;
    if (x > 0 && JOINS(centre, img[b - 1]) && JOINS(centre, img[front - 1]))
        return;
    union_both(L, b, front);
}
#endif

// Pass 3, Compression: each pixel's label, its local root, is replaced by that root's root,
// found from the local root (one step fewer than from the pixel). A pixel written meanwhile
// holds its component's root + 1, still a valid parent for a find through it. (Telling
// background from the input instead, a byte read instead of a label, was tried: 8-16 % slower at
// 8192^2 on the H100, two dependent reads per pixel.)
//
// The final label of a pixel labeled `label` (0 stays 0).
DEVICE_FN label_t compressed(GLOBAL const label_t *L, label_t label)
{
    return label == 0 ? 0 : find_global(L, label - 1) + 1;
}
// (Other work-items read a pixel's label in their finds while its own work-item writes it, so the
// writes below are relaxed atomic stores, STORE_LABEL and STORE_LABEL4; a work-item reads its own
// pixels with LOAD_OWN_LABEL and LOAD_OWN_LABEL4: no one else writes them.)

// A work-item takes 4 pixels of a row (x = 4 * GLOBAL_ID_X ...; a volume is an image of height
// x depth rows): where they lie on 16 bytes, as one 16-byte word, with one find per run of equal
// labels among them, and written back only if one changed (the whole of every component inside
// one tile is not written again).
DEVICE_FN void compress_quad(GLOBAL label_t *L, index_t i, uint x, uint width)
{
#if LABEL_BITS == 32
    if (x + 4 <= width && (size_t)(L + i) % 16u == 0) {
        GLOBAL uint4 *quad = (GLOBAL uint4 *)(L + i);
        const uint4 old = LOAD_OWN_LABEL4((GLOBAL const uint *)quad);
        uint4 now;
        now.x = compressed(L, old.x);
        now.y = old.y == old.x ? now.x : compressed(L, old.y);
        now.z = old.z == old.y ? now.y : compressed(L, old.z);
        now.w = old.w == old.z ? now.z : compressed(L, old.w);
        if (now.x != old.x || now.y != old.y || now.z != old.z || now.w != old.w)
            STORE_LABEL4((GLOBAL uint *)quad, now);
        return;
    }
#endif
    for (uint k = 0; k < 4 && x + k < width; k++) {
        const label_t label = LOAD_OWN_LABEL(&L[i + k]), root = compressed(L, label);
        if (root != label)
            STORE_LABEL(&L[i + k], root);
    }
}

KERNEL void tuf_compress_2d(GLOBAL label_t *L, uint width, uint height)
{
    WAIT_FOR_PREVIOUS_KERNEL(); // (launched to overlap the border merge, as it may be)
    const uint x = GLOBAL_ID_X * 4, y = GLOBAL_ID_Y;
    if (x >= width || y >= height)
        return;
    compress_quad(L, PIXEL_INDEX(x, y, width), x, width);
}

// Pass 3 fused with consecutive relabeling (src/schedule/relabel.rs): passes 1 and 2 left their
// forest in F (a scratch buffer, not the output), relabel_rank_labels and the scans ranked its roots
// (R, offsets: ranks.h; a span is 2^rank_shift pixels), and every pixel of a quad now takes its
// root's consecutive label (background 0) in L. F is only read, so every walk sees the whole
// forest. A work-item takes 4 pixels of a row, as tuf_compress_2d does, one find and one rank per
// run of equal labels among them, and writes them all (L starts unwritten). In a batch of
// stacked images each item's labels start at 1: `before` is the count of components of the items
// before the pixel's (0 for one image).
DEVICE_FN label_t ranked(GLOBAL const label_t *F, GLOBAL const uint2 *R, GLOBAL const uint *offsets, uint rank_shift,
                         label_t before, label_t label)
{
    if (label == 0)
        return 0;
    const index_t root = find_read_only(F, label - 1);
    return offsets[root >> rank_shift] + rank_in_span(R[root / 32], root) + 1 - before;
}

// The 4 pixels (or voxels) of a row from index i (at column x of a row of `width`): each takes
// its root's consecutive label in L, from the forest F.
DEVICE_FN void ranked_quad(GLOBAL const label_t *F, GLOBAL label_t *L, GLOBAL const uint2 *R,
                           GLOBAL const uint *offsets, uint rank_shift, label_t before, index_t i, uint x, uint width)
{
#if LABEL_BITS == 32
    if (x + 4 <= width && (size_t)(F + i) % 16u == 0 && (size_t)(L + i) % 16u == 0) {
        const uint4 old = *(GLOBAL const uint4 *)(F + i);
        uint4 now;
        now.x = ranked(F, R, offsets, rank_shift, before, old.x);
        now.y = old.y == old.x ? now.x : ranked(F, R, offsets, rank_shift, before, old.y);
        now.z = old.z == old.y ? now.y : ranked(F, R, offsets, rank_shift, before, old.z);
        now.w = old.w == old.z ? now.z : ranked(F, R, offsets, rank_shift, before, old.w);
        *(GLOBAL uint4 *)(L + i) = now;
        return;
    }
#endif
    for (uint k = 0; k < 4 && x + k < width; k++)
        L[i + k] = ranked(F, R, offsets, rank_shift, before, F[i + k]);
}

// For a batch of images stacked along the rows (item_height rows each, else 0), item_offsets
// holds the count of components before each item (tuf_item_offsets).
KERNEL void tuf_compress_ranked_2d(GLOBAL const label_t *F, GLOBAL label_t *L, GLOBAL const uint2 *R,
                                GLOBAL const uint *offsets, uint width, uint height, uint rank_shift,
                                GLOBAL const uint *item_offsets, uint item_height)
{
    const uint x = GLOBAL_ID_X * 4, y = GLOBAL_ID_Y;
    WAIT_FOR_PREVIOUS_KERNEL(); // (launched to overlap the relabeling's last scan, as it may be)
    LET_NEXT_KERNEL_START();
    if (x >= width || y >= height)
        return;
    const label_t before = item_height != 0 ? item_offsets[y / item_height] : 0;
    ranked_quad(F, L, R, offsets, rank_shift, before, PIXEL_INDEX(x, y, width), x, width);
}

// A batch of `items` images stacked along the rows, `item_pixels` pixels each (a multiple of
// 32): item_offsets[k] becomes the count of components of the items before item k, the count of
// first pixels before its first pixel (from the rank tables, as `ranked` counts them), and
// item_offsets[items] the batch's, N (`total`). Item k's count is item_offsets[k + 1] -
// item_offsets[k].
KERNEL void tuf_item_offsets(GLOBAL const uint2 *R, GLOBAL const uint *offsets, GLOBAL const uint *total,
                             GLOBAL uint *item_offsets, uint item_pixels, uint items, uint rank_shift)
{
    const uint k = GLOBAL_ID_X;
    WAIT_FOR_PREVIOUS_KERNEL(); // (launched to overlap the relabeling's last scan, as it may be)
    LET_NEXT_KERNEL_START();
    if (k > items)
        return;
    if (k == items) {
        item_offsets[k] = total[0];
        return;
    }
    const index_t first = (index_t)k * item_pixels;
    item_offsets[k] = offsets[first >> rank_shift] + rank_in_span(R[first / 32], first);
}

// Pass 3 on volumes, one work-group of 32 x 8 work-items per region (as pass 1's groups):
// - a region pass 1 deferred (`deferred`: its roots' count + 1) has every voxel written here,
//   once: its roots' final labels first (a find each, into local memory), then each voxel its
//   run's slot's, from the row masks and `run_slots`;
// - any other: tuf_compress_2d's, on the regions that a union on a face reached (`dirty`) only (in
//   the others every region-local root is a root).
// Work-item (lane, warp) takes quad lane % 8 of row lane / 8 of each 4 rows from row 4 warp on,
// 32 rows apart.
KERNEL void tuf_compress_3d(GLOBAL label_t *L, GLOBAL const uint *dirty, uint width, uint height, uint depth,
                            GLOBAL const uint *deferred, GLOBAL const uint *slots, GLOBAL const uint4 *run_slots,
                            GLOBAL const uint *row_masks)
{
    LOCAL_ARRAY(uint, finals, DEFER_SLOTS);
    LOCAL_ARRAY(uint, masks, REGION_ROWS);
    LOCAL_ARRAY(uint4, row_slots, REGION_ROWS);
    const volume_region g = group_region(width, height);
    const uint lane = LOCAL_ID_X, id = LOCAL_ID_Y * TILE_W + lane;
    // A region pass 1 deferred (every one of them: its voxels are unwritten): its roots' final
    // labels first, a find each, into `finals`, while its rows' masks and slots are copied into
    // local memory alongside (so the writes below wait on no load; no return before the barrier:
    // POCL).
    const uint roots = g.z0 < depth ? deferred[g.index] : 0; // count + 1, or 0
    if (roots != 0) {
        masks[id] = row_masks[(index_t)g.index * REGION_ROWS + id];
        row_slots[id] = run_slots[(index_t)g.index * REGION_ROWS + id];
        if (id + 1 < roots)
            finals[id] = compressed(L, slots[(index_t)g.index * DEFER_SLOTS + id]);
    }
    LOCAL_BARRIER();
    if (roots != 0) {
        // Then every voxel, 4 of a row per work-item (a region inside the volume, rows on 16
        // bytes): its run's slot's final label, or 0.
        const uint q = lane % 8u * 4u;
        for (uint r = LOCAL_ID_Y * 4 + lane / 8; r < REGION_ROWS; r += 32) {
            const uint m = masks[r] >> q;
            const uint4 bytes = row_slots[r];
            uint run[4], w[4];
            quad_runs(run_starts(masks[r]), q, run);
            for (uint b = 0; b < 4u; b++)
                w[b] = m >> b & 1u ? finals[run_slot(bytes, run[b])] : 0u;
            // (Relaxed atomic stores: the region's roots are on other regions' find paths.)
            STORE_LABEL4((GLOBAL uint *)(L + VOXEL_INDEX(g.x0 + q, g.y0 + r % REGION_H, g.z0 + r / REGION_H, width,
                                                         height)),
                         uint4_of(w[0], w[1], w[2], w[3]));
        }
    } else if (g.z0 < depth && dirty[g.index] != 0) {
        const uint x = g.x0 + lane % 8 * 4;
        for (uint r = LOCAL_ID_Y * 4 + lane / 8; r < REGION_ROWS && x < width; r += 32) {
            const uint y = g.y0 + r % REGION_H, z = g.z0 + r / REGION_H;
            if (y < height && z < depth)
                compress_quad(L, VOXEL_INDEX(x, y, z, width, height), x, width);
        }
    }
}

// tuf_compress_ranked_2d on volumes: every region (not only those a face union reached: every voxel
// is written), its quads taken as tuf_compress_3d takes them.
KERNEL void tuf_compress_ranked_3d(GLOBAL const label_t *F, GLOBAL label_t *L, GLOBAL const uint2 *R,
                                   GLOBAL const uint *offsets, uint width, uint height, uint depth, uint rank_shift)
{
    const volume_region g = group_region(width, height);
    if (g.z0 >= depth)
        return;
    const uint x = g.x0 + LOCAL_ID_X % 8 * 4;
    if (x >= width)
        return;
    for (uint r = LOCAL_ID_Y * 4 + LOCAL_ID_X / 8; r < REGION_ROWS; r += 32) {
        const uint y = g.y0 + r % REGION_H, z = g.z0 + r / REGION_H;
        if (y < height && z < depth)
            ranked_quad(F, L, R, offsets, rank_shift, 0, VOXEL_INDEX(x, y, z, width, height), x, width);
    }
}

