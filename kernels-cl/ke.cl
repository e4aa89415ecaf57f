// GENERATED from kernels-cl/prelude.h and kernels/{common.h, union_find.h, compress.kernel, neighbours.h, ke.kernel}: edit those, then run
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

// ---- neighbours.h
// The 13 voxels before a voxel v among the 26 around it (those before it in raster order), in
// raster order: n = 9 (dz + 1) + 3 (dy + 1) + (dx + 1) for offset (dx, dy, dz), n = 0..12. Under
// CONNECTIVITY 6, 18 or 26 a backward neighbour is one that differs from v in at most 1, 2 or 3
// coordinates (is_neighbour). Offsets are arithmetic rather than a table, so that unrolled loops
// fold them to constants (a table indexed in a loop would live in local memory on CUDA).
// Build-time defines: CONNECTIVITY (6, 18 or 26), DIMS (nothing here without DIMS=3).

#if DIMS == 3

#define BACKWARD_NEIGHBOURS 13

DEVICE_FN int neighbour_offset(int n, int axis)
{
    return (axis == 0 ? n % 3 : (axis == 1 ? n / 3 % 3 : n / 9)) - 1;
}

// Whether backward voxel n is a neighbour under CONNECTIVITY.
DEVICE_FN int is_neighbour(int n)
{
    const int differing = (n % 3 != 1) + (n / 3 % 3 != 1) + (n / 9 != 1);
    return differing <= (CONNECTIVITY == 6 ? 1 : (CONNECTIVITY == 18 ? 2 : 3));
}

// Backward voxel n of voxel (x, y, z), of value `value`, when it is a neighbour, lies inside the
// volume and joins it (JOINS in common.h: foreground, and of an equal value in a multi-label
// image): stores its index in *j and returns 1; else returns 0.
DEVICE_FN int joining_neighbour(GLOBAL const pixel_t *img, pixel_t value, int n, uint x, uint y, uint z, uint width,
                                uint height, index_t *j)
{
    if (!is_neighbour(n))
        return 0;
    const long nx = (long)x + neighbour_offset(n, 0), ny = (long)y + neighbour_offset(n, 1),
               nz = (long)z + neighbour_offset(n, 2);
    if (nx < 0 || ny < 0 || nz < 0 || nx >= width || ny >= height)
        return 0;
    *j = VOXEL_INDEX(nx, ny, nz, width, height);
    return JOINS(value, img[*j]);
}

#endif

// ---- ke.kernel
// KE: Komura Equivalence (Komura 2015; TPDS 2020 Sec. 4.2). 4-connectivity with the reduced
// set of unions of Playne & Hawick 2018; 8-connectivity as IPAS 2018 Sec. III and Alg. 4.
//
// Kernels, in order: ke_init, compress_pixels, ke_reduce, compress_pixels.
// Raw labels: (raster index of the component's first pixel) + 1; background 0.
// Build-time defines: CONNECTIVITY (4 or 8; 6, 18 or 26 with DIMS=3), INLINE_COMPRESSION (1 for
// KE_IC), DIMS (3 for volumes), MULTILABEL, PIXEL_BYTES and BACKGROUND_HI/LO (common.h).
//
// Multi-label images (MULTILABEL=1): a pair joins where both values are equal (JOINS). Every
// argument below that two neighbours of v are already joined through a third element holds
// there too, because equality is transitive: neighbours that each equal v equal each other and
// the element they both touch when it equals v. So the same tests with JOINS(v, w) for FG(w).
//
// Volumes (beyond the papers: YACCLAB has no 3D KE): the same two steps over the backward
// neighbours of neighbours.h. The reduced unions carry over through one argument: by induction on
// the larger index of a pair, every pair of adjacent foreground voxels both before v ends up in
// one tree, whatever v does. So once v is joined with one backward neighbour p
// (at initialization: the smallest), another one q needs no union of its own when it is adjacent
// to a neighbour v is already known joined with; with 6-connectivity no two backward neighbours
// are adjacent, but p and q are joined when the voxel p + q - v they both touch is foreground
// (the 3D form of the 4-connectivity rule below). IPAS 2018's 8-connectivity rule is this rule
// on the four backward neighbours of a pixel.

#if DIMS == 3

// Initialization: a foreground voxel points at its foreground backward neighbour of smallest
// index, or at itself.
KERNEL void ke_init(GLOBAL const pixel_t *img, GLOBAL label_t *L, uint width, uint height, uint depth)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y, z = GLOBAL_ID_Z;
    if (x >= width || y >= height || z >= depth)
        return;
    const index_t i = VOXEL_INDEX(x, y, z, width, height);
    const pixel_t value = img[i];
    if (!FG(value)) {
        L[i] = 0;
        return;
    }
    // Backward voxels come in raster order: the first joining neighbour is the smallest.
    index_t parent = i, j;
#pragma unroll
    for (int n = 0; n < BACKWARD_NEIGHBOURS; n++) {
        if (joining_neighbour(img, value, n, x, y, z, width, height, &j)) {
            parent = j;
            break;
        }
    }
    L[i] = parent + 1;
}

// The backward neighbours adjacent to backward neighbour n (bit m for neighbour m): a constant
// once the caller's loop over n is unrolled.
DEVICE_FN uint touching_neighbours(int n)
{
    uint touching = 0;
#pragma unroll
    for (int m = 0; m < BACKWARD_NEIGHBOURS; m++) {
        int differing = 0, apart = 0;
        for (int axis = 0; axis < 3; axis++) {
            const int d = neighbour_offset(m, axis) - neighbour_offset(n, axis);
            apart |= d < -1 || d > 1;
            differing += d != 0;
        }
        if (m != n && is_neighbour(m) && !apart && differing <= (CONNECTIVITY == 6 ? 1 : (CONNECTIVITY == 18 ? 2 : 3)))
            touching |= 1u << m;
    }
    return touching;
}

// Reduction: v joins each foreground backward neighbour that it is not yet known joined with
// (see the top of this file).
KERNEL void ke_reduce(GLOBAL const pixel_t *img, GLOBAL label_t *L, uint width, uint height, uint depth)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y, z = GLOBAL_ID_Z;
    if (x >= width || y >= height || z >= depth)
        return;
    const index_t i = VOXEL_INDEX(x, y, z, width, height);
    const pixel_t value = img[i];
    if (!FG(value))
        return;
    uint joined = 0; // the backward neighbours v is joined with, or known to be
    index_t j;
#pragma unroll
    for (int n = 0; n < BACKWARD_NEIGHBOURS; n++) {
        if (!joining_neighbour(img, value, n, x, y, z, width, height, &j))
            continue;
        int known = joined == 0; // the first, linked at initialization
#if CONNECTIVITY == 6
        // Face neighbours never touch; m and n are joined when the voxel m + n - v joins v.
        for (int m = 0; m < n && !known; m++) {
            if ((joined >> m) & 1u) {
                const long cx = (long)x + neighbour_offset(m, 0) + neighbour_offset(n, 0);
                const long cy = (long)y + neighbour_offset(m, 1) + neighbour_offset(n, 1);
                const long cz = (long)z + neighbour_offset(m, 2) + neighbour_offset(n, 2);
                known = cx >= 0 && cy >= 0 && cz >= 0 && JOINS(value, img[VOXEL_INDEX(cx, cy, cz, width, height)]);
            }
        }
#else
        known = known || (joined & touching_neighbours(n)) != 0;
#endif
        if (!known)
            union_global(L, i, j);
        joined |= 1u << n;
    }
}

#else

// Initialization (IPAS 2018 Alg. 3, lines 1-10): a foreground pixel points at its foreground
// neighbour of smallest index (8: NW, N, NE, W in that order; 4: N, W), or at itself. This
// already builds trees, so no per-pixel union is needed for these links.
KERNEL void ke_init(GLOBAL const pixel_t *img, GLOBAL label_t *L, uint width, uint height, uint depth)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y;
    if (x >= width || y >= height)
        return;
    const index_t i = PIXEL_INDEX(x, y, width);
    const pixel_t value = img[i];
    if (!FG(value)) {
        L[i] = 0;
        return;
    }
    index_t parent = i;
#if CONNECTIVITY == 8
    if (y > 0 && x > 0 && JOINS(value, img[i - width - 1]))
        parent = i - width - 1;
    else if (y > 0 && JOINS(value, img[i - width]))
        parent = i - width;
    else if (y > 0 && x + 1 < width && JOINS(value, img[i - width + 1]))
        parent = i - width + 1;
    else if (x > 0 && JOINS(value, img[i - 1]))
        parent = i - 1;
#else
    if (y > 0 && JOINS(value, img[i - width]))
        parent = i - width;
    else if (x > 0 && JOINS(value, img[i - 1]))
        parent = i - 1;
#endif
    L[i] = parent + 1;
}

// Reduction: joins the trees that Initialization could not link and that no other pixel will.
// 8 (IPAS 2018 Alg. 4 and Fig. 1): only when N is background, and only in the three
// configurations of (NW, NE, W) where the link chosen at initialization misses a neighbour that
// no other thread sees: NW and NE (init chose NW, NE is not adjacent to it), and NE and W
// without NW (init chose NE, W is not adjacent to it).
// 4 (Playne & Hawick 2018): only when N and W are both foreground and NW is background (with NW
// foreground, W and N are already joined through it).
KERNEL void ke_reduce(GLOBAL const pixel_t *img, GLOBAL label_t *L, uint width, uint height, uint depth)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y;
    if (x >= width || y >= height)
        return;
    const index_t i = PIXEL_INDEX(x, y, width);
    const pixel_t value = img[i];
    if (!FG(value) || y == 0)
        return;
    const int n = JOINS(value, img[i - width]);
    const int nw = x > 0 && JOINS(value, img[i - width - 1]);
#if CONNECTIVITY == 8
    if (n)
        return;
    const int ne = x + 1 < width && JOINS(value, img[i - width + 1]);
    if (ne && nw)
        union_global(L, i, i - width + 1);
    else if (ne && x > 0 && JOINS(value, img[i - 1]))
        union_global(L, i, i - 1);
#else
    if (n && !nw && x > 0 && JOINS(value, img[i - 1]))
        union_global(L, i, i - 1);
#endif
}

#endif

