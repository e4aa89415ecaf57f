"""Labeling an array where it lies, in slabs along its first axis: how :func:`ccl.label` labels a
GPU array past 2^32 - 1 elements (64-bit labels) on its device, as ``ccl::slabs`` labels a host
array.

Each slab (whole planes, at most ``limit`` elements) is labeled 1..n_k into its part of one
32-bit buffer of the array's shape. The two planes on each side of every slab boundary come to
the host in one copy; the pairs of labels that touch across them under the connectivity (a face
pair covers the edge and corner contacts) are joined by ``ccl``'s union-find (in Rust), which
numbers the components consecutively in increasing order of their smallest global label. A
global label is the slab's offset plus its local label, so that order is the raster order of
each component's first element: the same labels as labeling the whole array at once. The
filters (``min_size``, ``keep_largest``) act on that table, with the components' sizes summed
from each slab's. Each slab is then renumbered by a gather through its part of the table,
straight into the output.

The steps take an array module, ``xp`` (CuPy for GPU arrays, NumPy in the tests that run
everywhere), and a function that labels one slab into 32-bit labels.
"""

from __future__ import annotations

import numpy as np

from . import _ccl


def _steps(connectivity: int) -> int:
    """Most coordinates a neighbour may differ in: 1 for 4 and 6, 2 for 8 and 18, 3 for 26."""
    return {4: 1, 6: 1, 8: 2, 18: 2, 26: 3}[connectivity]


def _to_host(array) -> np.ndarray:
    """``array`` in host memory (a CuPy array copied, a NumPy one as it is)."""
    return array.get() if hasattr(array, "get") and not isinstance(array, np.ndarray) else array


def plan(shape: tuple, limit: int) -> list:
    """The slabs ``(start, stop)`` along the first axis of an array of ``shape``: as many whole
    planes as ``limit`` elements hold, the last slab the rest."""
    plane = int(np.prod(shape[1:], dtype=np.int64))
    if plane > limit:
        raise ValueError(
            f"a plane of shape {tuple(shape[1:])} has {plane} elements, more than 32-bit labels number "
            f"({limit}): the slabs of an array are whole planes of its first axis"
        )
    planes = max(1, limit // max(plane, 1))
    return [(start, min(start + planes, shape[0])) for start in range(0, shape[0], planes)]


def _kept(sizes: np.ndarray, min_size, keep_largest) -> np.ndarray:
    """Which components (index 1..N of ``sizes``, the elements of each; 0 is background) the
    filters keep: those of ``min_size`` elements or more, then the ``keep_largest`` largest of
    them (ties to the lower label)."""
    keep = np.ones(sizes.size, bool)
    keep[0] = False
    if min_size is not None:
        keep &= sizes >= min_size
    if keep_largest is not None:
        candidates = np.flatnonzero(keep)
        largest = candidates[np.argsort(-sizes[candidates], kind="stable")[:keep_largest]]
        keep[:] = False
        keep[largest] = True
    return keep


def label(binary, connectivity: int, label_slab, xp, dtype, limit: int, output=None, filters=(None, None), base=0):
    """Labels ``binary`` (a C-contiguous uint8 array of ``xp``, nonzero is foreground) in slabs of
    at most ``limit`` elements; ``label_slab(slab, labels)`` labels one slab into ``labels``
    (uint32, its shape) 1..n in raster order and returns n. Returns the labels (``dtype``, into
    ``output`` when given: an ``xp`` array of that dtype and shape) and their count N.

    ``base`` (tests) adds to every label: the labels are base + 1..base + N (and the table and
    pairs carry labels past 2^32 on small arrays)."""
    dtype = np.dtype(dtype)
    slabs = plan(binary.shape, limit)
    local = xp.empty(binary.shape, xp.uint32)
    counts = [int(label_slab(binary[start:stop], local[start:stop])) for start, stop in slabs]
    offsets = np.concatenate([[0], np.cumsum(counts, dtype=np.uint64)]).astype(np.uint64)

    boundaries = [start for start, _ in slabs[1:]]
    a, b = [np.zeros(0, np.uint64)], [np.zeros(0, np.uint64)]
    if boundaries:
        planes = _to_host(xp.stack([local[i] for start in boundaries for i in (start - 1, start)]))
        budget = _steps(connectivity) - 1
        pairs = _ccl._boundary_pairs([(planes[2 * k], planes[2 * k + 1], budget) for k in range(len(boundaries))])
        for k, (before, after) in enumerate(pairs):
            a.append(before + np.uint64(base) + offsets[k])
            b.append(after + np.uint64(base) + offsets[k + 1])
    table, num = _ccl._merge_labels(int(offsets[-1]), np.concatenate(a), np.concatenate(b), int(base))
    table[0] = base  # (background: every slab's table gets 0 there)

    if filters != (None, None):
        sizes = np.zeros(num + 1, np.int64)
        for k, (start, stop) in enumerate(slabs):
            counted = _to_host(xp.bincount(local[start:stop].ravel(), minlength=counts[k] + 1))
            components = (table[int(offsets[k]) + 1 : int(offsets[k + 1]) + 1] - np.uint64(base)).astype(np.int64)
            sizes += np.bincount(components, weights=counted[1:], minlength=num + 1).astype(np.int64)
        keep = _kept(sizes, *filters)
        renumbered = np.where(keep, np.cumsum(keep, dtype=np.uint64) + np.uint64(base), np.uint64(0))
        table = renumbered[(table - np.uint64(base)).astype(np.int64)]
        num = int(keep.sum())
    if num + base > np.iinfo(dtype).max:
        raise ValueError(f"{num} components from label {base} do not fit labels of dtype {dtype}: use a 64-bit dtype")

    labels = xp.empty(binary.shape, dtype) if output is None else output
    for k, (start, stop) in enumerate(slabs):
        part = table[int(offsets[k]) : int(offsets[k + 1]) + 1].astype(dtype)
        part[0] = 0
        xp.take(xp.asarray(part), local[start:stop], out=labels[start:stop])
    return labels, num
