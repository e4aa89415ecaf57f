// GENERATED from kernels-cu/prelude.cuh and kernels/{common.h, stats.kernel}: edit those, then run
// `CCL_BLESS=1 cargo test --test kernel_sources`.

// ---- kernels-cu/prelude.cuh
// CUDA dialect prelude: maps the portable kernel vocabulary of kernels/ to CUDA C++ (NVRTC).
typedef unsigned char uchar;
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
// atomicMin has unsigned int and unsigned long long overloads: 32- and 64-bit labels alike.
#define ATOMIC_MIN(p, v) atomicMin((p), (v))
#define ATOMIC_MAX(p, v) atomicMax((p), (v))
#define ATOMIC_ADD(p, v) atomicAdd((p), (v))
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
// Single precision reciprocal square root (at most 2 ulp in both dialects' specifications).
#define FRSQRT(x) rsqrtf(x)

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

// ---- stats.kernel
// Component statistics from consecutive labels 1..N (issue 13; what OpenCV's
// connectedComponentsWithStats, NPP's CompressedMarkerLabelsUFInfo and skimage's regionprops
// give): per component its voxel count, bounding box and the sums of its voxels' coordinates (64
// bits, so centroids stay exact on large images), in label order. An image is a volume of one
// slice.
//
// Kernels, in order: stats_init (one work-item per component), stats_accumulate (one work-item
// per SEGMENT voxels of a row); stats_remap keeps a subset of the components. Layout, N entries each: area (uint), box (uint, 6 N: min x, min
// y, min z, max x, max y, max z), sums (ulong, 3 N: x, y, z).
//
// A work-item walks its segment and keeps one component's partial statistics while the labels
// it meets are that component's or background, and adds them to the global entries (atomics)
// when another component starts and at the end: a run of one component costs one set of atomics,
// not one per voxel.
// Build-time defines: SEGMENT (voxels per work-item), INT64_ATOMICS (the preludes' 64-bit add).

// An image (`volume` 0) starts with its z range at 0..0, so that accumulating skips z.
KERNEL void stats_init(GLOBAL uint *area, GLOBAL uint *box, GLOBAL ulong *sums, uint n, uint volume)
{
    const uint k = GLOBAL_ID_X;
    if (k >= n)
        return;
    area[k] = 0;
    for (uint a = 0; a < 3; a++) {
        box[a * n + k] = a == 2 && !volume ? 0u : 0xFFFFFFFFu;
        box[(3 + a) * n + k] = 0;
        sums[a * n + k] = 0;
    }
}

// Adds the partial statistics of component `label` (count voxels of row (y, z), x from `first`
// to `last`, x summing to `sum_x`) to its entries.
// (`volume` 0: an image, whose z entries stay 0.)
DEVICE_FN void stats_flush(GLOBAL uint *area, GLOBAL uint *box, GLOBAL ulong *sums, uint n, label_t label, uint count,
                           uint first, uint last, ulong sum_x, uint y, uint z, int volume)
{
    const uint k = (uint)(label - 1);
    ATOMIC_ADD(&area[k], count);
    ATOMIC_MIN(&box[k], first);
    ATOMIC_MIN(&box[n + k], y);
    ATOMIC_MAX(&box[3 * n + k], last);
    ATOMIC_MAX(&box[4 * n + k], y);
    ATOMIC_ADD64(&sums[k], sum_x);
    ATOMIC_ADD64(&sums[n + k], (ulong)y * count);
    if (volume) {
        ATOMIC_MIN(&box[2 * n + k], z);
        ATOMIC_MAX(&box[5 * n + k], z);
        if (z != 0)
            ATOMIC_ADD64(&sums[2 * n + k], (ulong)z * count);
    }
}

// Rows are numbered through the slices: row r is y = r % height of slice z = r / height, so
// one 2D launch over `rows` = height x depth rows covers a volume.
KERNEL void stats_accumulate(GLOBAL const label_t *L, GLOBAL uint *area, GLOBAL uint *box, GLOBAL ulong *sums,
                             uint width, uint height, uint rows, uint n)
{
    const uint x0 = GLOBAL_ID_X * SEGMENT, r = GLOBAL_ID_Y;
    if (x0 >= width || r >= rows)
        return;
    const uint y = r % height, z = r / height;
    const int volume = rows != height;
    const uint end = x0 + SEGMENT < width ? x0 + SEGMENT : width;
    GLOBAL const label_t *row = L + PIXEL_INDEX(0, r, width);
    label_t current = 0;
    uint count = 0, first = 0, last = 0;
    ulong sum_x = 0;
    for (uint x = x0; x < end; x++) {
        const label_t label = row[x];
        if (label == 0)
            continue;
        if (label != current) {
            if (current != 0)
                stats_flush(area, box, sums, n, current, count, first, last, sum_x, y, z, volume);
            current = label;
            count = 0;
            first = x;
            sum_x = 0;
        }
        count++;
        last = x;
        sum_x += x;
    }
    if (current != 0)
        stats_flush(area, box, sums, n, current, count, first, last, sum_x, y, z, volume);
}

// Keeping some components (by size, or the largest): label l becomes map[l - 1] (0 removes the
// component, the others are renumbered 1..M in label order); background stays 0. One work-item
// per pixel.
KERNEL void stats_remap(GLOBAL label_t *L, GLOBAL const label_t *map, index_t n)
{
    const index_t i = GLOBAL_ID_X;
    if (i >= n)
        return;
    const label_t l = L[i];
    if (l != 0)
        L[i] = map[l - 1];
}

