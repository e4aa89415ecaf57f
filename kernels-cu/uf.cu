// GENERATED from kernels-cu/prelude.cuh and kernels/{common.h, union_find.h, compress.kernel, neighbours.h, uf.kernel}: edit those, then run
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

// ---- uf.kernel
// UF: union-find labeling of Oliveira & Lotufo (SIBGRAPI 2010), as described in TPDS 2020
// Sec. 4.1 and IPAS 2018 Sec. II-A (Alg. 1, 2), with the IPAS 2018 8-connectivity extension:
// a foreground pixel is joined with each of its foreground backward neighbours W, N (4) and
// NW, NE (8).
//
// As in the original, the image is first labeled tile by tile in local memory, then the unions
// across tile borders are done in global memory, then every tree is flattened (Compression).
// Raw labels: each component gets (raster index of its first pixel) + 1; background is 0.
//
// Volumes (TPDS 2020 Sec. 5.3 extends the algorithms to 3D): built with DIMS=3 the same phases
// run on TILE_W x TILE_H x TILE_D tiles of voxels, joining each foreground voxel with its
// foreground backward neighbours among the 26 around it: the 3 face ones (6-connectivity), 6
// more edge ones (18) and 4 more corner ones (26). An image is a volume of depth 1.
//
// Multi-label images (built with MULTILABEL=1, see common.h): the elements are values, and a pair
// of neighbours is joined only where their values are equal (JOINS), which union-find takes as it
// is: nothing else changes. The tiles keep each element's value in local memory, not a flag.
//
// Build-time defines: CONNECTIVITY (4 or 8; with DIMS=3: 6, 18 or 26), TILE_W, TILE_H (and
// TILE_D) (the work-group size), INLINE_COMPRESSION (1 for UF_IC), MULTILABEL, PIXEL_BYTES and
// BACKGROUND_HI/LO (common.h).

#if DIMS == 3

// The backward neighbours of a voxel: neighbour_offset and is_neighbour in neighbours.h.

// Phase 1, one work-group per TILE_W x TILE_H x TILE_D tile: union-find in local memory over the
// voxel pairs whose both ends lie in the tile, then each voxel stores the global index + 1 of its
// tile-local root.
KERNEL void uf_local_merge(GLOBAL const pixel_t *img, GLOBAL label_t *L, uint width, uint height, uint depth)
{
    LOCAL_ARRAY(uint, tile_labels, TILE_W * TILE_H * TILE_D);
    LOCAL_ARRAY(pixel_t, tile_values, TILE_W * TILE_H * TILE_D);

    const int lx = (int)LOCAL_ID_X, ly = (int)LOCAL_ID_Y, lz = (int)LOCAL_ID_Z;
    const uint x0 = GROUP_ID_X * TILE_W, y0 = GROUP_ID_Y * TILE_H, z0 = GROUP_ID_Z * TILE_D;
    const uint x = x0 + lx, y = y0 + ly, z = z0 + lz;
    const uint li = ((uint)lz * TILE_H + ly) * TILE_W + lx;
    const int inside = x < width && y < height && z < depth;
    const pixel_t value = inside ? img[VOXEL_INDEX(x, y, z, width, height)] : BACKGROUND;
    const int fg = FG(value);

    tile_values[li] = value;
    tile_labels[li] = fg ? li + 1 : 0;
    LOCAL_BARRIER();

    if (fg) {
        for (int n = 0; n < BACKWARD_NEIGHBOURS; n++) {
            if (!is_neighbour(n))
                continue;
            const int nx = lx + neighbour_offset(n, 0), ny = ly + neighbour_offset(n, 1), nz = lz + neighbour_offset(n, 2);
            if (nx < 0 || ny < 0 || nz < 0 || nx >= TILE_W || ny >= TILE_H)
                continue;
            const uint ni = ((uint)nz * TILE_H + ny) * TILE_W + nx;
            if (JOINS(value, tile_values[ni]))
                union_local(tile_labels, li, ni);
        }
    }
    LOCAL_BARRIER();

    if (inside) {
        label_t label = 0;
        if (fg) {
            const uint root = find_local(tile_labels, li);
            label = VOXEL_INDEX(x0 + root % TILE_W, y0 + root / TILE_W % TILE_H, z0 + root / (TILE_W * TILE_H),
                                width, height) + 1;
        }
        L[VOXEL_INDEX(x, y, z, width, height)] = label;
    }
}

// Phase 2: unions of the voxel pairs that cross a tile border, in global memory: each foreground
// voxel joins its foreground backward neighbours that lie in another tile. Launched over the
// tiles as phase 1 is, so a voxel's place in its tile is its place in its work-group (see the
// image version for why not x % TILE_W).
KERNEL void uf_border_merge(GLOBAL const pixel_t *img, GLOBAL label_t *L, uint width, uint height, uint depth)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y, z = GLOBAL_ID_Z;
    if (x >= width || y >= height || z >= depth)
        return;
    const int lx = (int)LOCAL_ID_X, ly = (int)LOCAL_ID_Y, lz = (int)LOCAL_ID_Z;
#if CONNECTIVITY == 6
    if (lx != 0 && ly != 0 && lz != 0)
        return;
#else
    if (lx != 0 && ly != 0 && lz != 0 && lx != TILE_W - 1 && ly != TILE_H - 1)
        return;
#endif
    const index_t i = VOXEL_INDEX(x, y, z, width, height);
    const pixel_t value = img[i];
    if (!FG(value))
        return;
    for (int n = 0; n < BACKWARD_NEIGHBOURS; n++) {
        if (!is_neighbour(n))
            continue;
        const int dx = neighbour_offset(n, 0), dy = neighbour_offset(n, 1), dz = neighbour_offset(n, 2);
        const int tx = lx + dx, ty = ly + dy, tz = lz + dz;
        if (tx >= 0 && ty >= 0 && tz >= 0 && tx < TILE_W && ty < TILE_H)
            continue; // inside the tile: joined in phase 1
        const long nx = (long)x + dx, ny = (long)y + dy, nz = (long)z + dz;
        if (nx < 0 || ny < 0 || nz < 0 || nx >= width || ny >= height)
            continue;
        const index_t j = VOXEL_INDEX(nx, ny, nz, width, height);
        if (JOINS(value, img[j]))
            union_global(L, i, j);
    }
}

#else

// Phase 1, one work-group per TILE_W x TILE_H tile: union-find in local memory over the pixel
// pairs whose both ends lie in the tile, then each pixel stores the global index + 1 of its
// tile-local root (the tile's initialization of L).
KERNEL void uf_local_merge(GLOBAL const pixel_t *img, GLOBAL label_t *L, uint width, uint height, uint depth)
{
    LOCAL_ARRAY(uint, tile_labels, TILE_W * TILE_H);
    LOCAL_ARRAY(pixel_t, tile_values, TILE_W * TILE_H);

    const uint lx = LOCAL_ID_X, ly = LOCAL_ID_Y;
    const uint x0 = GROUP_ID_X * TILE_W, y0 = GROUP_ID_Y * TILE_H;
    const uint x = x0 + lx, y = y0 + ly;
    const uint li = ly * TILE_W + lx;
    const int inside = x < width && y < height;
    const pixel_t value = inside ? img[PIXEL_INDEX(x, y, width)] : BACKGROUND;
    const int fg = FG(value);

    tile_values[li] = value;
    tile_labels[li] = fg ? li + 1 : 0;
    LOCAL_BARRIER();

    if (fg) {
        if (lx > 0 && JOINS(value, tile_values[li - 1]))
            union_local(tile_labels, li, li - 1);
        if (ly > 0 && JOINS(value, tile_values[li - TILE_W]))
            union_local(tile_labels, li, li - TILE_W);
#if CONNECTIVITY == 8
        if (lx > 0 && ly > 0 && JOINS(value, tile_values[li - TILE_W - 1]))
            union_local(tile_labels, li, li - TILE_W - 1);
        if (lx + 1 < TILE_W && ly > 0 && JOINS(value, tile_values[li - TILE_W + 1]))
            union_local(tile_labels, li, li - TILE_W + 1);
#endif
    }
    LOCAL_BARRIER();

    if (inside) {
        label_t label = 0;
        if (fg) {
            const uint root = find_local(tile_labels, li);
            label = PIXEL_INDEX(x0 + root % TILE_W, y0 + root / TILE_W, width) + 1;
        }
        L[PIXEL_INDEX(x, y, width)] = label;
    }
}

// Phase 2: unions of the pixel pairs that cross a tile border, in global memory. Only threads
// on the first row, first column or (8-connectivity) last column of a tile have such pairs.
// Launched over the tiles as phase 1 is: a pixel's column and row in its tile are its work-item's
// in its group. (From x % TILE_W, Clang turned the 8-connectivity test below into a switch on
// the low 5 bits of x, an i5, which Oclgrind 21.10 compares whole: it skipped the border pixels
// of every tile but the first column of tiles, and UF labeled wrongly there.)
KERNEL void uf_border_merge(GLOBAL const pixel_t *img, GLOBAL label_t *L, uint width, uint height, uint depth)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y;
    if (x >= width || y >= height)
        return;
    const uint lx = LOCAL_ID_X, ly = LOCAL_ID_Y;
#if CONNECTIVITY == 8
    if (lx != 0 && ly != 0 && lx != TILE_W - 1)
        return;
#else
    if (lx != 0 && ly != 0)
        return;
#endif
    const index_t i = PIXEL_INDEX(x, y, width);
    const pixel_t value = img[i];
    if (!FG(value))
        return;

    if (lx == 0 && x > 0 && JOINS(value, img[i - 1]))
        union_global(L, i, i - 1);
    if (ly == 0 && y > 0 && JOINS(value, img[i - width]))
        union_global(L, i, i - width);
#if CONNECTIVITY == 8
    if ((lx == 0 || ly == 0) && x > 0 && y > 0 && JOINS(value, img[i - width - 1]))
        union_global(L, i, i - width - 1);
    if ((lx == TILE_W - 1 || ly == 0) && x + 1 < width && y > 0 && JOINS(value, img[i - width + 1]))
        union_global(L, i, i - width + 1);
#endif
}

#endif

// Phase 3, Compression: `compress_pixels` in kernels/compress.kernel.

