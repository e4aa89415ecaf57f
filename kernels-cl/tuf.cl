// GENERATED from kernels-cl/prelude.h and kernels/{common.h, union_find.h, compress.kernel, tuf.kernel}: edit those, then run
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
// Atomic bitwise or on a 32-bit word (local or global), the count of set bits of one, and its
// count of leading zero bits (32 for 0).
#define ATOMIC_OR(p, v) atomic_or((p), (v))
#define POPCOUNT(x) popcount((uint)(x))
#define LEADING_ZEROS(x) clz((uint)(x))
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

// Foreground test: any nonzero pixel value is foreground (never `& 1`: inputs of 255 or 2 must
// work).
#define FG(v) ((v) != 0)

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

#define CCL_DEFINE_UNION_FIND(SPACE, SUFFIX, T)                                                  \
    /* Find: the root of the tree holding node i. */                                             \
    DEVICE_FN T find_##SUFFIX(SPACE const T *L, T i)                                             \
    {                                                                                            \
        T parent = L[i] - 1;                                                                     \
        while (parent != i) {                                                                    \
            i = parent;                                                                          \
            parent = L[i] - 1;                                                                   \
        }                                                                                        \
        return i;                                                                                \
    }                                                                                            \
                                                                                                 \
    /* Union: joins the trees of a and b. atomic_min can lose to a concurrent union: then the */ \
    /* old parent it returns is followed and both roots are found again (IPAS 2018 Alg. 1). */   \
    DEVICE_FN void union_##SUFFIX(SPACE T *L, T a, T b)                                          \
    {                                                                                            \
        for (;;) {                                                                               \
            a = find_##SUFFIX(L, a);                                                             \
            b = find_##SUFFIX(L, b);                                                             \
            if (a == b)                                                                          \
                return;                                                                          \
            if (a > b) {                                                                         \
                T t = a;                                                                         \
                a = b;                                                                           \
                b = t;                                                                           \
            }                                                                                    \
            T old = ATOMIC_MIN(&L[b], a + 1);                                                    \
            if (old == b + 1)                                                                    \
                return;                                                                          \
            b = old - 1;                                                                         \
        }                                                                                        \
    }

CCL_DEFINE_UNION_FIND(GLOBAL, global, label_t)
CCL_DEFINE_UNION_FIND(LOCAL, local, uint)

// Compress (TPDS 2020 Alg. 1): links node i directly to its root. With INLINE_COMPRESSION=1
// (the _IC variants) it is InlineCompress instead: every step of the walk rewrites i's parent,
// so threads that read i meanwhile already see a shorter path.
DEVICE_FN void compress_global(GLOBAL label_t *L, index_t i)
{
#if INLINE_COMPRESSION
    const index_t start = i;
    label_t parent = L[i] - 1;
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

// Pixel algorithms (UF, KE): one work-item per pixel or voxel (an image is one slice, depth
// 1); background (0) is left alone.
KERNEL void compress_pixels(GLOBAL label_t *L, uint width, uint height, uint depth)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y, z = GLOBAL_ID_Z;
    if (x >= width || y >= height || z >= depth)
        return;
    const index_t i = VOXEL_INDEX(x, y, z, width, height);
    if (L[i] != 0)
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

// ---- tuf.kernel
// TUF: tiled run union-find, this project's algorithm (beyond the papers; issue 12). The image is
// cut into tiles of 32 columns x TILE_H rows, one work-group each. Three passes:
//
// 1. tuf_tiles (LocalMerge): a tile is labeled in local memory with its rows as 32-bit masks
//    (Playne & Hawick, TPDS 2018, label tiles in shared memory). Only the first pixel of each
//    horizontal run is a union-find node (run starts as in Hennequin et al., DASIP 2018): a run
//    hangs under the first run above that touches it (KE's linking, IPAS 2018 Alg. 4, on runs),
//    pointer jumping flattens those chains, and only the other runs above it touches need a
//    union. Each pixel then stores (global index of its tile-local root) + 1.
// 2. tuf_border_merge (BorderMerge): the pixel pairs across tile borders are joined in global
//    memory (union-find with atomic_min, union_find.h), skipping a pair when the pixel before it
//    along the border, in the same tile, already joins the same pieces.
// 3. compress_pixels (Compression, kernels/compress.kernel): every pixel is linked to its root.
//
// Nodes are numbered so that union-find's "smaller index wins" picks the first pixel in raster
// order: inside a tile by tile-local raster index (which orders like the image's raster index),
// across tiles by the image's raster index. Raw labels: (raster index of the component's first
// pixel) + 1, background 0, as UF.
//
// Build-time defines: CONNECTIVITY (4 or 8), TILE_H (rows per tile, a multiple of 8). The
// work-group is 32 x 8: work-item (lx, ly) holds column lx of rows ly, ly + 8, ... of its tile.

#define TILE_W 32
#define GROUP_ROWS 8
#define ROWS_PER_ITEM (TILE_H / GROUP_ROWS)
#define TILE_PIXELS (TILE_W * TILE_H)

// Bits 0..b of a word (b in 0..31).
DEVICE_FN uint bits_through(uint b)
{
    return (2u << b) - 1u;
}

// Index of the highest set bit of a nonzero word.
DEVICE_FN uint highest_bit(uint w)
{
    return 31u - LEADING_ZEROS(w);
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

// Find with path halving in local memory: each node on the way is linked to its grandparent
// (with atomic_min: parents only ever move to a smaller index, an ancestor, whatever the order of
// concurrent updates), so trees stay shallow while unions go on.
DEVICE_FN uint find_halving(LOCAL uint *parents, uint i)
{
    uint parent = parents[i] - 1;
    while (parent != i) {
        const uint grandparent = parents[parent] - 1;
        if (grandparent != parent)
            ATOMIC_MIN(&parents[i], grandparent + 1);
        i = grandparent;
        parent = parents[i] - 1;
    }
    return i;
}

// Union of the trees of a and b (union_find.h's, with find_halving).
DEVICE_FN void union_halving(LOCAL uint *parents, uint a, uint b)
{
    for (;;) {
        a = find_halving(parents, a);
        b = find_halving(parents, b);
        if (a == b)
            return;
        if (a > b) {
            const uint t = a;
            a = b;
            b = t;
        }
        const uint old = ATOMIC_MIN(&parents[b], a + 1);
        if (old == b + 1)
            return;
        b = old - 1;
    }
}

// A tile's state in local memory while it is labeled.
//   fg_words: one byte per pixel (1 foreground, 0 not), read back 4 at a time;
//   masks: one 32-bit mask per row (bit c: column c is foreground);
//   parents: union-find over run starts, tile-local index + 1 (union_find.h's convention).

// Loads the tile at (x0, y0) into row masks and makes every pixel its own parent; on return
// (after a barrier) the masks are complete.
DEVICE_FN void load_tile(GLOBAL const uchar *img, uint width, uint height, uint x0, uint y0, LOCAL uint *fg_words,
                         LOCAL uint *masks, LOCAL uint *parents)
{
    const uint lx = LOCAL_ID_X, ly = LOCAL_ID_Y;
    const uint x = x0 + lx;
    LOCAL uchar *fg_bytes = (LOCAL uchar *)fg_words;
    for (uint k = 0; k < ROWS_PER_ITEM; k++) {
        const uint r = ly + k * GROUP_ROWS, y = y0 + r;
        fg_bytes[r * TILE_W + lx] = (uchar)(x < width && y < height && FG(img[PIXEL_INDEX(x, y, width)]));
        parents[r * TILE_W + lx] = r * TILE_W + lx + 1;
    }
    const uint t = ly * TILE_W + lx;
    LOCAL_BARRIER();
    // Row t's mask from its 32 bytes, 4 at a time: the multiply gathers a word's four 0/1 bytes
    // (little-endian, as on every OpenCL and CUDA device this runs on) into bits 24..27.
    if (t < TILE_H) {
        uint mask = 0;
        for (uint w = 0; w < TILE_W / 4; w++)
            mask |= ((fg_words[t * (TILE_W / 4) + w] * 0x01020408u) >> 24 & 0xFu) << (4 * w);
        masks[t] = mask;
    }
    LOCAL_BARRIER();
}

// Labels the loaded tile: each run start is joined with the runs above that touch its run (with
// the diagonal neighbours for 8-connectivity), then linked to its root. On return roots[k] holds
// the tile-local root of the work-item's pixel in row ly + 8k (TILE_PIXELS for background).
DEVICE_FN void label_tile(LOCAL const uint *masks, LOCAL uint *parents, uint roots[ROWS_PER_ITEM])
{
    const uint lx = LOCAL_ID_X, ly = LOCAL_ID_Y;
    // Link (as KE's initialization, IPAS 2018 Alg. 4, on runs): each run start hangs under the
    // start of the first run above that touches its run, a plain store to its own node; the
    // other runs above it touches are kept for the unions.
    uint others[ROWS_PER_ITEM];
    for (uint k = 0; k < ROWS_PER_ITEM; k++) {
        const uint r = ly + k * GROUP_ROWS;
        const uint mask = masks[r];
        others[k] = 0;
        if (r == 0 || !(run_starts(mask) >> lx & 1u))
            continue;
        const uint run = run_from(mask, lx);
#if CONNECTIVITY == 8
        const uint span = run | run << 1 | run >> 1;
#else
        const uint span = run;
#endif
        const uint above_mask = masks[r - 1];
        const uint touching = above_mask & span;
        if (touching == 0)
            continue;
        const uint b = highest_bit(touching & (0u - touching));
        parents[r * TILE_W + lx] = (r - 1) * TILE_W + highest_bit(run_starts(above_mask) & bits_through(b)) + 1;
        others[k] = touching & ~run_from(above_mask, b);
    }
    LOCAL_BARRIER();
    // Pointer jumping: the links form chains up the tile, at most TILE_H - 1 long, so log2(TILE_H)
    // rounds of "parent = grandparent" leave every run start pointing at its chain's top (a
    // pixel that is no run start points at itself and stays so).
    for (uint step = 1; step < TILE_H; step <<= 1) {
        uint jumped[ROWS_PER_ITEM];
        for (uint k = 0; k < ROWS_PER_ITEM; k++) {
            const uint i = (ly + k * GROUP_ROWS) * TILE_W + lx;
            jumped[k] = parents[parents[i] - 1];
        }
        LOCAL_BARRIER();
        for (uint k = 0; k < ROWS_PER_ITEM; k++)
            parents[(ly + k * GROUP_ROWS) * TILE_W + lx] = jumped[k];
        LOCAL_BARRIER();
    }
    // Unions with the other runs above.
    for (uint k = 0; k < ROWS_PER_ITEM; k++) {
        const uint r = ly + k * GROUP_ROWS;
        uint touching = others[k];
        if (touching == 0)
            continue;
        const uint above_mask = masks[r - 1];
        const uint above_starts = run_starts(above_mask);
        while (touching != 0) {
            const uint b = highest_bit(touching & (0u - touching));
            const uint start = highest_bit(above_starts & bits_through(b));
            union_halving(parents, r * TILE_W + lx, (r - 1) * TILE_W + start);
            touching &= ~run_from(above_mask, b); // that run above is joined
        }
    }
    LOCAL_BARRIER();
    // Every run start is linked to its root: found first, written after a barrier (no finds
    // race with the writes).
    for (uint k = 0; k < ROWS_PER_ITEM; k++) {
        const uint r = ly + k * GROUP_ROWS, i = r * TILE_W + lx;
        roots[k] = run_starts(masks[r]) >> lx & 1u ? find_halving(parents, i) : TILE_PIXELS;
    }
    LOCAL_BARRIER();
    for (uint k = 0; k < ROWS_PER_ITEM; k++) {
        const uint r = ly + k * GROUP_ROWS;
        if (roots[k] != TILE_PIXELS)
            parents[r * TILE_W + lx] = roots[k] + 1;
    }
    LOCAL_BARRIER();
    for (uint k = 0; k < ROWS_PER_ITEM; k++) {
        const uint r = ly + k * GROUP_ROWS, mask = masks[r];
        roots[k] = TILE_PIXELS;
        if (!(mask >> lx & 1u))
            continue;
        const uint start = highest_bit(run_starts(mask) & bits_through(lx));
        roots[k] = parents[r * TILE_W + start] - 1;
    }
}

// The image's raster index of tile-local index i of the tile at (x0, y0).
DEVICE_FN index_t tile_to_image(uint i, uint x0, uint y0, uint width)
{
    return PIXEL_INDEX(x0 + i % TILE_W, y0 + i / TILE_W, width);
}

// Pass 1: the tile-local labeling; every pixel of the tile stores (global index of its local
// root) + 1, background 0.
KERNEL void tuf_tiles(GLOBAL const uchar *img, GLOBAL label_t *L, uint width, uint height)
{
    LOCAL_ARRAY(uint, fg_words, TILE_PIXELS / 4);
    LOCAL_ARRAY(uint, masks, TILE_H);
    LOCAL_ARRAY(uint, parents, TILE_PIXELS);
    // A group past a folded grid (y0 >= height) sees only background and writes nothing (no
    // early return: POCL mishandles a return before a barrier, even a uniform one).
    const uint x0 = GROUP_ID_X * TILE_W, y0 = GROUP_ID_Y * TILE_H;
    uint roots[ROWS_PER_ITEM];
    load_tile(img, width, height, x0, y0, fg_words, masks, parents);
    label_tile(masks, parents, roots);

    const uint x = x0 + LOCAL_ID_X;
    for (uint k = 0; k < ROWS_PER_ITEM; k++) {
        const uint y = y0 + LOCAL_ID_Y + k * GROUP_ROWS;
        if (x < width && y < height)
            L[PIXEL_INDEX(x, y, width)] = roots[k] == TILE_PIXELS ? 0 : tile_to_image(roots[k], x0, y0, width) + 1;
    }
}

// Pass 2, one work-item per pixel b just after a tile border: first the vertical borders (b in
// column 32k, k >= 1, for every row), then the horizontal ones (b in row TILE_H * m, m >= 1, for
// every column). b joins its foreground neighbours across the border, unless the previous pixel
// along the border (in the same tile) is foreground and already joined to them; a tile's first
// pixel along a border makes all its unions, so each skip rests on the tile's local labeling and
// on the previous pixel of the same border.
KERNEL void tuf_border_merge(GLOBAL const uchar *img, GLOBAL label_t *L, uint width, uint height, uint vertical,
                             uint total)
{
    const uint id = GLOBAL_ID_X;
    if (id >= total)
        return;
    if (id < vertical) {
        // b = (x, y), x = 32k: neighbours W, NW, SW in column x - 1; previous pixel: up.
        const uint y = id % height, x = (id / height + 1) * TILE_W;
        const index_t b = PIXEL_INDEX(x, y, width);
        if (!FG(img[b]))
            return;
        const int w = FG(img[b - 1]);
        const int up_in_tile = y % TILE_H != 0, down_in_tile = (y + 1) % TILE_H != 0;
        const int nw = y > 0 && FG(img[b - width - 1]);
        const int up = y > 0 && FG(img[b - width]);
#if CONNECTIVITY == 8
        const int sw = y + 1 < height && FG(img[b + width - 1]);
        if (up_in_tile && up) {
            // up is joined to NW and W; SW is left unless W reaches it in its tile
            if (sw && !(w && down_in_tile))
                union_global(L, b, b + width - 1);
            return;
        }
        if (w)
            union_global(L, b, b - 1);
        if (nw && !(w && up_in_tile))
            union_global(L, b, b - width - 1);
        if (sw && !(w && down_in_tile))
            union_global(L, b, b + width - 1);
#else
        (void)down_in_tile;
        if (w && !(up_in_tile && up && nw))
            union_global(L, b, b - 1);
#endif
    } else {
        // b = (x, y), y = TILE_H * m: neighbours N, NW, NE in row y - 1; previous pixel: left.
        const uint j = id - vertical;
        const uint x = j % width, y = (j / width + 1) * TILE_H;
        const index_t b = PIXEL_INDEX(x, y, width);
        if (!FG(img[b]))
            return;
        const int n = FG(img[b - width]);
        const int left_in_tile = x % TILE_W != 0, right_in_tile = (x + 1) % TILE_W != 0;
        const int nw = x > 0 && FG(img[b - width - 1]);
        const int left = x > 0 && FG(img[b - 1]);
#if CONNECTIVITY == 8
        const int ne = x + 1 < width && FG(img[b - width + 1]);
        if (left_in_tile && left) {
            // left is joined to NW and N; NE is left unless N reaches it in its tile
            if (ne && !(n && right_in_tile))
                union_global(L, b, b - width + 1);
            return;
        }
        if (n)
            union_global(L, b, b - width);
        if (nw && !(n && left_in_tile))
            union_global(L, b, b - width - 1);
        if (ne && !(n && right_in_tile))
            union_global(L, b, b - width + 1);
#else
        (void)right_in_tile;
        if (n && !(left_in_tile && left && nw))
            union_global(L, b, b - width);
#endif
    }
}

// Pass 3, Compression: `compress_pixels` in kernels/compress.kernel.

