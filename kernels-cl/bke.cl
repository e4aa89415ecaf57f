// GENERATED from kernels-cl/prelude.h and kernels/{common.h, union_find.h, compress.kernel, blocks.h, bke.kernel}: edit those, then run
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

// ---- compress.kernel
// Compression kernels (TPDS 2020 Sec. 2.1: Compress, or InlineCompress when
// INLINE_COMPRESSION=1): every tree is flattened so each node points at its root.

// Pixel algorithms (UF, KE): one work-item per pixel or voxel (an image is one slice, depth
// 1); background (0) is left alone.
KERNEL void compress_pixels(GLOBAL label_t *L, uint width, uint height, uint depth)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y, z = GLOBAL_ID_Z;
    if (x >= width || y >= height || z >= depth)
        return;
    const index_t i = VOXEL_INDEX(x, y, z, width, height);
    if (LOAD_OWN_LABEL(&L[i]) != 0)
        compress_global(L, i);
}

// Block algorithms (BUF, BKE): one work-item per 2x2 block (2x2x2 in a volume); the node of a
// block is its top-left (front top-left) pixel, every block (background ones too) holds a valid
// node there.
KERNEL void compress_blocks(GLOBAL label_t *L, uint width, uint height, uint depth)
{
    const uint x = GLOBAL_ID_X * 2, y = GLOBAL_ID_Y * 2, z = GLOBAL_ID_Z * 2;
    if (x >= width || y >= height || z >= depth)
        return;
    compress_global(L, VOXEL_INDEX(x, y, z, width, height));
}

// ---- blocks.h
// Shared pieces of the block algorithms (BUF, BKE; TPDS 2020 Sec. 5): one work-item per 2x2
// block X whose top-left pixel is (r, c); the union-find node of a block is that pixel's raster
// index, stored (+1) in the output image at that pixel. Built with DIMS=3 (volumes, Sec. 5.3),
// blocks are 2x2x2 cubes instead, see the end of this file.

// The bitset BS over the 4x4 window around X (TPDS 2020 Fig. 7: bit 4*dy + dx, with (0, 0) the
// pixel above-left of X): for every foreground pixel of X, its 3x3 neighbourhood is set (0x777
// for the top-left pixel, shifted 1 for the right column, 4 for the bottom row). The
// bottom-right pixel never touches a backward block, so it is not read. Bits 0-3 and 4, 8 are
// the pixels of the backward blocks P (NW), Q (N), R (NE) and S (W) that may touch X.
DEVICE_FN uint block_bitset(GLOBAL const uchar *img, uint r, uint c, uint width, uint height)
{
    const index_t i = PIXEL_INDEX(c, r, width);
    uint bs = 0;
    if (FG(img[i]))
        bs |= 0x777u;
    if (c + 1 < width && FG(img[i + 1]))
        bs |= 0x777u << 1;
    if (r + 1 < height && FG(img[i + width]))
        bs |= 0x777u << 4;
    return bs;
}

#define HAS_BIT(bs, b) (((bs) >> (b)) & 1u)

// Which backward blocks are connected to X, from BS and the pixels they hold next to X.
#define CONNECTED_P 1u
#define CONNECTED_Q 2u
#define CONNECTED_R 4u
#define CONNECTED_S 8u

DEVICE_FN uint connected_backward_blocks(GLOBAL const uchar *img, uint bs, uint r, uint c, uint width, uint height)
{
    const index_t i = PIXEL_INDEX(c, r, width);
    uint connected = 0;
    if (r > 0) {
        if (c > 0 && HAS_BIT(bs, 0) && FG(img[i - width - 1]))
            connected |= CONNECTED_P;
        if ((HAS_BIT(bs, 1) && FG(img[i - width])) || (c + 1 < width && HAS_BIT(bs, 2) && FG(img[i - width + 1])))
            connected |= CONNECTED_Q;
        if (c + 2 < width && HAS_BIT(bs, 3) && FG(img[i - width + 2]))
            connected |= CONNECTED_R;
    }
    if (c > 0) {
        if ((HAS_BIT(bs, 4) && FG(img[i - 1])) || (r + 1 < height && HAS_BIT(bs, 8) && FG(img[i + width - 1])))
            connected |= CONNECTED_S;
    }
    return connected;
}

// The connected backward blocks X must actually join (a subset of `connected`): a union is left
// out when the neighbour blocks already join each other directly and that pair belongs to an
// earlier block's thread (the block version of IPAS 2018 Fig. 1's delegation). With a = (r-1,
// c-1), b = (r-1, c), b2 = (r-1, c+1), w1 = (r, c-1):
// - when P is joined (P connected implies a): Q touches P through b, R touches Q through b2 (and
//   then Q is joined too), S touches P through w1;
// - when Q is joined first: R touches Q through b2, S touches Q through w1 and b.
// The smallest connected block is always kept (BKE links to it at initialization).
DEVICE_FN uint blocks_to_join(GLOBAL const uchar *img, uint connected, uint r, uint c, uint width)
{
    const index_t i = PIXEL_INDEX(c, r, width);
    if (r == 0 || (connected & (CONNECTED_P | CONNECTED_Q)) == 0)
        return connected;
    const int b = FG(img[i - width]);
    const int b2 = (connected & CONNECTED_R) && FG(img[i - width + 1]); // R connected: c + 2 < width
    const int w1 = c > 0 && FG(img[i - 1]);
    uint join = connected;
    if (connected & CONNECTED_P) {
        if (b)
            join &= ~CONNECTED_Q;
        if (b2)
            join &= ~CONNECTED_R;
        if (w1)
            join &= ~CONNECTED_S;
    } else {
        if (b2)
            join &= ~CONNECTED_R;
        if (w1 && b)
            join &= ~CONNECTED_S;
    }
    return join;
}

#if DIMS == 3

// Volumes (TPDS 2020 Sec. 5.3): X is the 2x2x2 cube of voxels whose front top-left voxel is
// (x, y, z); all its foreground voxels are 26-connected, so they share one label. Its voxels
// are numbered a + 2b + 4c for the voxel (x + a, y + b, z + c).

// The 26 blocks around X are numbered in raster order, n = 9 (bz + 1) + 3 (by + 1) + (bx + 1)
// for the block at block offset (bx, by, bz); the 13 backward ones (before X in raster order,
// the only ones X joins) are exactly n = 0..12, and a smaller n is a smaller node index.
#define BACKWARD_BLOCKS 13

// The node (front top-left voxel) of backward block n of the block at (x, y, z); the caller
// knows it lies inside the volume.
DEVICE_FN index_t backward_block(uint n, uint x, uint y, uint z, uint width, uint height)
{
    const int bx = (int)(n % 3) - 1, by = (int)(n / 3 % 3) - 1, bz = (int)(n / 9) - 1;
    return VOXEL_INDEX((int)x + 2 * bx, (int)y + 2 * by, (int)z + 2 * bz, width, height);
}

// The 4x4x4 window around X (TPDS 2020 Fig. 9) as 64 bits: bit 16 (dz + 1) + 4 (dy + 1) +
// (dx + 1) is the voxel at offset (dx, dy, dz) from (x, y, z), dx, dy, dz in -1..2. The paper's
// bitset BS (the voxels 26-adjacent to a foreground voxel of X) is the dilation of X's
// foreground voxels in this layout (dilate_window).
#define WINDOW_OWN 0x0000066006600000UL // X's eight voxels

// Window masks: the voxels with x = 0 (x = 3) of the window, those with y = 0
// (y = 3).
#define WINDOW_X0 0x1111111111111111UL
#define WINDOW_X3 0x8888888888888888UL
#define WINDOW_Y0 0x000F000F000F000FUL
#define WINDOW_Y3 0xF000F000F000F000UL

// The window voxels of block n (0..26, 13 is X): along each axis, coordinate 0 for offset -1, 1
// and 2 for 0, 3 for +1 (bit r of a 4-bit pattern: coordinate r). No table: loops over n unroll
// to constants (a private array would live in local memory where they do not).
#define ALONG(i) ((i) == 0 ? 0x1u : ((i) == 1 ? 0x6u : 0x8u))
DEVICE_FN ulong block_window(uint n)
{
    const uint ax = ALONG(n % 3), ay = ALONG(n / 3 % 3), az = ALONG(n / 9);
    ulong rows = 0, slices = 0;
#pragma unroll
    for (uint r = 0; r < 4; r++) {
        if ((ay >> r) & 1u)
            rows |= 0xFUL << (4 * r);
        if ((az >> r) & 1u)
            slices |= 0xFFFFUL << (16 * r);
    }
    return (ax * 0x1111111111111111UL) & (rows * 0x0001000100010001UL) & slices;
}

// The voxels of the window within one voxel (26-connectivity) of those in `m`.
DEVICE_FN ulong dilate_window(ulong m)
{
    m |= ((m << 1) & ~WINDOW_X0) | ((m >> 1) & ~WINDOW_X3);
    m |= ((m << 4) & ~WINDOW_Y0) | ((m >> 4) & ~WINDOW_Y3);
    return m | (m << 16) | (m >> 16);
}

// Bit k (k < count) set when voxel (x - 1 + k, y, z) is foreground; voxels outside the volume
// are background. x is inside the volume.
DEVICE_FN uint window_row(GLOBAL const uchar *img, uint x, long y, long z, uint count, uint width, uint height,
                          uint depth)
{
    if (y < 0 || z < 0 || y >= height || z >= depth)
        return 0;
    GLOBAL const uchar *row = img + VOXEL_INDEX(x, y, z, width, height);
    uint bits = (x > 0 && FG(row[-1])) ? 1u : 0u;
    if (FG(row[0]))
        bits |= 2u;
    if (x + 1 < width && FG(row[1]))
        bits |= 4u;
    if (count > 3 && x + 2 < width && FG(row[2]))
        bits |= 8u;
    return bits;
}

// X's foreground voxels and the column dx = -1 before them, in window layout: rows 0 and 1 of
// slices 0 and 1, three voxels each.
DEVICE_FN ulong own_window(GLOBAL const uchar *img, uint x, uint y, uint z, uint width, uint height, uint depth)
{
    ulong window = 0;
#pragma unroll
    for (uint dz = 0; dz < 2; dz++)
#pragma unroll
        for (uint dy = 0; dy < 2; dy++)
            window |= (ulong)window_row(img, x, (long)y + dy, (long)z + dz, 3, width, height, depth)
                      << (16 * (dz + 1) + 4 * (dy + 1));
    return window;
}

// The rest of the window's voxels in backward blocks: the slice dz = -1 (4 rows) and the row dy
// = -1 of slices 0 and 1, four voxels each.
DEVICE_FN ulong backward_rows(GLOBAL const uchar *img, uint x, uint y, uint z, uint width, uint height, uint depth)
{
    ulong window = 0;
#pragma unroll
    for (int dy = -1; dy <= 2; dy++)
        window |= (ulong)window_row(img, x, (long)y + dy, (long)z - 1, 4, width, height, depth) << (4 * (dy + 1));
#pragma unroll
    for (int dz = 0; dz < 2; dz++)
        window |= (ulong)window_row(img, x, (long)y - 1, (long)z + dz, 4, width, height, depth) << (16 * (dz + 1));
    return window;
}

// X's foreground voxels as 8 bits (voxel a + 2b + 4c), from the window.
DEVICE_FN uint window_voxels(ulong window)
{
    return (uint)(((window >> 21) & 0x3UL) | ((window >> 23) & 0xCUL) | ((window >> 33) & 0x30UL) |
                  ((window >> 35) & 0xC0UL));
}

// The backward blocks X must join (bit n for block n), from the window (X's voxels and those of
// its backward blocks; forward ones are not read): those
// holding a foreground voxel 26-adjacent to X's, less those X is known to be joined with
// anyway. The block version of KE's reduced unions (kernels/ke.kernel): by induction on the
// larger node of a pair, two connected blocks both before X end up in one tree; so once X joins
// the smallest connected block, a connected block q needs no union of its own when, inside the
// window, a foreground voxel of q touches one of a block X already joins (or is known joined
// with). At 90 % density this leaves about one union per block instead of twelve.
DEVICE_FN uint blocks_to_join_3d(ulong window)
{
    const ulong touched = window & dilate_window(window & WINDOW_OWN);
    uint join = 0;
    ulong reached = 0; // window voxels of the blocks X is joined with
#pragma unroll
    for (uint n = 0; n < BACKWARD_BLOCKS; n++) {
        const ulong mine = window & block_window(n);
        if ((touched & mine) == 0)
            continue;
        if (join == 0 || (dilate_window(mine) & reached) == 0)
            join |= 1u << n;
        reached |= mine;
    }
    return join;
}

#endif

// ---- bke.kernel
// BKE: Block-based Komura Equivalence (TPDS 2020 Sec. 5.2), 8-connectivity.
//
// Kernels, in order: bke_init, compress_blocks, bke_reduce, compress_blocks, bke_final.
// Raw labels: (raster index of the top-left pixel of the component's first 2x2 block) + 1;
// background 0. Build-time defines: INLINE_COMPRESSION (1 for BKE_IC), DIMS (3 for volumes).
//
// The information byte of a block (TPDS 2020 Table 1): bits 0-3 say which of its pixels
// (top-left, top-right, bottom-left, bottom-right) are foreground; bits 5, 6, 7 say that Q (N),
// R (NE), S (W) are connected to X but were not linked at initialization, so Reduction must
// join them. It lives in the output image (Fig. 8), see info_slot.

#define NO_SLOT ((index_t)-1)

#if DIMS == 3

// Volumes (Sec. 5.3, 26-connectivity): 2x2x2 blocks, and "the information byte used by the 2D
// variation becomes an information integer": bits 0-7 say which of X's voxels are foreground
// (voxel a + 2b + 4c is (x + a, y + b, z + c)), bit 8 + n that backward block n (blocks.h) is
// connected to X but was not linked at initialization. Raw labels: the raster index of the front
// top-left voxel of the component's first block + 1.
#define INFO_UNIONS_SHIFT 8
#define INFO_WORD 0x1FFFFFu

// Where block X keeps its information word: the next voxel of X along x, else along y, else
// along z; for the lone corner voxel of a volume with odd sides, the far corner voxel (never a
// node nor a slot) of the block diagonally before it, when at least two of its coordinates are
// positive; else (1x1xN-like volumes with N odd, 1x1x1 too) NO_SLOT: a separate one-word buffer.
DEVICE_FN index_t info_slot(uint x, uint y, uint z, uint width, uint height, uint depth)
{
    if (x + 1 < width)
        return VOXEL_INDEX(x + 1, y, z, width, height);
    if (y + 1 < height)
        return VOXEL_INDEX(x, y + 1, z, width, height);
    if (z + 1 < depth)
        return VOXEL_INDEX(x, y, z + 1, width, height);
    if ((x > 0) + (y > 0) + (z > 0) >= 2)
        return VOXEL_INDEX(x - (x > 0), y - (y > 0), z - (z > 0), width, height);
    return NO_SLOT;
}

// Initialization: X links to its connected backward block of smallest index and records the
// other ones it must join (blocks_to_join_3d), and its foreground voxels, in its information
// word.
KERNEL void bke_init(GLOBAL const uchar *img, GLOBAL label_t *L, GLOBAL label_t *extra, uint width, uint height,
                     uint depth)
{
    const uint x = GLOBAL_ID_X * 2, y = GLOBAL_ID_Y * 2, z = GLOBAL_ID_Z * 2;
    if (x >= width || y >= height || z >= depth)
        return;
    const index_t i = VOXEL_INDEX(x, y, z, width, height);
    const ulong own = own_window(img, x, y, z, width, height, depth);
    uint info = window_voxels(own);
    index_t parent = i;
    if (info != 0) {
        const uint join = blocks_to_join_3d(own | backward_rows(img, x, y, z, width, height, depth));
        if (join != 0) {
            uint first = 0;
            while (((join >> first) & 1u) == 0)
                first++;
            parent = backward_block(first, x, y, z, width, height);
            info |= (join & ~(1u << first)) << INFO_UNIONS_SHIFT;
        }
    }
    L[i] = parent + 1;
    const index_t slot = info_slot(x, y, z, width, height, depth);
    if (slot == NO_SLOT)
        extra[0] = info;
    else
        L[slot] = info;
}

// Reduction: the unions initialization could not express.
KERNEL void bke_reduce(GLOBAL label_t *L, GLOBAL const label_t *extra, uint width, uint height, uint depth)
{
    const uint x = GLOBAL_ID_X * 2, y = GLOBAL_ID_Y * 2, z = GLOBAL_ID_Z * 2;
    if (x >= width || y >= height || z >= depth)
        return;
    const index_t slot = info_slot(x, y, z, width, height, depth);
    const uint unions = ((uint)(slot == NO_SLOT ? extra[0] : L[slot]) & INFO_WORD) >> INFO_UNIONS_SHIFT;
    if (unions == 0)
        return;
    const index_t i = VOXEL_INDEX(x, y, z, width, height);
    for (uint n = 0; n < BACKWARD_BLOCKS; n++)
        if ((unions >> n) & 1u)
            union_global(L, i, backward_block(n, x, y, z, width, height));
}

// FinalLabeling: the block's label goes to its foreground voxels, known from the information
// word. The lone corner block of a borrowed slot reads its voxel from the volume instead: the
// block owning that slot overwrites it in this same kernel.
KERNEL void bke_final(GLOBAL const uchar *img, GLOBAL label_t *L, GLOBAL const label_t *extra, uint width, uint height,
                      uint depth)
{
    const uint x = GLOBAL_ID_X * 2, y = GLOBAL_ID_Y * 2, z = GLOBAL_ID_Z * 2;
    if (x >= width || y >= height || z >= depth)
        return;
    const index_t i = VOXEL_INDEX(x, y, z, width, height);
    const index_t slot = info_slot(x, y, z, width, height, depth);
    uint voxels;
    if (slot == NO_SLOT)
        voxels = (uint)extra[0];
    else if (x + 1 >= width && y + 1 >= height && z + 1 >= depth)
        voxels = FG(img[i]) ? 1u : 0u;
    else
        voxels = (uint)L[slot];
    const label_t label = L[i];
    for (uint v = 0; v < 8; v++) {
        const uint vx = x + (v & 1u), vy = y + ((v >> 1) & 1u), vz = z + (v >> 2);
        if (vx < width && vy < height && vz < depth)
            L[VOXEL_INDEX(vx, vy, vz, width, height)] = ((voxels >> v) & 1u) ? label : 0;
    }
}

#else

#define INFO_UNION_Q (1u << 5)
#define INFO_UNION_R (1u << 6)
#define INFO_UNION_S (1u << 7)

// Where block X keeps its information byte: its top-right pixel; in the last column of an image
// of odd width, its bottom-left pixel; for the lone corner pixel of an odd x odd image, the
// bottom-right pixel of the block diagonally above-left (unused until FinalLabeling); and for
// 1xN / Nx1 images with N odd (1x1 too) NO_SLOT: a separate one-word buffer.
DEVICE_FN index_t info_slot(uint r, uint c, uint width, uint height)
{
    if (c + 1 < width)
        return PIXEL_INDEX(c + 1, r, width);
    if (r + 1 < height)
        return PIXEL_INDEX(c, r + 1, width);
    if (r > 0 && c > 0)
        return PIXEL_INDEX(c - 1, r - 1, width);
    return NO_SLOT;
}

// Initialization: X links to the connected backward block of smallest index (P < Q < R < S in
// raster order), and records the other connected ones it must join (blocks_to_join) and its
// foreground pixels.
KERNEL void bke_init(GLOBAL const uchar *img, GLOBAL label_t *L, GLOBAL label_t *extra, uint width, uint height,
                     uint depth)
{
    const uint c = GLOBAL_ID_X * 2, r = GLOBAL_ID_Y * 2;
    if (c >= width || r >= height)
        return;
    const index_t i = PIXEL_INDEX(c, r, width);
    uint info = FG(img[i]) ? 1u : 0u;
    if (c + 1 < width && FG(img[i + 1]))
        info |= 2u;
    if (r + 1 < height) {
        if (FG(img[i + width]))
            info |= 4u;
        if (c + 1 < width && FG(img[i + width + 1]))
            info |= 8u;
    }
    index_t parent = i;
    const uint bs = block_bitset(img, r, c, width, height);
    if (bs != 0) {
        const uint connected = blocks_to_join(img, connected_backward_blocks(img, bs, r, c, width, height), r, c, width);
        if (connected & CONNECTED_P)
            parent = i - 2 * width - 2;
        else if (connected & CONNECTED_Q)
            parent = i - 2 * width;
        else if (connected & CONNECTED_R)
            parent = i - 2 * width + 2;
        else if (connected & CONNECTED_S)
            parent = i - 2;
        if ((connected & CONNECTED_Q) && parent != i - 2 * width)
            info |= INFO_UNION_Q;
        if ((connected & CONNECTED_R) && parent != i - 2 * width + 2)
            info |= INFO_UNION_R;
        if ((connected & CONNECTED_S) && parent != i - 2)
            info |= INFO_UNION_S;
    }
    L[i] = parent + 1;
    const index_t slot = info_slot(r, c, width, height);
    if (slot == NO_SLOT)
        extra[0] = info;
    else
        L[slot] = info;
}

// Reduction: the unions initialization could not express.
KERNEL void bke_reduce(GLOBAL label_t *L, GLOBAL const label_t *extra, uint width, uint height, uint depth)
{
    const uint c = GLOBAL_ID_X * 2, r = GLOBAL_ID_Y * 2;
    if (c >= width || r >= height)
        return;
    const index_t slot = info_slot(r, c, width, height);
    // Only the low byte of a borrowed slot is the information byte.
    const uint info = (uint)(slot == NO_SLOT ? extra[0] : L[slot]) & 0xFFu;
    const index_t i = PIXEL_INDEX(c, r, width);
    if (info & INFO_UNION_Q)
        union_global(L, i, i - 2 * width);
    if (info & INFO_UNION_R)
        union_global(L, i, i - 2 * width + 2);
    if (info & INFO_UNION_S)
        union_global(L, i, i - 2);
}

// FinalLabeling: the block's label goes to its foreground pixels, known from the information
// byte. The lone corner block reads its one pixel from the image instead: its byte lives in a
// pixel that the block above-left overwrites in this same kernel.
KERNEL void bke_final(GLOBAL const uchar *img, GLOBAL label_t *L, GLOBAL const label_t *extra, uint width, uint height,
                      uint depth)
{
    const uint c = GLOBAL_ID_X * 2, r = GLOBAL_ID_Y * 2;
    if (c >= width || r >= height)
        return;
    const index_t i = PIXEL_INDEX(c, r, width);
    const index_t slot = info_slot(r, c, width, height);
    uint info;
    if (slot == NO_SLOT)
        info = (uint)extra[0];
    else if (c + 1 >= width && r + 1 >= height)
        info = FG(img[i]) ? 1u : 0u;
    else
        info = (uint)L[slot];
    const label_t label = L[i];
    L[i] = (info & 1u) ? label : 0;
    if (c + 1 < width)
        L[i + 1] = (info & 2u) ? label : 0;
    if (r + 1 < height) {
        L[i + width] = (info & 4u) ? label : 0;
        if (c + 1 < width)
            L[i + width + 1] = (info & 8u) ? label : 0;
    }
}

#endif

