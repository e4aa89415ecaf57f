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
