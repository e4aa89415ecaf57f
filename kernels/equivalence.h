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
