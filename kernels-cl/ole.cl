// GENERATED from kernels-cl/prelude.h and kernels/{equivalence.h, ole.kernel}: edit those, then run
// `CCL_BLESS=1 cargo test --test kernel_sources`.

// ---- kernels-cl/prelude.h
// OpenCL C dialect prelude: maps the portable kernel vocabulary of kernels/ to OpenCL C 1.2.
#define KERNEL __kernel
#define GLOBAL __global
#define LOCAL __local
#define DEVICE_FN
#define LOCAL_ARRAY(type, name, size) __local type name[size]
#define LOCAL_ID_X ((uint)get_local_id(0))
#define LOCAL_ID_Y ((uint)get_local_id(1))
#define GROUP_ID_X ((uint)get_group_id(0))
#define GROUP_ID_Y ((uint)get_group_id(1))
#define GLOBAL_ID_X ((uint)get_global_id(0))
#define GLOBAL_ID_Y ((uint)get_global_id(1))
#define LOCAL_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define ATOMIC_MIN(p, v) atomic_min((p), (v))

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
// Build-time define: CONNECTIVITY (4 or 8).

// Foreground test: any nonzero pixel value is foreground.
#define FG(v) ((v) != 0)

// The smaller of the running minimum `mn` and label `l`, where `l` == 0 (background) is ignored.
DEVICE_FN uint min_label(uint mn, uint l)
{
    return (l != 0 && l < mn) ? l : mn;
}

// The smallest label among pixel (x, y), labeled `own` (nonzero), and its neighbours: W, E, N, S
// and, with 8-connectivity, NW, NE, SW, SE. Background neighbours are labeled 0 and so ignored.
DEVICE_FN uint min_neighbour_label(GLOBAL const uint *L, uint x, uint y, uint width, uint height,
                                   uint own)
{
    const uint i = y * width + x;
    const int west = x > 0, east = x + 1 < width, north = y > 0, south = y + 1 < height;
    uint mn = own;
    if (west)
        mn = min_label(mn, L[i - 1]);
    if (east)
        mn = min_label(mn, L[i + 1]);
    if (north)
        mn = min_label(mn, L[i - width]);
    if (south)
        mn = min_label(mn, L[i + width]);
#if CONNECTIVITY == 8
    if (north && west)
        mn = min_label(mn, L[i - width - 1]);
    if (north && east)
        mn = min_label(mn, L[i - width + 1]);
    if (south && west)
        mn = min_label(mn, L[i + width - 1]);
    if (south && east)
        mn = min_label(mn, L[i + width + 1]);
#endif
    return mn;
}

// The end of the reference chain that starts at `label` (nonzero): follows R[label - 1] until a
// label that refers to itself. Other work-items may lower entries of R meanwhile; every value
// read is still a label of the same component on the same decreasing chain, so the walk ends.
DEVICE_FN uint chain_end(GLOBAL const uint *R, uint label)
{
    uint next = R[label - 1];
    while (next != label) {
        label = next;
        next = R[label - 1];
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
// Build-time define: CONNECTIVITY (4 or 8).

// Initialization: every foreground pixel is its own label.
KERNEL void ole_init(GLOBAL const uchar *img, GLOBAL uint *L, uint width, uint height)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y;
    if (x >= width || y >= height)
        return;
    const uint i = y * width + x;
    L[i] = FG(img[i]) ? i + 1 : 0;
}

// Scan: a foreground pixel that sees a smaller label mn in its neighbourhood lowers the
// representative of its own label to mn. As in the paper this is a plain store, no atomics:
// when pixels of one label race, one of their values survives. Every value stored is a label of
// the same component smaller than the label it replaced at the start of the kernel, so no chain
// grows a cycle and labels never rise across iterations; a lost (smaller) value only costs
// iterations, never correctness, and any store sets `changed`, so the loop goes on.
KERNEL void ole_scan(GLOBAL uint *L, GLOBAL uint *changed, uint width, uint height)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y;
    if (x >= width || y >= height)
        return;
    const uint label = L[y * width + x];
    if (label == 0)
        return;
    const uint mn = min_neighbour_label(L, x, y, width, height, label);
    if (mn < label) {
        L[label - 1] = mn;
        changed[0] = 1;
    }
}

// Analysis with fused labelling: every foreground pixel follows its label's chain of
// representatives to a label that refers to itself, and takes it.
KERNEL void ole_analysis(GLOBAL uint *L, uint width, uint height)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y;
    if (x >= width || y >= height)
        return;
    const uint i = y * width + x;
    const uint label = L[i];
    if (label != 0)
        L[i] = chain_end(L, label);
}

