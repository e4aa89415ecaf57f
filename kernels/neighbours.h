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
