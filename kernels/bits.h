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
