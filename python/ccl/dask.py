"""Labeling dask arrays: :func:`label`, chunk by chunk on the workers' devices.

The graph: each chunk is labeled once by :func:`ccl.label` on its worker (a GPU where the worker
has one, so ``dask_cuda.LocalCUDACluster`` gives one GPU per worker; POCL or the CPU reference
elsewhere; CuPy chunks stay on their GPU), into labels 1..n of its own. Each chunk then hands
over only its boundary planes; for every pair of chunks that touch (across a face, an edge or a
corner of the chunk grid) the pairs of labels that touch across it under the connectivity are
collected, all of them are joined once by a union-find (``ccl``'s own, in Rust), and each chunk
is renumbered with a gather through the resulting table. Labels are consecutive, numbered by
chunk in C order and then in raster order within the chunk (not the raster order of the whole
array: the same partition as ``scipy.ndimage.label``, numbered differently).

Unlike ``dask_image.ndmeasure.label`` with dask 2025.4 and later, no dask array is passed into
``dask.delayed``, so no chunk is labeled more than once per compute.
"""

from __future__ import annotations

import itertools

import numpy as np

from . import MAX_32BIT_ELEMENTS, _background_value, _ccl, _connectivity
from . import label as _label_array

__all__ = ["label"]

#: Chunk labelings in this process, for tests that check each chunk is labeled once.
_labelings = itertools.count()


def _steps(connectivity: int) -> int:
    """Most coordinates a neighbour may differ in: 1 for 4 and 6, 2 for 8 and 18, 3 for 26."""
    return {4: 1, 6: 1, 8: 2, 18: 2, 26: 3}[connectivity]


def _to_host(array) -> np.ndarray:
    return array.get() if hasattr(array, "__cuda_array_interface__") else np.asarray(array)


def _label_chunk(chunk, connectivity: int, algorithm, device):
    """A chunk's own labels 1..n (NumPy, or CuPy for a CuPy chunk) and n."""
    next(_labelings)
    if chunk.size == 0:
        return np.zeros(chunk.shape, np.uint32), 0
    labels, n = _label_array(chunk, connectivity=connectivity, algorithm=algorithm, device=device, return_num=True)
    return labels, int(n)


def _count(labeled) -> int:
    return labeled[1]


def _faces(labeled) -> dict:
    """The chunk's first and last plane along each axis, on the host: ``{(axis, side): plane}``."""
    labels = labeled[0]
    faces = {}
    for axis in range(labels.ndim):
        if labels.shape[axis] == 0:
            continue
        for side, index in ((0, 0), (1, labels.shape[axis] - 1)):
            faces[(axis, side)] = _to_host(labels.take(index, axis=axis))
    return faces


def _boundary(faces: dict, direction: tuple, mine: bool) -> np.ndarray:
    """The elements of a chunk that touch its neighbour at ``direction`` (a step of -1, 0 or 1
    along each axis of the chunk grid; ``mine``: this chunk is the one the step starts from,
    else the one it reaches): its last (step 1) or first (step -1) plane along each crossing
    axis, whole along the others."""
    crossing = [axis for axis, step in enumerate(direction) if step != 0]
    side = lambda axis: int((direction[axis] > 0) == mine)  # noqa: E731
    region = faces[(crossing[0], side(crossing[0]))]
    for removed, axis in enumerate(crossing[1:], start=1):
        index = 0 if side(axis) == 0 else region.shape[axis - removed] - 1
        region = region.take(index, axis=axis - removed)
    return region


def _pairs(faces_a: dict, faces_b: dict, direction: tuple, connectivity: int):
    """The pairs (label of chunk a, label of chunk b) that touch across the boundary
    between chunk a and its neighbour b at ``direction``, as two uint64 arrays (some repeated)."""
    budget = _steps(connectivity) - sum(1 for step in direction if step != 0)
    if budget < 0:  # chunks that meet only where the connectivity does not reach
        return np.zeros(0, np.uint64), np.zeros(0, np.uint64)
    a = np.ascontiguousarray(_to_host(_boundary(faces_a, direction, True)), np.uint32)
    b = np.ascontiguousarray(_to_host(_boundary(faces_b, direction, False)), np.uint32)
    return _ccl._boundary_pairs(a, b, budget)


def _merge(counts: list, links: list, base: int):
    """Joins the chunks' labels: ``counts`` per chunk (C order), ``links`` as (chunk a, chunk b,
    pairs of their local labels). Returns each chunk's offset, the table from global label to
    its number (``base`` + 1 ..) and the number of components."""
    offsets = np.concatenate([[0], np.cumsum(counts, dtype=np.uint64)]).astype(np.uint64)
    total = int(offsets[-1])
    shift = np.uint64(base)
    a = [shift + offsets[ka] + pa for ka, kb, (pa, pb) in links]
    b = [shift + offsets[kb] + pb for ka, kb, (pa, pb) in links]
    a = np.concatenate(a) if a else np.zeros(0, np.uint64)
    b = np.concatenate(b) if b else np.zeros(0, np.uint64)
    table, count = _ccl._merge_labels(total, a, b, base)
    return offsets, table, count


def _num(merged) -> np.int64:
    return np.int64(merged[2])


def _relabel(labeled, merged, chunk: int, dtype):
    """A chunk's labels renumbered through the merged table (background stays 0)."""
    labels, n = labeled
    offsets, table, _ = merged
    start = int(offsets[chunk])
    if hasattr(labels, "__cuda_array_interface__"):
        import cupy

        local = table[start : start + n + 1].astype(dtype)
        local[0] = 0
        return cupy.asarray(local)[labels]
    return _ccl._relabel_chunk(np.ascontiguousarray(labels, np.uint32), table, start, np.dtype(dtype).itemsize * 8)


def _directions(ndim: int):
    """Half of the steps to the neighbours of a chunk in the grid: those whose first nonzero
    step is +1 (each touching pair of chunks once)."""
    for step in itertools.product((-1, 0, 1), repeat=ndim):
        nonzero = [s for s in step if s != 0]
        if nonzero and nonzero[0] == 1:
            yield step


def label(image, connectivity=None, dtype=None, algorithm=None, device=None, background=None, _label_base=0):
    """Label the connected components of a dask array, each chunk on its worker's device.

    Parameters
    ----------
    image : dask.array.Array or array_like
        2D (H, W) or 3D (D, H, W), NumPy or CuPy chunks (``dask.array.from_zarr`` for zarr);
        nonzero is foreground. Any chunking, chunks of one element included.
    connectivity : int, optional
        As :func:`ccl.label`: 4 or 8 for images (default 8), 6, 18 or 26 for volumes (default 26).
    dtype : numpy dtype, optional
        ``uint32`` or ``uint64``; by default ``uint32`` where 32-bit labels number every element,
        else ``uint64``.
    algorithm, device : str, optional
        As :func:`ccl.label`, for every chunk (by default each worker's best device).
    background : scalar, optional
        As :func:`ccl.label`: the value of background elements (default 0), every other one
        foreground.

    Returns
    -------
    labels : dask.array.Array
        The labels, chunked as ``image``: 0 for background, components 1..N (numbered by chunk
        in C order, then in raster order within a chunk).
    num : dask.array.Array
        N, a 0-d dask array.
    """
    import dask
    import dask.array as da

    image = da.asarray(image)
    if image.ndim not in (2, 3):
        raise ValueError(f"image has {image.ndim} dimensions; an image has 2 (H, W), a volume 3 (D, H, W)")
    conn = _connectivity(image.ndim, connectivity)
    if _background_value(image.dtype, background) is not None:
        image = image != background
    if dtype is None:
        dtype = np.uint64 if image.size + _label_base > MAX_32BIT_ELEMENTS else np.uint32
    dtype = np.dtype(dtype)
    if dtype not in (np.uint32, np.uint64):
        raise ValueError(f"labels of dtype {dtype}: uint32 or uint64")
    if dtype == np.uint32 and _label_base + image.size > MAX_32BIT_ELEMENTS:
        raise ValueError(f"{image.size} elements from label {_label_base}: 32-bit labels cannot number them; use uint64")

    chunks = image.to_delayed(optimize_graph=False)
    grid = chunks.shape
    order = {index: k for k, index in enumerate(np.ndindex(*grid))}
    label_chunk = dask.delayed(_label_chunk, pure=True)
    labeled = {index: label_chunk(chunks[index], conn, algorithm, device) for index in order}
    faces = {index: dask.delayed(_faces, pure=True)(labeled[index]) for index in order}
    links = []
    for index in order:
        for step in _directions(image.ndim):
            other = tuple(i + s for i, s in zip(index, step))
            if all(0 <= o < g for o, g in zip(other, grid)):
                pairs = dask.delayed(_pairs, pure=True)(faces[index], faces[other], step, conn)
                links.append((order[index], order[other], pairs))
    counts = [dask.delayed(_count, pure=True)(labeled[index]) for index in order]
    merged = dask.delayed(_merge, pure=True)(counts, links, int(_label_base))

    blocks = np.empty(grid, dtype=object)
    meta = image._meta
    for index, k in order.items():
        shape = tuple(c[i] for c, i in zip(image.chunks, index))
        relabeled = dask.delayed(_relabel, pure=True)(labeled[index], merged, k, dtype)
        blocks[index] = da.from_delayed(relabeled, shape=shape, dtype=dtype, meta=meta.astype(dtype))
    labels = da.block(blocks.tolist())
    num = da.from_delayed(dask.delayed(_num, pure=True)(merged), shape=(), dtype=np.int64)
    return labels, num
