// GENERATED from kernels-cu/prelude.cuh and kernels/{union_find.h, compress.kernel, ke.kernel}: edit those, then run
// `CCL_BLESS=1 cargo test --test kernel_sources`.

// ---- kernels-cu/prelude.cuh
// CUDA dialect prelude: maps the portable kernel vocabulary of kernels/ to CUDA C++ (NVRTC).
typedef unsigned char uchar;
typedef unsigned int uint;
#define KERNEL extern "C" __global__
#define GLOBAL
#define LOCAL
#define DEVICE_FN __device__ __forceinline__
#define LOCAL_ARRAY(type, name, size) __shared__ type name[size]
#define LOCAL_ID_X threadIdx.x
#define LOCAL_ID_Y threadIdx.y
#define GROUP_ID_X blockIdx.x
#define GROUP_ID_Y blockIdx.y
#define GLOBAL_ID_X (blockIdx.x * blockDim.x + threadIdx.x)
#define GLOBAL_ID_Y (blockIdx.y * blockDim.y + threadIdx.y)
#define LOCAL_BARRIER() __syncthreads()
#define ATOMIC_MIN(p, v) atomicMin((p), (v))

// ---- union_find.h
// Union-find over a label array (TPDS 2020 Sec. 2.1, Alg. 1; IPAS 2018 Alg. 1).
//
// Convention: L[i] holds the index of i's parent plus one, and 0 for background, so node i is a
// root when L[i] == i + 1. Union always hangs the larger root under the smaller one, so the root
// of a finished tree is its smallest index. Block algorithms use the same convention on the
// top-left pixel of each block (the node index is that pixel's raster index).
//
// OpenCL C 1.2 has no generic address space, so the functions are instantiated once for global
// and once for local (shared) memory.

#define CCL_DEFINE_UNION_FIND(SPACE, SUFFIX)                                                     \
    /* Find: the root of the tree holding node i. */                                             \
    DEVICE_FN uint find_##SUFFIX(SPACE const uint *L, uint i)                                    \
    {                                                                                            \
        uint parent = L[i] - 1;                                                                  \
        while (parent != i) {                                                                    \
            i = parent;                                                                          \
            parent = L[i] - 1;                                                                   \
        }                                                                                        \
        return i;                                                                                \
    }                                                                                            \
                                                                                                 \
    /* Union: joins the trees of a and b. atomic_min can lose to a concurrent union: then the */ \
    /* old parent it returns is followed and both roots are found again (IPAS 2018 Alg. 1). */   \
    DEVICE_FN void union_##SUFFIX(SPACE uint *L, uint a, uint b)                                 \
    {                                                                                            \
        for (;;) {                                                                               \
            a = find_##SUFFIX(L, a);                                                             \
            b = find_##SUFFIX(L, b);                                                             \
            if (a == b)                                                                          \
                return;                                                                          \
            if (a > b) {                                                                         \
                uint t = a;                                                                      \
                a = b;                                                                           \
                b = t;                                                                           \
            }                                                                                    \
            uint old = ATOMIC_MIN(&L[b], a + 1);                                                 \
            if (old == b + 1)                                                                    \
                return;                                                                          \
            b = old - 1;                                                                         \
        }                                                                                        \
    }

CCL_DEFINE_UNION_FIND(GLOBAL, global)
CCL_DEFINE_UNION_FIND(LOCAL, local)

// Compress (TPDS 2020 Alg. 1): links node i directly to its root. With INLINE_COMPRESSION=1
// (the _IC variants) it is InlineCompress instead: every step of the walk rewrites i's parent,
// so threads that read i meanwhile already see a shorter path.
DEVICE_FN void compress_global(GLOBAL uint *L, uint i)
{
#if INLINE_COMPRESSION
    const uint start = i;
    uint parent = L[i] - 1;
    while (parent != i) {
        i = parent;
        L[start] = i + 1;
        parent = L[i] - 1;
    }
#else
    L[i] = find_global(L, i) + 1;
#endif
}

// ---- compress.kernel
// Compression kernels (TPDS 2020 Sec. 2.1: Compress, or InlineCompress when
// INLINE_COMPRESSION=1): every tree is flattened so each node points at its root.

// Pixel algorithms (UF, KE): one work-item per pixel; background (0) is left alone.
KERNEL void compress_pixels(GLOBAL uint *L, uint width, uint height)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y;
    if (x >= width || y >= height)
        return;
    const uint i = y * width + x;
    if (L[i] != 0)
        compress_global(L, i);
}

// Block algorithms (BUF, BKE): one work-item per 2x2 block; the node of a block is its top-left
// pixel, every block (background ones too) holds a valid node there.
KERNEL void compress_blocks(GLOBAL uint *L, uint width, uint height)
{
    const uint c = GLOBAL_ID_X * 2, r = GLOBAL_ID_Y * 2;
    if (c >= width || r >= height)
        return;
    compress_global(L, r * width + c);
}

// ---- ke.kernel
// KE: Komura Equivalence (Komura 2015; TPDS 2020 Sec. 4.2). 4-connectivity with the reduced
// set of unions of Playne & Hawick 2018; 8-connectivity as IPAS 2018 Sec. III and Alg. 4.
//
// Kernels, in order: ke_init, compress_pixels, ke_reduce, compress_pixels.
// Raw labels: (raster index of the component's first pixel) + 1; background 0.
// Build-time defines: CONNECTIVITY (4 or 8), INLINE_COMPRESSION (1 for KE_IC).

#define FG(v) ((v) != 0)

// Initialization (IPAS 2018 Alg. 3, lines 1-10): a foreground pixel points at its foreground
// neighbour of smallest index (8: NW, N, NE, W in that order; 4: N, W), or at itself. This
// already builds trees, so no per-pixel union is needed for these links.
KERNEL void ke_init(GLOBAL const uchar *img, GLOBAL uint *L, uint width, uint height)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y;
    if (x >= width || y >= height)
        return;
    const uint i = y * width + x;
    if (!FG(img[i])) {
        L[i] = 0;
        return;
    }
    uint parent = i;
#if CONNECTIVITY == 8
    if (y > 0 && x > 0 && FG(img[i - width - 1]))
        parent = i - width - 1;
    else if (y > 0 && FG(img[i - width]))
        parent = i - width;
    else if (y > 0 && x + 1 < width && FG(img[i - width + 1]))
        parent = i - width + 1;
    else if (x > 0 && FG(img[i - 1]))
        parent = i - 1;
#else
    if (y > 0 && FG(img[i - width]))
        parent = i - width;
    else if (x > 0 && FG(img[i - 1]))
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
KERNEL void ke_reduce(GLOBAL const uchar *img, GLOBAL uint *L, uint width, uint height)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y;
    if (x >= width || y >= height)
        return;
    const uint i = y * width + x;
    if (!FG(img[i]) || y == 0)
        return;
    const int n = FG(img[i - width]);
    const int nw = x > 0 && FG(img[i - width - 1]);
#if CONNECTIVITY == 8
    if (n)
        return;
    const int ne = x + 1 < width && FG(img[i - width + 1]);
    if (ne && nw)
        union_global(L, i, i - width + 1);
    else if (ne && x > 0 && FG(img[i - 1]))
        union_global(L, i, i - 1);
#else
    if (n && !nw && x > 0 && FG(img[i - 1]))
        union_global(L, i, i - 1);
#endif
}

