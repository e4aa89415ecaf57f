// GENERATED from kernels-cu/prelude.cuh and kernels/{common.h, ranks.h, relabel.kernel}: edit those, then run
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

// ---- ranks.h
// Consecutive labels from relabel.kernel's rank tables: R holds, per word of 32 pixels, the count
// of first pixels before it in its span and the word's marks of first pixels (relabel_rank_labels);
// offsets, per span, the count of first pixels before the span (scan_spans, scan_add).

// The rank of first pixel f among the first pixels of its span, from its word's entry in R.
DEVICE_FN uint rank_in_span(uint2 entry, index_t f)
{
    return entry.x + POPCOUNT(entry.y & ((1u << (uint)(f % 32)) - 1u));
}

// ---- relabel.kernel
// Consecutive relabeling on the device: raw labels of any convention become 1..N in raster order
// of each component's first pixel (background stays 0), and N is counted, without the labels
// leaving the device. The result is the same as the host's renumbering in raster order of first
// appearance.
//
// With first-pixel labels (label = index of the component's first pixel + 1), pixel i is the
// first of its component exactly when L[i] == i + 1. With block labels (label = index of the
// top-left pixel of the component's first 2x2 or 2x2x2 block + 1, the root), the first pixel
// is found first: relabel_first_pixels keeps, per root, the smallest index of the component's
// pixels with an atomic maximum of its complement (so a zeroed array is the starting point), in
// F at root / 2 (roots lie on even rows and columns, so their halves are distinct and F needs n
// / 2 entries). Every pixel of a component lies at or after its root, and its first pixel within
// two lines (rows of an image, slices of a volume) of it: only pixels there take part, which
// keeps the atomics off the rest of a large component. Then:
//   1. relabel_rank_labels: the pixels are cut into spans of RANK_SPAN; the first pixels of a span are
//      marked in a bitmask in local memory, and the span's count goes to counts[span]. Each word
//      of 32 pixels keeps its marks and the count of marks before it in its span (R, a pair per
//      word, written whole: 8 bytes per 32 pixels, instead of a rank written at each first
//      pixel, which scattered a 4-byte write per component over a table of n entries).
//   2. scan_spans / scan_add: an exclusive prefix sum of the counts (over as many levels as the
//      number of spans needs), whose last level's total is N.
//   3. relabel_final: every pixel takes offsets[span of its first pixel] + its first pixel's
//      rank in its span + 1, the rank from the first pixel's word in R (rank_in_span).
//
// One-dimensional launches: work-group g handles elements [g * SPAN, (g + 1) * SPAN), its work-items
// striding by GROUP_SIZE so that neighbouring items touch neighbouring elements.
// Build-time defines: GROUP_SIZE (work-items per group, a power of two, at least 32 and at most
// 1024), ITEMS (elements per item of the scans), RANK_ITEMS (pixels per item of relabel_rank_labels, at
// most 32), PASS_ITEMS (pixels per item of relabel_first_pixels and relabel_final).

#define SPAN (GROUP_SIZE * ITEMS)
#define RANK_SPAN (GROUP_SIZE * RANK_ITEMS)
// Pixels per group of relabel_first_pixels and relabel_final.
#define PASS_SPAN (GROUP_SIZE * PASS_ITEMS)
// Words of relabel_rank_labels's bitmask: one bit per pixel of its span.
#define RANK_WORDS (RANK_SPAN / 32)
#if RANK_ITEMS > 32 || RANK_WORDS % 32 || RANK_WORDS / 32 > GROUP_SIZE
#error "relabel_rank_labels needs RANK_ITEMS <= 32 and whole runs of 32 words, one item per run"
#endif

// An exclusive scan of the work-group's `value`s in work-item order, in local memory (Hillis and
// Steele, between two halves of `scratch`, 2 * GROUP_SIZE words, so that a step needs one
// barrier, not two); returns the sum of the values before this item's, and leaves the group's
// total in *total. Every item of the group must call it.
DEVICE_FN uint group_exclusive_scan(LOCAL uint *scratch, uint value, uint lid, uint *total)
{
    uint side = 0, sum = value;
    scratch[lid] = value;
    LOCAL_BARRIER();
    for (uint offset = 1; offset < GROUP_SIZE; offset *= 2) {
        if (lid >= offset)
            sum += scratch[side + lid - offset];
        side ^= GROUP_SIZE;
        scratch[side + lid] = sum;
        LOCAL_BARRIER();
    }
    *total = scratch[side + GROUP_SIZE - 1];
    LOCAL_BARRIER();
    return sum - value;
}

// The exclusive prefix sums of a span of ITEMS * GROUP_SIZE values, in place, item lid holding
// elements lid * ITEMS .. in `v`: each item's own, then the group's scan of their sums; the
// span's total in *total. Every item of the group must call it.
DEVICE_FN void span_exclusive_scan(LOCAL uint *scratch, uint *v, uint lid, uint *total)
{
    uint sum = 0;
#pragma unroll
    for (uint k = 0; k < ITEMS; k++) {
        const uint value = v[k];
        v[k] = sum;
        sum += value;
    }
    const uint before = group_exclusive_scan(scratch, sum, lid, total);
#pragma unroll
    for (uint k = 0; k < ITEMS; k++)
        v[k] += before;
}

// The labels of pixels first, first + GROUP_SIZE, ... (`count` of them; 0 past n), every load
// issued before any is used, so that they are in flight together.
DEVICE_FN void load_strided(GLOBAL const label_t *L, index_t first, index_t n, label_t *l, uint count)
{
#pragma unroll
    for (uint k = 0; k < count; k++) {
        const index_t i = first + k * GROUP_SIZE;
        l[k] = i < n ? L[i] : 0;
    }
}

// Whether pixel i with block label l (nonzero) may be its component's first pixel: it lies
// within two lines of the root l - 1 (the unsigned difference wraps for a pixel before it).
DEVICE_FN int near_root(index_t i, label_t l, uint line)
{
    const index_t d = i - (index_t)(l - 1);
    return d < line || d - line < line;
}

// Block conventions: F[root / 2] = the complement of the smallest index of a pixel labeled
// root + 1 (F starts zeroed; the complement of any index is above zero). Each item reads
// PASS_ITEMS pixels of its group's span of PASS_SPAN.
KERNEL void relabel_first_pixels(GLOBAL const label_t *L, GLOBAL label_t *F, index_t n, uint line)
{
    const index_t base = (index_t)GROUP_ID_X * PASS_SPAN + LOCAL_ID_X;
    label_t l[PASS_ITEMS];
    load_strided(L, base, n, l, PASS_ITEMS);
#pragma unroll
    for (uint k = 0; k < PASS_ITEMS; k++) {
        const index_t i = base + k * GROUP_SIZE;
        if (l[k] != 0 && near_root(i, l[k], line))
            ATOMIC_MAX(&F[(l[k] - 1) >> 1], ~(label_t)i);
    }
}

// The entry of F that holds the first pixel of the component of block label l, or entry 0 for
// background (F has n / 2 entries, rounded up, and at least one; M at least one too): lookups
// read it unconditionally, so that a work-item's lookups are in flight together instead of one
// branch at a time.
DEVICE_FN index_t first_entry(label_t l)
{
    return l != 0 ? (index_t)((l - 1) >> 1) : 0;
}

// Lookups of F per batch in relabel_rank_labels (it divides RANK_ITEMS).
#define RANK_LOOKUPS (RANK_ITEMS < 16 ? RANK_ITEMS : 16)
#if RANK_ITEMS % RANK_LOOKUPS
#error "relabel_rank_labels looks up F in whole batches"
#endif

// The end of step 1 for a span whose marks are in local memory (from `base`): each word's count
// of marks before it in the span, R for its words and the span's count. Called by every
// work-item of the group, after a barrier that follows the marks.
DEVICE_FN void rank_span(LOCAL uint *marks, LOCAL uint *before, LOCAL uint *partial, GLOBAL uint2 *R,
                         GLOBAL uint *counts, index_t base, index_t n)
{
    const uint lid = LOCAL_ID_X;
    // Exclusive prefix sums of the words' counts: within runs of 32 words, then across runs.
    for (uint w = lid; w < RANK_WORDS; w += GROUP_SIZE)
        before[w] = POPCOUNT(marks[w]);
    LOCAL_BARRIER();
    if (lid < RANK_WORDS / 32) {
        uint sum = 0;
        for (uint w = lid * 32; w < lid * 32 + 32; w++) {
            const uint c = before[w];
            before[w] = sum;
            sum += c;
        }
        partial[lid] = sum;
    }
    LOCAL_BARRIER();
    if (lid == 0) {
        uint sum = 0;
        for (uint r = 0; r < RANK_WORDS / 32; r++) {
            const uint c = partial[r];
            partial[r] = sum;
            sum += c;
        }
        STORE_RELAXED(&counts[GROUP_ID_X], sum); // (read by the last group: scan_if_last)
    }
    LOCAL_BARRIER();
    // (R's entry 0 is written for no pixels too: relabel_final reads it for background.)
    const index_t words = n > 0 ? n / 32 + (n % 32 != 0) : 1; // (n + 31 wraps near 2^32)
    for (uint w = lid; w < RANK_WORDS; w += GROUP_SIZE) {
        const index_t word = base / 32 + w;
        if (word < words) {
            uint2 entry;
            entry.x = partial[w / 32] + before[w];
            entry.y = marks[w];
            R[word] = entry;
        }
    }
}

// Step 2 in step 1's launch, where the spans' counts fit one scan span (`scan_groups`, the
// launch's groups, at most SPAN, else 0: every array up to 8 Mpx): the group that finishes last
// scans the `groups` counts in place and writes their total, as scan_spans would, one launch
// fewer. Each group's count is stored (by item 0, a relaxed atomic store), fenced, and only then
// its ticket taken; the group that takes the last ticket fences, reads the counts (relaxed atomic
// loads: other groups wrote them), writes them back scanned and puts the ticket counter back to
// 0 for the next launch (relaxed atomic stores: the other groups' accesses to both came before
// their tickets, but a plain access would still race with them in the memory model).
// `scratch` holds 2 * GROUP_SIZE words, `last` one.
DEVICE_FN void scan_if_last(GLOBAL uint *counts, GLOBAL uint *total, GLOBAL uint *tickets, uint groups,
                            LOCAL uint *scratch, LOCAL uint *last)
{
    const uint lid = LOCAL_ID_X;
    if (lid == 0) {
        GLOBAL_FENCE();
        last[0] = ATOMIC_ADD(tickets, 1u) == groups - 1;
    }
    LOCAL_BARRIER();
    if (!last[0])
        return;
    GLOBAL_FENCE();
    const uint first = lid * ITEMS;
    uint v[ITEMS], all;
#pragma unroll
    for (uint k = 0; k < ITEMS; k++)
        v[k] = first + k < groups ? LOAD_RELAXED(&counts[first + k]) : 0u;
    span_exclusive_scan(scratch, v, lid, &all);
#pragma unroll
    for (uint k = 0; k < ITEMS; k++)
        if (first + k < groups)
            STORE_RELAXED(&counts[first + k], v[k]);
    if (lid == 0) {
        *total = all;
        STORE_RELAXED(tickets, 0u);
    }
}

// Step 1: the marks of the first pixels of each span of RANK_SPAN pixels with, per word of 32,
// the count of marks before it in the span (R[word] = (count, marks), the words of the image in
// pixel order), and the count of each span. Item lid reads pixels base + k * GROUP_SIZE + lid
// (k < RANK_ITEMS), whose marks are bit lid % 32 of word k * (GROUP_SIZE / 32) + lid / 32: the
// words are in pixel order.
KERNEL void relabel_rank_labels(GLOBAL const label_t *L, GLOBAL const label_t *F, GLOBAL uint2 *R, GLOBAL uint *counts,
                         index_t n, uint blocks, uint line, GLOBAL uint *total, GLOBAL uint *tickets, uint scan_groups)
{
    LOCAL_ARRAY(uint, marks, RANK_WORDS);
    LOCAL_ARRAY(uint, before, RANK_WORDS);
    LOCAL_ARRAY(uint, partial, RANK_WORDS / 32 + 1);
    LOCAL_ARRAY(uint, scratch, 2 * GROUP_SIZE);
    LOCAL_ARRAY(uint, last, 1);
    const uint lid = LOCAL_ID_X;
    const index_t base = (index_t)GROUP_ID_X * RANK_SPAN;
    for (uint w = lid; w < RANK_WORDS; w += GROUP_SIZE)
        marks[w] = 0;
    LOCAL_BARRIER();
    WAIT_FOR_PREVIOUS_KERNEL(); // (launched to overlap the labeling's last kernel, as it may be)
    LET_NEXT_KERNEL_START();
    // All loads first, then every test, then the marks. Pixel i (label l) is the first of its
    // component when l == i + 1 (first-pixel labels), or, with block labels, when it lies near
    // its root and F's entry names it: RANK_LOOKUPS lookups at a time, all issued before any is
    // tested (a pixel far from its root reads entry 0 and ignores it).
    label_t l[RANK_ITEMS];
    load_strided(L, base + lid, n, l, RANK_ITEMS);
    uint mine = 0; // bit k: pixel k of this item is a first pixel
    if (!blocks) {
#pragma unroll
        for (uint k = 0; k < RANK_ITEMS; k++)
            mine |= (uint)(l[k] != 0 && l[k] == (label_t)(base + k * GROUP_SIZE + lid) + 1) << k;
    } else {
#pragma unroll
        for (uint c = 0; c < RANK_ITEMS; c += RANK_LOOKUPS) {
            uint near = 0; // bit j: pixel c + j lies near its root
            label_t found[RANK_LOOKUPS];
#pragma unroll
            for (uint j = 0; j < RANK_LOOKUPS; j++) {
                const label_t lj = l[c + j];
                const int candidate = lj != 0 && near_root(base + (c + j) * GROUP_SIZE + lid, lj, line);
                near |= (uint)candidate << j;
                found[j] = F[candidate ? first_entry(lj) : 0];
            }
#pragma unroll
            for (uint j = 0; j < RANK_LOOKUPS; j++) {
                const label_t i = (label_t)(base + (c + j) * GROUP_SIZE + lid);
                mine |= (uint)((near >> j & 1u) != 0 && ~found[j] == i) << (c + j);
            }
        }
    }
#pragma unroll
    for (uint k = 0; k < RANK_ITEMS; k++) {
        if (mine >> k & 1u)
            ATOMIC_OR(&marks[k * (GROUP_SIZE / 32) + lid / 32], 1u << (lid % 32));
    }
    LOCAL_BARRIER();
    rank_span(marks, before, partial, R, counts, base, n);
    if (scan_groups != 0)
        scan_if_last(counts, total, tickets, scan_groups, scratch, last);
}

// Step 1 from marks made elsewhere (TUF's pass 1 and border merge: bit p % 32 of M[p / 32] set
// where pixel p is its component's first): 1 bit per pixel read instead of a label.
KERNEL void relabel_rank_marks(GLOBAL const uint *M, GLOBAL uint2 *R, GLOBAL uint *counts, index_t n,
                               GLOBAL uint *total, GLOBAL uint *tickets, uint scan_groups)
{
    LOCAL_ARRAY(uint, marks, RANK_WORDS);
    LOCAL_ARRAY(uint, before, RANK_WORDS);
    LOCAL_ARRAY(uint, partial, RANK_WORDS / 32 + 1);
    LOCAL_ARRAY(uint, scratch, 2 * GROUP_SIZE);
    LOCAL_ARRAY(uint, last, 1);
    const index_t base = (index_t)GROUP_ID_X * RANK_SPAN, words = n / 32 + (n % 32 != 0);
    WAIT_FOR_PREVIOUS_KERNEL(); // (launched to overlap the labeling's last kernel, as it may be)
    LET_NEXT_KERNEL_START();
    for (uint w = LOCAL_ID_X; w < RANK_WORDS; w += GROUP_SIZE)
        marks[w] = base / 32 + w < words ? M[base / 32 + w] : 0u;
    LOCAL_BARRIER();
    rank_span(marks, before, partial, R, counts, base, n);
    if (scan_groups != 0)
        scan_if_last(counts, total, tickets, scan_groups, scratch, last);
}

// Step 2: exclusive prefix sum of data[0..n) span by span, in place; each span's total goes to
// sums[span] (the next level scans those). Item lid takes the ITEMS consecutive elements from
// lid * ITEMS of its span, so that the group scans once (its items' sums), not once per element.
KERNEL void scan_spans(GLOBAL uint *data, GLOBAL uint *sums, uint n)
{
    LOCAL_ARRAY(uint, scratch, 2 * GROUP_SIZE);
    const uint lid = LOCAL_ID_X;
    const uint first = GROUP_ID_X * SPAN + lid * ITEMS;
    WAIT_FOR_PREVIOUS_KERNEL(); // (launched to overlap the kernel before it, as it may be)
    LET_NEXT_KERNEL_START();
    uint v[ITEMS], total;
#pragma unroll
    for (uint k = 0; k < ITEMS; k++)
        v[k] = first + k < n ? data[first + k] : 0u;
    span_exclusive_scan(scratch, v, lid, &total);
#pragma unroll
    for (uint k = 0; k < ITEMS; k++)
        if (first + k < n)
            data[first + k] = v[k];
    if (lid == 0)
        sums[GROUP_ID_X] = total;
}

// Step 2, upward: adds each span's offset (the scanned sums) to its elements.
KERNEL void scan_add(GLOBAL uint *data, GLOBAL const uint *offsets, uint n)
{
    const uint i = GLOBAL_ID_X;
    WAIT_FOR_PREVIOUS_KERNEL(); // (launched to overlap the kernel before it, as it may be)
    LET_NEXT_KERNEL_START();
    if (i < n)
        data[i] += offsets[i / SPAN];
}

// Step 3: the consecutive label of every pixel, from its first pixel's span offset and rank;
// PASS_ITEMS pixels per item, each step's loads issued together.
KERNEL void relabel_final(GLOBAL label_t *L, GLOBAL const label_t *F, GLOBAL const uint2 *R,
                          GLOBAL const uint *offsets, index_t n, uint blocks)
{
    const index_t base = (index_t)GROUP_ID_X * PASS_SPAN + LOCAL_ID_X;
    label_t l[PASS_ITEMS];
    load_strided(L, base, n, l, PASS_ITEMS);
    // Every first-pixel lookup, then every rank lookup, then the stores: a store between the
    // loads would make the compiler wait for each load (it cannot tell that the store leaves
    // what the next load reads alone), instead of having them in flight together. The lookups
    // are unconditional (background reads entry 0 and drops it), for the same reason: a lookup
    // behind a branch is waited for before the next branch.
    index_t first[PASS_ITEMS];
    if (blocks) {
#pragma unroll
        for (uint k = 0; k < PASS_ITEMS; k++) {
            const index_t found = (index_t)(label_t)~F[first_entry(l[k])];
            first[k] = l[k] != 0 ? found : 0;
        }
    } else {
#pragma unroll
        for (uint k = 0; k < PASS_ITEMS; k++)
            first[k] = l[k] != 0 ? (index_t)(l[k] - 1) : 0;
    }
#pragma unroll
    for (uint k = 0; k < PASS_ITEMS; k++) {
        const label_t value = offsets[first[k] / RANK_SPAN] + rank_in_span(R[first[k] / 32], first[k]) + 1;
        l[k] = l[k] != 0 ? value : 0;
    }
#pragma unroll
    for (uint k = 0; k < PASS_ITEMS; k++) {
        if (l[k] != 0)
            L[base + k * GROUP_SIZE] = l[k];
    }
}

