// Shared pieces of the block algorithms (BUF, BKE; TPDS 2020 Sec. 5): one work-item per 2x2
// block X whose top-left pixel is (r, c); the union-find node of a block is that pixel's raster
// index, stored (+1) in the output image at that pixel.

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
