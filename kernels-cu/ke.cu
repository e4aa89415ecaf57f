// GENERATED from kernels-cu/prelude.cuh and kernels/{common.h, union_find.h, compress.kernel, neighbours.h, ke.kernel}: edit those, then run
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

