// GENERATED from kernels-cu/prelude.cuh and kernels/{common.h, equivalence.h, blocks.h, be.kernel}: edit those, then run
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

// ---- blocks.h
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

// ---- be.kernel
// BE: Block Equivalence of Zavalishin, Safonov, Bekhtin and Kurilin (Electronic Imaging 2016),
// as summarised in TPDS 2020 Sec. 3.1 and IPAS 2018 Sec. II. With 8-connectivity the foreground
// pixels of a 2x2 block are always connected, so OLE runs on blocks instead of pixels. Two
// scratch arrays, one entry per block: block labels B (block index + 1, 0 for a block without
// foreground) and a connectivity byte C telling which of the eight neighbour blocks touch it.
//
// The host runs be_init once (one work-item per block), repeats be_scan, be_analysis until
// be_scan leaves the `changed` word at 0, then runs be_final_labeling (one work-item per pixel).
// Blocks: bw = ceil(width / 2) per row, bh = ceil(height / 2) rows; pixels outside the image
// are background, so odd sizes and 1xN / Nx1 images need no special case.
// Raw labels: each component gets (raster index of the top-left pixel of its first block) + 1;
// background is 0.
//
// Build-time defines: CONNECTIVITY (8; BE is not defined for 4; 26 with DIMS=3), DIMS.
//
// Volumes (Zavalishin et al. label 2D and 3D images; TPDS 2020 Sec. 5.3, 26-connectivity): the
// same steps over 2x2x2 blocks, bd = ceil(depth / 2) slices of them, with a 4x4x4 window around
// each block and a connectivity word of 26 bits (connection_t), one per neighbour block.

#if DIMS == 3

typedef uint connection_t;

// Window bit of voxel (dx, dy, dz) of the 4x4x4 window around a block (blocks.h's layout):
// coordinates 1 and 2 are the block's own voxels, 0 and 3 those of the neighbour blocks around it.
#define WIN3(dx, dy, dz) (1UL << (16 * (dz) + 4 * (dy) + (dx)))

// Initialization: reads the 4x4x4 window of block (bx, by, bz) into a 64-bit mask, labels the
// block with its own index + 1 if it holds a foreground voxel, and sets bit n of C for each
// neighbour block n (n = 9 (oz + 1) + 3 (oy + 1) + (ox + 1), skipping the block itself, 13)
// holding a foreground voxel 26-adjacent to one of the block's: one in the union of the 3x3x3
// cubes around the block's foreground voxels.
KERNEL void be_init(GLOBAL const uchar *img, GLOBAL label_t *B, GLOBAL connection_t *C, uint width, uint height,
                    uint depth, uint bw, uint bh, uint bd)
{
    const uint bx = GLOBAL_ID_X, by = GLOBAL_ID_Y, bz = GLOBAL_ID_Z;
    if (bx >= bw || by >= bh || bz >= bd)
        return;
    ulong window = 0;
    for (uint dz = 0; dz < 4; dz++) {
        // Voxel 2 * b + d - 1 along each axis; "outside" covers -1 by wrapping around.
        const uint z = 2 * bz + dz - 1;
        if (z >= depth)
            continue;
        for (uint dy = 0; dy < 4; dy++) {
            const uint y = 2 * by + dy - 1;
            if (y >= height)
                continue;
            for (uint dx = 0; dx < 4; dx++) {
                const uint x = 2 * bx + dx - 1;
                if (x < width && FG(img[VOXEL_INDEX(x, y, z, width, height)]))
                    window |= WIN3(dx, dy, dz);
            }
        }
    }
    // The window layout, WINDOW_OWN, block_window and dilate_window are those of blocks.h.
    const ulong own = window & WINDOW_OWN;
    const ulong touched = window & dilate_window(own);
    connection_t c = 0;
    for (uint n = 0; n < 27; n++)
        if (n != 13 && (touched & block_window(n)) != 0)
            c |= 1u << n;
    const index_t b = VOXEL_INDEX(bx, by, bz, bw, bh);
    B[b] = own != 0 ? b + 1 : 0;
    C[b] = c;
}

// Scan (OLE on blocks): as in 2D, over the neighbour blocks C names. A bit of C is only set when
// the neighbour's voxel lies inside the volume, so the neighbour block exists.
KERNEL void be_scan(GLOBAL label_t *B, GLOBAL const connection_t *C, GLOBAL uint *changed, uint bw, uint bh, uint bd)
{
    const uint bx = GLOBAL_ID_X, by = GLOBAL_ID_Y, bz = GLOBAL_ID_Z;
    if (bx >= bw || by >= bh || bz >= bd)
        return;
    const index_t b = VOXEL_INDEX(bx, by, bz, bw, bh);
    const label_t label = LOAD_LABEL(&B[b]);
    if (label == 0)
        return;
    const connection_t c = C[b];
    label_t mn = label;
    for (int n = 0; n < 27; n++)
        if ((c >> n) & 1u)
            mn = min_label(mn, LOAD_LABEL(&B[VOXEL_INDEX((int)bx + n % 3 - 1, (int)by + n / 3 % 3 - 1, (int)bz + n / 9 - 1, bw, bh)]));
    if (mn < label) {
        STORE_LABEL(&B[label - 1], mn);
        STORE_RELAXED(changed, 1u);
    }
}

// Analysis with fused labelling, as in 2D.
KERNEL void be_analysis(GLOBAL label_t *B, uint bw, uint bh, uint bd)
{
    const uint bx = GLOBAL_ID_X, by = GLOBAL_ID_Y, bz = GLOBAL_ID_Z;
    if (bx >= bw || by >= bh || bz >= bd)
        return;
    const index_t b = VOXEL_INDEX(bx, by, bz, bw, bh);
    const label_t label = LOAD_LABEL(&B[b]);
    if (label != 0)
        STORE_LABEL(&B[b], chain_end(B, label));
}

// Final labeling: every foreground voxel gets the raster index + 1 of the front top-left voxel
// of its block's root block k; background gets 0.
KERNEL void be_final_labeling(GLOBAL const uchar *img, GLOBAL const label_t *B, GLOBAL label_t *L, uint width,
                              uint height, uint depth, uint bw, uint bh)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y, z = GLOBAL_ID_Z;
    if (x >= width || y >= height || z >= depth)
        return;
    const index_t i = VOXEL_INDEX(x, y, z, width, height);
    label_t label = 0;
    if (FG(img[i])) {
        const index_t k = B[VOXEL_INDEX(x / 2, y / 2, z / 2, bw, bh)] - 1;
        label = VOXEL_INDEX((k % bw) * 2, (k / bw % bh) * 2, (k / ((index_t)bw * bh)) * 2, width, height) + 1;
    }
    L[i] = label;
}

#else

typedef uchar connection_t;

// Bits of the connectivity byte, one per neighbour block.
#define BE_NW 0x01u
#define BE_N 0x02u
#define BE_NE 0x04u
#define BE_W 0x08u
#define BE_E 0x10u
#define BE_SW 0x20u
#define BE_S 0x40u
#define BE_SE 0x80u

// Bit of pixel (row dy, column dx) of the 4x4 window around a block: rows and columns 1 and 2
// are the block's own pixels, 0 and 3 the ring of pixels of the neighbour blocks around it.
#define WIN(dy, dx) (1u << (4 * (dy) + (dx)))

// Whether the window `mask` has a foreground pixel among `a` and one among `b`.
#define BOTH(mask, a, b) (((mask) & (a)) != 0 && ((mask) & (b)) != 0)

// Initialization: reads the 4x4 window of block (bx, by) into a 16-bit mask, labels the block
// with its own index + 1 if it holds a foreground pixel, and records in C every neighbour block
// holding a foreground pixel 8-adjacent to one of the block's: for N, any of the two pixels
// above the block with any of its two top pixels; for NW, the pixel above-left with the
// top-left pixel; and so on around the block.
KERNEL void be_init(GLOBAL const uchar *img, GLOBAL label_t *B, GLOBAL connection_t *C, uint width, uint height,
                    uint depth, uint bw, uint bh, uint bd)
{
    const uint bx = GLOBAL_ID_X, by = GLOBAL_ID_Y;
    if (bx >= bw || by >= bh)
        return;
    uint mask = 0;
    for (uint dy = 0; dy < 4; dy++) {
        // Row 2 * by + dy - 1, column 2 * bx + dx - 1; "outside" covers -1 by wrapping around.
        const uint y = 2 * by + dy - 1;
        if (y >= height)
            continue;
        for (uint dx = 0; dx < 4; dx++) {
            const uint x = 2 * bx + dx - 1;
            if (x < width && FG(img[PIXEL_INDEX(x, y, width)]))
                mask |= WIN(dy, dx);
        }
    }

    const uint top = WIN(1, 1) | WIN(1, 2), bottom = WIN(2, 1) | WIN(2, 2);
    const uint left = WIN(1, 1) | WIN(2, 1), right = WIN(1, 2) | WIN(2, 2);
    uint c = 0;
    if (BOTH(mask, WIN(0, 0), WIN(1, 1)))
        c |= BE_NW;
    if (BOTH(mask, WIN(0, 1) | WIN(0, 2), top))
        c |= BE_N;
    if (BOTH(mask, WIN(0, 3), WIN(1, 2)))
        c |= BE_NE;
    if (BOTH(mask, WIN(1, 0) | WIN(2, 0), left))
        c |= BE_W;
    if (BOTH(mask, WIN(1, 3) | WIN(2, 3), right))
        c |= BE_E;
    if (BOTH(mask, WIN(3, 0), WIN(2, 1)))
        c |= BE_SW;
    if (BOTH(mask, WIN(3, 1) | WIN(3, 2), bottom))
        c |= BE_S;
    if (BOTH(mask, WIN(3, 3), WIN(2, 2)))
        c |= BE_SE;

    const index_t b = PIXEL_INDEX(bx, by, bw);
    B[b] = (mask & (top | bottom)) != 0 ? b + 1 : 0;
    C[b] = (uchar)c;
}

// Scan (OLE on blocks): a foreground block takes the smallest label among itself and the
// neighbour blocks C says it touches; if that is smaller than its label, it lowers the label's
// representative B[label - 1] with a store, as OLE does (see kernels/ole.kernel for why no
// read-modify-write is needed; relaxed atomic accesses, as others read and write B meanwhile),
// and sets `changed`. A bit of C is only set when the neighbour's pixel lies
// inside the image, so the neighbour block exists.
KERNEL void be_scan(GLOBAL label_t *B, GLOBAL const connection_t *C, GLOBAL uint *changed, uint bw, uint bh, uint bd)
{
    const uint bx = GLOBAL_ID_X, by = GLOBAL_ID_Y;
    if (bx >= bw || by >= bh)
        return;
    const index_t b = PIXEL_INDEX(bx, by, bw);
    const label_t label = LOAD_LABEL(&B[b]);
    if (label == 0)
        return;
    const uint c = C[b];
    label_t mn = label;
    if (c & BE_NW)
        mn = min_label(mn, LOAD_LABEL(&B[b - bw - 1]));
    if (c & BE_N)
        mn = min_label(mn, LOAD_LABEL(&B[b - bw]));
    if (c & BE_NE)
        mn = min_label(mn, LOAD_LABEL(&B[b - bw + 1]));
    if (c & BE_W)
        mn = min_label(mn, LOAD_LABEL(&B[b - 1]));
    if (c & BE_E)
        mn = min_label(mn, LOAD_LABEL(&B[b + 1]));
    if (c & BE_SW)
        mn = min_label(mn, LOAD_LABEL(&B[b + bw - 1]));
    if (c & BE_S)
        mn = min_label(mn, LOAD_LABEL(&B[b + bw]));
    if (c & BE_SE)
        mn = min_label(mn, LOAD_LABEL(&B[b + bw + 1]));
    if (mn < label) {
        STORE_LABEL(&B[label - 1], mn);
        STORE_RELAXED(changed, 1u);
    }
}

// Analysis with fused labelling (OLE on blocks): every foreground block follows its label's
// chain of representatives to a label that refers to itself, and takes it.
KERNEL void be_analysis(GLOBAL label_t *B, uint bw, uint bh, uint bd)
{
    const uint bx = GLOBAL_ID_X, by = GLOBAL_ID_Y;
    if (bx >= bw || by >= bh)
        return;
    const index_t b = PIXEL_INDEX(bx, by, bw);
    const label_t label = LOAD_LABEL(&B[b]);
    if (label != 0)
        STORE_LABEL(&B[b], chain_end(B, label));
}

// Final labeling: every foreground pixel gets the raster index + 1 of the top-left pixel of its
// block's root block k (block row k / bw, block column k % bw); background gets 0.
KERNEL void be_final_labeling(GLOBAL const uchar *img, GLOBAL const label_t *B, GLOBAL label_t *L, uint width,
                              uint height, uint depth, uint bw, uint bh)
{
    const uint x = GLOBAL_ID_X, y = GLOBAL_ID_Y;
    if (x >= width || y >= height)
        return;
    const index_t i = PIXEL_INDEX(x, y, width);
    label_t label = 0;
    if (FG(img[i])) {
        const index_t k = B[PIXEL_INDEX(x / 2, y / 2, bw)] - 1;
        label = PIXEL_INDEX((k % bw) * 2, (k / bw) * 2, width) + 1;
    }
    L[i] = label;
}

#endif

