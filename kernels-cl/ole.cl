// GENERATED from kernels-cl/prelude.h and kernels/{common.h, equivalence.h, ole.kernel}: edit those, then run
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

