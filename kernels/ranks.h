// Consecutive labels from relabel.kernel's rank tables: R holds, per word of 32 pixels, the count
// of first pixels before it in its span and the word's marks of first pixels (relabel_rank_labels);
// offsets, per span, the count of first pixels before the span (scan_spans, scan_add).

// The rank of first pixel f among the first pixels of its span, from its word's entry in R.
DEVICE_FN uint rank_in_span(uint2 entry, index_t f)
{
    return entry.x + POPCOUNT(entry.y & ((1u << (uint)(f % 32)) - 1u));
}
