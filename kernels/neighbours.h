// The backward neighbours of a voxel (those before it in raster order) for the pixel algorithms
// on volumes (UF, KE built with DIMS=3): NEIGHBOURS of them, as offsets (dx, dy, dz), face ones
// first (6-connectivity), then edge ones (CONNECTIVITY >= 18), then corner ones (26).
// Build-time defines: CONNECTIVITY (6, 18 or 26), DIMS (nothing here without DIMS=3).

#if DIMS == 3

#if CONNECTIVITY == 6
#define NEIGHBOURS 3
#elif CONNECTIVITY == 18
#define NEIGHBOURS 9
#else
#define NEIGHBOURS 13
#endif

DEVICE_FN int neighbour_offset(int n, int axis)
{
    // Rows: face (-1,0,0) (0,-1,0) (0,0,-1); edge (-1,-1,0) (1,-1,0) (-1,0,-1) (1,0,-1) (0,-1,-1)
    // (0,1,-1); corner (-1,-1,-1) (1,-1,-1) (-1,1,-1) (1,1,-1).
    const int dx[13] = {-1, 0, 0, -1, 1, -1, 1, 0, 0, -1, 1, -1, 1};
    const int dy[13] = {0, -1, 0, -1, -1, 0, 0, -1, 1, -1, -1, 1, 1};
    const int dz[13] = {0, 0, -1, 0, 0, -1, -1, -1, -1, -1, -1, -1, -1};
    return axis == 0 ? dx[n] : (axis == 1 ? dy[n] : dz[n]);
}

// Backward neighbour n of voxel (x, y, z) when it lies inside the volume and is foreground:
// stores its index in *j and returns 1; else returns 0.
DEVICE_FN int foreground_neighbour(GLOBAL const uchar *img, int n, uint x, uint y, uint z, uint width, uint height,
                                   index_t *j)
{
    const long nx = (long)x + neighbour_offset(n, 0), ny = (long)y + neighbour_offset(n, 1),
               nz = (long)z + neighbour_offset(n, 2);
    if (nx < 0 || ny < 0 || nz < 0 || nx >= width || ny >= height)
        return 0;
    *j = VOXEL_INDEX(nx, ny, nz, width, height);
    return FG(img[*j]);
}

#endif
