// GENERATED from kernels-cu/prelude.cuh and kernels/{common.h, bits.h, stats.kernel}: edit those, then run
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

// ---- bits.h
// Bit positions in 32-bit words, shared by the kernels that work on bit masks of pixels.

// Index of the highest set bit of a nonzero word.
DEVICE_FN uint highest_bit(uint w)
{
    return 31u - LEADING_ZEROS(w);
}

// Index of the lowest set bit of a nonzero word.
DEVICE_FN uint lowest_bit(uint w)
{
    return highest_bit(w & (0u - w));
}

// ---- stats.kernel
// Component statistics from consecutive labels 1..N (issue 13; what OpenCV's
// connectedComponentsWithStats, NPP's CompressedMarkerLabelsUFInfo and skimage's regionprops
// give): per component its voxel count, bounding box and the sums of its voxels' coordinates (64
// bits, so centroids stay exact on large images), in label order. An image is a volume of one
// slice.
//
// Kernels, in order: stats_init (one work-item per component), stats_accumulate (one work-item
// per SEGMENT voxels of a row); stats_remap keeps a subset of the components.
// Layout, N entries each: area (uint); box (uint, 6 N: min x, min y, max x, max y, then min z,
// max z); sums (ulong, 3 N: x, y, then z). An image uses the first 4 N of box and 2 N of sums
// only, so that its statistics are read back without the z entries.
//
// The group first copies its rows' labels into local memory, neighbouring work-items reading
// neighbouring labels (with 32-bit labels; 64-bit ones would not fit, and are walked in global
// memory), each segment padded by a word so that the items walking their segments side by side
// read different banks. A work-item reads its segment into two bit masks (foreground, and the
// first voxel of each run of one component, background inside the run included) and hands each
// run's statistics on at once, its count, ends and coordinate sum taken from the masks: a run of
// one component costs one hand-over, not one per voxel, and no voxel costs a branch. Two
// work-items of neighbouring segments hand a run that crosses their boundary over once, not
// twice. Hand-overs go to a table in local memory shared by the work-group (TABLE slots, open
// addressing on the label), whose entries are added to the global ones once per group at the
// end. A component spanning many groups (the large one of a dense image) then costs one set of
// global atomics per group instead of one per work-item, and those atomics, all on one address,
// were what limited the kernel. The table holds 32-bit offsets from the group's first column
// and row; a hand-over that finds the table full, or a group whose rows span two slices, goes
// to the global entries directly.
// Build-time defines: SEGMENT (voxels per work-item), GROUP_W x GROUP_H (the accumulating
// work-group), TABLE (slots, a power of two), PROBES (slots tried per hand-over), INT64_ATOMICS
// (the preludes' 64-bit add), FLOAT64 (with it, the kernels of OpenCV's format too).

#define GROUP_ITEMS (GROUP_W * GROUP_H)
// Whether the group stages its labels in local memory, and each staged segment's words (padded).
#define STAGED (LABEL_BITS == 32)
#define STAGE_STRIDE (SEGMENT + 1)
#if SEGMENT > 32
#error "a segment's voxels are the bits of a word"
#endif
#if GROUP_W % 2
#error "the items of a row walk their segments in pairs"
#endif
#if TABLE & (TABLE - 1) || TABLE > GROUP_ITEMS || PROBES > TABLE
#error "TABLE must be a power of two no larger than the work-group, PROBES at most TABLE"
#endif

// The table's entries (per column, its stride): `n`, or with `from_count` the count at *count
// (the labels' N, which the relabeling left on the device) where the n entries allocated hold
// it, else 0: nothing is written, and the host, which reads N afterwards, runs the kernels again
// on a table of N entries.
DEVICE_FN uint table_entries(uint n, GLOBAL const uint *count, uint from_count)
{
    if (!from_count)
        return n;
    const uint entries = *count;
    return entries <= n ? entries : 0u;
}

// An image (`volume` 0) keeps no z entries.
KERNEL void stats_init(GLOBAL uint *area, GLOBAL uint *box, GLOBAL ulong *sums, uint capacity, uint volume,
                       GLOBAL const uint *count, uint from_count)
{
    WAIT_FOR_PREVIOUS_KERNEL(); // (launched to overlap the labeling's last kernel, as it may be)
    LET_NEXT_KERNEL_START();
    const uint k = GLOBAL_ID_X, n = table_entries(capacity, count, from_count);
    if (k >= n)
        return;
    area[k] = 0;
    const uint axes = volume ? 3 : 2;
    for (uint a = 0; a < 2; a++) {
        box[a * n + k] = 0xFFFFFFFFu;
        box[(2 + a) * n + k] = 0;
    }
    if (volume) {
        box[4 * n + k] = 0xFFFFFFFFu;
        box[5 * n + k] = 0;
    }
    for (uint a = 0; a < axes; a++)
        sums[a * n + k] = 0;
}

// Adds statistics to component `label`'s global entries: `count` voxels with x in first..last
// (summing to sum_x), y in y_first..y_last (summing to sum_y), all in slice z (`volume` 0: an
// image, without z entries).
DEVICE_FN void stats_global(GLOBAL uint *area, GLOBAL uint *box, GLOBAL ulong *sums, uint n, label_t label, uint count,
                            uint first, uint last, ulong sum_x, uint y_first, uint y_last, ulong sum_y, uint z,
                            int volume)
{
    const uint k = (uint)(label - 1);
    ATOMIC_ADD(&area[k], count);
    ATOMIC_MIN(&box[k], first);
    ATOMIC_MIN(&box[n + k], y_first);
    ATOMIC_MAX(&box[2 * n + k], last);
    ATOMIC_MAX(&box[3 * n + k], y_last);
    ATOMIC_ADD64(&sums[k], sum_x);
    if (sum_y != 0)
        ATOMIC_ADD64(&sums[n + k], sum_y);
    if (volume) {
        ATOMIC_MIN(&box[4 * n + k], z);
        ATOMIC_MAX(&box[5 * n + k], z);
        if (z != 0)
            ATOMIC_ADD64(&sums[2 * n + k], (ulong)z * count);
    }
}

// The work-group's table: the label of each slot (0: free), then per slot its count and the sum
// of its row offsets in one word (the count in the low COUNT_BITS bits: one atomic add for
// both), the sum of its column offsets, the smallest and largest column offsets, and the rows it
// met as bits (so one atomic OR instead of a minimum and a maximum). A hand-over then takes five
// atomics, not seven, and no compare-and-swap once its label holds the slot: the local atomics
// are what limits the kernel on dense images.
#define COUNT_BITS 14
#if GROUP_W * SEGMENT * GROUP_H >= (1 << COUNT_BITS) || GROUP_W * SEGMENT * GROUP_H * (GROUP_H - 1) >= (1 << (32 - COUNT_BITS))
#error "a group's count and sum of row offsets must share a word"
#endif
#if GROUP_H > 32
#error "a group's rows are the bits of a word"
#endif
struct stats_table {
    uint label[TABLE];
    uint count_dy[TABLE];
    uint sum_dx[TABLE];
    uint min_dx[TABLE];
    uint max_dx[TABLE];
    uint rows[TABLE];
};

// Hands over the partial statistics of component `label`: `count` voxels of row offset dy,
// column offsets first_dx..last_dx summing to sum_dx. Returns 0 when PROBES slots from the
// label's own are taken by other labels (a group meeting more components than the table holds,
// as in sparse images, then sends the rest to the global entries without searching the table).
DEVICE_FN int stats_local(LOCAL struct stats_table *t, label_t label, uint count, uint first_dx, uint last_dx,
                          uint sum_dx, uint dy)
{
    uint slot = ((uint)label * 2654435761u) & (TABLE - 1);
    for (uint probe = 0; probe < PROBES; probe++) {
        // A load first: a slot that holds the label (or another) needs no read-modify-write to
        // tell. (Every load of the table is a relaxed atomic one: other items update it.)
        uint old = LOAD_RELAXED_LOCAL(&t->label[slot]);
        if (old == 0)
            old = ATOMIC_CMPXCHG(&t->label[slot], 0u, (uint)label);
        if (old == 0 || old == (uint)label) {
            ATOMIC_ADD(&t->count_dy[slot], count | dy * count << COUNT_BITS);
            ATOMIC_ADD(&t->sum_dx[slot], sum_dx);
            // The ends and rows only ever widen, so a value read that already covers this run's
            // (even one read before another item's atomic) needs no atomic: a component that
            // fills the group's rows (the large one of a dense image) then costs two atomics a
            // hand-over on its slot, not five.
            if (LOAD_RELAXED_LOCAL(&t->min_dx[slot]) > first_dx)
                ATOMIC_MIN(&t->min_dx[slot], first_dx);
            if (LOAD_RELAXED_LOCAL(&t->max_dx[slot]) < last_dx)
                ATOMIC_MAX(&t->max_dx[slot], last_dx);
            if ((LOAD_RELAXED_LOCAL(&t->rows[slot]) >> dy & 1u) == 0)
                ATOMIC_OR(&t->rows[slot], 1u << dy);
            return 1;
        }
        slot = (slot + 1) & (TABLE - 1);
    }
    return 0;
}

// Bits 0..k-1 of a word (k in 0..31).
DEVICE_FN uint bits_below(uint k)
{
    return (1u << k) - 1u;
}

// The sum of the indices of the set bits of w: bit j of an index contributes 2^j for each set
// bit whose index has it.
DEVICE_FN uint bit_position_sum(uint w)
{
    return POPCOUNT(w & 0xAAAAAAAAu) + (POPCOUNT(w & 0xCCCCCCCCu) << 1) + (POPCOUNT(w & 0xF0F0F0F0u) << 2) +
           (POPCOUNT(w & 0xFF00FF00u) << 3) + (POPCOUNT(w & 0xFFFF0000u) << 4);
}

// Rows are numbered through the slices: row r is y = r % height of slice z = r / height, so
// one 2D launch over `rows` = height x depth rows covers a volume. Every work-item reaches the
// barriers (those past the image have nothing to walk).
KERNEL void stats_accumulate(GLOBAL const label_t *L, GLOBAL uint *area, GLOBAL uint *box, GLOBAL ulong *sums,
                             uint width, uint height, uint rows, uint capacity, GLOBAL const uint *count,
                             uint from_count)
{
    LOCAL_ARRAY(struct stats_table, table, 1);
    const uint item = LOCAL_ID_Y * GROUP_W + LOCAL_ID_X;
    // The group's first column and row; 32-bit offsets from them cannot overflow: a group spans
    // GROUP_W * SEGMENT columns and GROUP_H rows.
    const uint gx0 = GROUP_ID_X * GROUP_W * SEGMENT, r0 = GROUP_ID_Y * GROUP_H;
    const uint r_last = r0 + GROUP_H - 1 < rows ? r0 + GROUP_H - 1 : rows - 1;
    // A group within one slice uses the table (every group of an image does).
    const int shared = r0 < rows && r0 / height == r_last / height;
    if (item < TABLE) {
        table->label[item] = 0;
        table->count_dy[item] = 0;
        table->sum_dx[item] = 0;
        table->min_dx[item] = 0xFFFFFFFFu;
        table->max_dx[item] = 0;
        table->rows[item] = 0;
    }
    LOCAL_BARRIER();
    // (Launched to overlap stats_init, as it may be: its table and the labels are read below.)
    WAIT_FOR_PREVIOUS_KERNEL();
    LET_NEXT_KERNEL_START();
    const uint n = table_entries(capacity, count, from_count);

    const uint x0 = GLOBAL_ID_X * SEGMENT, r = GLOBAL_ID_Y;
    const int active = x0 < width && r < rows;
    const uint y = active ? r % height : 0, z = active ? r / height : 0;
    const int volume = rows != height;
    const uint end = !active ? x0 : x0 + SEGMENT < width ? x0 + SEGMENT : width;
    GLOBAL const label_t *row = L + PIXEL_INDEX(0, r < rows ? r : 0, width);
#if STAGED
    // This item's row of the group: GROUP_W segments, item k of the row reading columns k,
    // k + GROUP_W, ... of the group's span (column c of the span at c / SEGMENT * STAGE_STRIDE +
    // c % SEGMENT); the labels past the image read as background.
    LOCAL_ARRAY(uint, staged, GROUP_H * GROUP_W * STAGE_STRIDE);
    LOCAL uint *mine = staged + LOCAL_ID_Y * GROUP_W * STAGE_STRIDE;
    uint staging[SEGMENT]; // all loads first, so that many are in flight
#pragma unroll
    for (uint k = 0; k < SEGMENT; k++) {
        const uint x = gx0 + k * GROUP_W + LOCAL_ID_X;
        staging[k] = r < rows && x < width ? row[x] : 0u;
    }
#pragma unroll
    for (uint k = 0; k < SEGMENT; k++) {
        const uint c = k * GROUP_W + LOCAL_ID_X;
        mine[c / SEGMENT * STAGE_STRIDE + c % SEGMENT] = staging[k];
    }
    LOCAL_BARRIER();
    LOCAL const uint *segment = mine + LOCAL_ID_X * STAGE_STRIDE;
#define SEGMENT_LABEL(k) segment[k]
#define PARTNER_LABEL(side, k) segment[(int)(side) * STAGE_STRIDE + (int)(k)]
#else
#define SEGMENT_LABEL(k) (x0 + (k) < end ? row[x0 + (k)] : 0)
#define PARTNER_LABEL(side, k) row[(int)x0 + (int)(side) * SEGMENT + (int)(k)]
#endif
    // The segment as bit masks: its foreground, and the first pixel of each of its runs (a run
    // being a component's pixels up to the next pixel of another component, background between
    // them included); then one hand-over per run, its count, ends and coordinate sum from the
    // masks. Pixels past the segment's end read as background.
    uint fg = 0, starts = 0;
    label_t previous = 0;
#pragma unroll
    for (uint k = 0; k < SEGMENT; k++) {
        const label_t label = SEGMENT_LABEL(k);
        fg |= (uint)(label != 0) << k;
        starts |= (uint)(label != 0 && label != previous) << k;
        previous = label != 0 ? label : previous;
    }
    const uint dy = r - r0;
    // Items 2j and 2j + 1 of a row walk neighbouring segments: where the first run of the odd
    // one has the label of the even one's last run, the even one hands both over as one run and
    // the odd one skips it. A component wider than the segments (the large one of a dense image)
    // then costs half the hand-overs, all on its slot of the table, so the segments can be short
    // (see SEGMENT in src/schedule/stats.rs).
    LOCAL_ARRAY(uint, masks, 2 * GROUP_ITEMS);
    masks[2 * item] = fg;
    masks[2 * item + 1] = starts;
    LOCAL_BARRIER();
    const uint partner = item ^ 1u, partner_fg = masks[2 * partner], partner_starts = masks[2 * partner + 1];
    const int odd = LOCAL_ID_X & 1u;
    // The label the two segments share across their boundary (0: none): the even segment's last
    // run's and the odd one's first run's, where equal.
    label_t joined = 0;
    {
        const uint even_fg = odd ? partner_fg : fg, odd_fg = odd ? fg : partner_fg;
        const uint odd_starts = odd ? starts : partner_starts;
        if (even_fg != 0 && odd_fg != 0) {
            const label_t even_last = odd ? PARTNER_LABEL(-1, highest_bit(even_fg)) : SEGMENT_LABEL(highest_bit(even_fg));
            const label_t odd_first = odd ? SEGMENT_LABEL(lowest_bit(odd_starts)) : PARTNER_LABEL(1, lowest_bit(odd_starts));
            joined = even_last == odd_first ? even_last : 0;
        }
    }
    if (odd && joined != 0)
        starts &= starts - 1u; // handed over by the even item
    while (starts != 0) {
        const uint k0 = lowest_bit(starts);
        starts &= starts - 1u;
        const uint run = fg & ~bits_below(k0) & (starts != 0 ? bits_below(lowest_bit(starts)) : 0xFFFFFFFFu);
        const label_t label = SEGMENT_LABEL(k0);
        // A label above n, which consecutive labels never have, is skipped rather than written
        // past the table.
        if (label > n)
            continue;
        uint count = POPCOUNT(run), last = x0 + highest_bit(run);
        uint sum_k = bit_position_sum(run);
        if (!odd && starts == 0 && joined != 0) {
            // The odd partner's first run: its fg bits up to its second run start.
            const uint rest = partner_starts & (partner_starts - 1u);
            const uint more = partner_fg & (rest != 0 ? bits_below(lowest_bit(rest)) : 0xFFFFFFFFu);
            const uint c = POPCOUNT(more);
            count += c;
            last = x0 + SEGMENT + highest_bit(more);
            sum_k += bit_position_sum(more) + c * SEGMENT;
        }
        const uint first = x0 + k0;
        const ulong sum_x = (ulong)count * x0 + sum_k;
        const uint sum_dx = count * (x0 - gx0) + sum_k;
        if (!shared || !stats_local(table, label, count, first - gx0, last - gx0, sum_dx, dy))
            stats_global(area, box, sums, n, label, count, first, last, sum_x, y, y, (ulong)y * count, z, volume);
    }
    LOCAL_BARRIER();

    if (item < TABLE && table->label[item] != 0) {
        const uint packed = table->count_dy[item], rows = table->rows[item], y0 = r0 % height;
        const uint c = packed & ((1u << COUNT_BITS) - 1u);
        const ulong sx = (ulong)table->sum_dx[item] + (ulong)c * gx0;
        const ulong sy = (ulong)(packed >> COUNT_BITS) + (ulong)c * y0;
        stats_global(area, box, sums, n, table->label[item], c, gx0 + table->min_dx[item], gx0 + table->max_dx[item],
                     sx, y0 + lowest_bit(rows), y0 + highest_bit(rows), sy, r0 / height, volume);
    }
}

#if FLOAT64
// ---- OpenCV's format (connectedComponentsWithStats), built on the device from the table: row 0
// the background, row k label k; `axes` (2 or 3, the array's dimensions) columns per row of the
// coordinates. The table of an image (or of a volume of one slice) has no z entries (`volume`
// 0): z is 0 there. The background's row takes the array's totals less the components' (sums
// of the table, stats_totals) and its box from the faces of the labels (stats_background_faces,
// then stats_background_box where a face has no background).

// totals[0] += the areas, totals[1 + a] += the coordinate sums along axis a (totals zeroed by the
// host). One work-item per component, each work-group's sums added up in local memory first.
KERNEL void stats_totals(GLOBAL const uint *area, GLOBAL const ulong *sums, uint n, uint volume,
                         GLOBAL ulong *totals)
{
    LOCAL_ARRAY(ulong, partial, 4 * GROUP_ITEMS);
    const uint lid = LOCAL_ID_X, k = GLOBAL_ID_X;
    for (uint t = 0; t < 4; t++) {
        ulong value = 0;
        if (k < n)
            value = t == 0 ? (ulong)area[k] : (t < 3 || volume ? sums[(t - 1) * n + k] : 0);
        partial[t * GROUP_ITEMS + lid] = value;
    }
    LOCAL_BARRIER();
    for (uint step = GROUP_ITEMS / 2; step > 0; step /= 2) {
        if (lid < step)
            for (uint t = 0; t < 4; t++)
                partial[t * GROUP_ITEMS + lid] += partial[t * GROUP_ITEMS + lid + step];
        LOCAL_BARRIER();
    }
    if (lid < 4 && partial[lid * GROUP_ITEMS] != 0)
        ATOMIC_ADD64(&totals[lid], partial[lid * GROUP_ITEMS]);
}

// The extent of the array along axis a (x, y, z).
DEVICE_FN uint extent_along(uint a, uint width, uint height, uint depth)
{
    return a == 0 ? width : (a == 1 ? height : depth);
}

// faces[f] = 1 if face f of the array holds background (face 2a: coordinate 0 along axis a;
// 2a + 1: the last), else 0. One work-group per face, which reads the face's pixels.
KERNEL void stats_background_faces(GLOBAL const label_t *L, uint width, uint height, uint depth,
                                   GLOBAL uint *faces)
{
    LOCAL_ARRAY(uint, found, 1);
    const uint f = GROUP_ID_X, a = f / 2, lid = LOCAL_ID_X;
    const uint c = f % 2 == 0 ? 0 : extent_along(a, width, height, depth) - 1;
    // The face's pixels: (across, down) over the other two axes, in order.
    const uint across = a == 0 ? height : width, down = a == 2 ? height : depth;
    if (lid == 0)
        found[0] = 0;
    LOCAL_BARRIER();
    for (ulong j = lid; j < (ulong)across * down; j += GROUP_ITEMS) {
        const uint u = (uint)(j % across), v = (uint)(j / across);
        const uint x = a == 0 ? c : u, y = a == 0 ? u : (a == 1 ? c : v), z = a == 2 ? c : v;
        if (L[VOXEL_INDEX(x, y, z, width, height)] == 0) {
            ATOMIC_OR(&found[0], 1u);
            break;
        }
    }
    LOCAL_BARRIER();
    if (lid == 0)
        faces[f] = found[0];
}

// Along the axes that have a face without background (faces), the smallest and largest
// coordinate of a background pixel: box[2a] (min) and box[2a + 1] (max), which the host set to
// 0xFFFFFFFF and 0. One work-item per SEGMENT pixels, which exits at once where every face
// holds background (most arrays: the box is then the whole array).
KERNEL void stats_background_box(GLOBAL const label_t *L, uint width, uint height, uint depth, uint axes,
                                 GLOBAL const uint *faces, GLOBAL uint *box)
{
    uint open = 0; // bit a: axis a needs its box
    for (uint a = 0; a < axes; a++)
        open |= (faces[2 * a] != 0 && faces[2 * a + 1] != 0 ? 0u : 1u) << a;
    const index_t n = (index_t)width * height * depth, first = (index_t)GLOBAL_ID_X * SEGMENT;
    if (open == 0 || first >= n)
        return;
    uint low[3] = {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}, high[3] = {0, 0, 0};
    int any = 0;
    for (index_t i = first; i < first + SEGMENT && i < n; i++) {
        if (L[i] != 0)
            continue;
        const uint c[3] = {(uint)(i % width), (uint)(i / width % height), (uint)(i / width / height)};
        for (uint a = 0; a < 3; a++) {
            low[a] = c[a] < low[a] ? c[a] : low[a];
            high[a] = c[a] > high[a] ? c[a] : high[a];
        }
        any = 1;
    }
    if (!any)
        return;
    // (Read first, relaxed atomic loads: once the box is found, most work-items leave it alone.)
    for (uint a = 0; a < axes; a++) {
        if ((open >> a & 1u) == 0)
            continue;
        if (low[a] < LOAD_RELAXED(&box[2 * a]))
            ATOMIC_MIN(&box[2 * a], low[a]);
        if (high[a] > LOAD_RELAXED(&box[2 * a + 1]))
            ATOMIC_MAX(&box[2 * a + 1], high[a]);
    }
}

// Row k (0 ..= n) of OpenCV's tables: stats (long; images: left, top, width, height, area;
// `axes` 3: left, top, front, width, height, depth, area) and centroids (double: x, y (, z)),
// the mean coordinates, as the host divides them (the exact sums rounded to double, divided;
// NaN for a background of no pixels, whose stats row is zeros). One work-item per row.
KERNEL void stats_opencv(GLOBAL const uint *area, GLOBAL const uint *box, GLOBAL const ulong *sums, uint n,
                         uint volume, uint width, uint height, uint depth, uint axes, GLOBAL const ulong *totals,
                         GLOBAL const uint *faces, GLOBAL const uint *bg_box, GLOBAL long *stats,
                         GLOBAL double *centroids)
{
    const uint k = GLOBAL_ID_X;
    if (k > n)
        return;
    const uint columns = 2 * axes + 1;
    long low[3] = {0, 0, 0}, size[3] = {0, 0, 0}, count = 0;
    ulong sum[3] = {0, 0, 0};
    if (k == 0) {
        const ulong pixels = (ulong)width * height * depth;
        count = (long)(pixels - totals[0]);
        for (uint a = 0; a < axes && count != 0; a++) {
            const uint extent = extent_along(a, width, height, depth);
            low[a] = faces[2 * a] != 0 ? 0 : bg_box[2 * a];
            size[a] = (faces[2 * a + 1] != 0 ? extent - 1 : bg_box[2 * a + 1]) - low[a] + 1;
            // All pixels' coordinates along a sum to pixels (extent - 1) / 2.
            sum[a] = pixels * (extent - 1) / 2 - totals[1 + a];
        }
    } else {
        const uint j = k - 1;
        count = area[j];
        low[0] = box[j];
        low[1] = box[n + j];
        size[0] = (long)box[2 * n + j] - low[0] + 1;
        size[1] = (long)box[3 * n + j] - low[1] + 1;
        sum[0] = sums[j];
        sum[1] = sums[n + j];
        if (volume) {
            low[2] = box[4 * n + j];
            size[2] = (long)box[5 * n + j] - low[2] + 1;
            sum[2] = sums[2 * n + j];
        } else {
            size[2] = 1;
        }
    }
    GLOBAL long *row = stats + (index_t)k * columns;
    for (uint a = 0; a < axes; a++) {
        row[a] = low[a];
        row[axes + a] = size[a];
        centroids[(index_t)k * axes + a] = DDIV((double)sum[a], (double)count);
    }
    row[2 * axes] = count;
}
#endif

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

