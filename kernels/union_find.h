// Union-find over a label array (TPDS 2020 Sec. 2.1, Alg. 1; IPAS 2018 Alg. 1).
//
// Convention: L[i] holds the index of i's parent plus one, and 0 for background, so node i is a
// root when L[i] == i + 1. Union always hangs the larger root under the smaller one, so the root
// of a finished tree is its smallest index. Block algorithms use the same convention on the
// top-left pixel of each block (the node index is that pixel's raster index).
//
// OpenCL C 1.2 has no generic address space, so the functions are instantiated once for global
// memory (labels of type label_t) and once for local (shared) memory (tile-local uint labels).
//
// Other work-items hang roots and shorten paths while a find walks, so every read of a parent
// is a relaxed atomic load (LOAD, the preludes' LOAD_LABEL or LOAD_RELAXED_LOCAL) and every
// write that is not an atomic minimum a relaxed atomic store: a stale parent is still an
// ancestor (parents only ever move to a smaller index of the same tree), so no ordering is
// needed, only freedom from data races. find_read_only walks a forest that nothing writes in the
// launch, with plain loads.

#define CCL_DEFINE_UNION_FIND(SPACE, SUFFIX, T, LOAD)                                            \
    /* Find: the root of the tree holding node i. */                                             \
    DEVICE_FN T find_##SUFFIX(SPACE const T *L, T i)                                             \
    {                                                                                            \
        T parent = LOAD(&L[i]) - 1;                                                              \
        while (parent != i) {                                                                    \
            i = parent;                                                                          \
            parent = LOAD(&L[i]) - 1;                                                            \
        }                                                                                        \
        return i;                                                                                \
    }                                                                                            \
    CCL_DEFINE_UNION(SPACE, SUFFIX, T, find_##SUFFIX)

/* Union: joins the trees of a and b, whose roots the statement FIND_ROOTS puts in a and b.   */
/* atomic_min can lose to a concurrent union: then the old parent it returns is followed and   */
/* both roots are found again (IPAS 2018 Alg. 1). ON_HOOK runs once root b hangs under a.     */
#define CCL_UNION_LOOP(T, FIND_ROOTS) CCL_UNION_LOOP_HOOK(T, FIND_ROOTS, (void)0)
#define CCL_UNION_LOOP_HOOK(T, FIND_ROOTS, ON_HOOK)                                              \
    for (;;) {                                                                                   \
        FIND_ROOTS;                                                                              \
        if (a == b)                                                                              \
            return;                                                                              \
        if (a > b) {                                                                             \
            T t = a;                                                                             \
            a = b;                                                                               \
            b = t;                                                                               \
        }                                                                                        \
        T old = ATOMIC_MIN(&L[b], a + 1);                                                        \
        if (old == b + 1) {                                                                      \
            ON_HOOK;                                                                             \
            return;                                                                              \
        }                                                                                        \
        b = old - 1;                                                                             \
    }

/* Union with a given find (a kernel file may bring its own, e.g. one that compresses). */
#define CCL_DEFINE_UNION(SPACE, SUFFIX, T, FIND)                                                 \
    DEVICE_FN void union_##SUFFIX(SPACE T *L, T a, T b)                                          \
    {                                                                                            \
        CCL_UNION_LOOP(T, (a = FIND(L, a), b = FIND(L, b)))                                      \
    }

/* Union with a find of both nodes at once: FIND_BOTH(L, &a, &b) puts their roots in a, b. */
#define CCL_DEFINE_UNION_BOTH(SPACE, SUFFIX, T, FIND_BOTH)                                       \
    DEVICE_FN void union_##SUFFIX(SPACE T *L, T a, T b)                                          \
    {                                                                                            \
        CCL_UNION_LOOP(T, FIND_BOTH(L, &a, &b))                                                  \
    }

CCL_DEFINE_UNION_FIND(GLOBAL, global, label_t, LOAD_LABEL)
CCL_DEFINE_UNION_FIND(LOCAL, local, uint, LOAD_RELAXED_LOCAL)

// The root of node i in a forest that no work-item writes during the launch (plain loads).
DEVICE_FN index_t find_read_only(GLOBAL const label_t *L, index_t i)
{
    index_t parent = L[i] - 1;
    while (parent != i) {
        i = parent;
        parent = L[i] - 1;
    }
    return i;
}

// Compress (TPDS 2020 Alg. 1): links node i directly to its root. With INLINE_COMPRESSION=1
// (the _IC variants) it is InlineCompress instead: every step of the walk rewrites i's parent,
// so threads that read i meanwhile already see a shorter path.
DEVICE_FN void compress_global(GLOBAL label_t *L, index_t i)
{
#if INLINE_COMPRESSION
    const index_t start = i;
    label_t parent = LOAD_LABEL(&L[i]) - 1;
    while (parent != i) {
        i = parent;
        STORE_LABEL(&L[start], i + 1);
        parent = LOAD_LABEL(&L[i]) - 1;
    }
#else
    STORE_LABEL(&L[i], find_global(L, i) + 1);
#endif
}
