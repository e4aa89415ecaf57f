"""Labeling dask arrays: :func:`label`, chunk by chunk on the workers' devices.

The graph: each chunk is labeled once by :func:`ccl.label` on its worker (a GPU where the worker
has one, so ``dask_cuda.LocalCUDACluster`` gives one GPU per worker; POCL or the CPU reference
elsewhere), into labels 1..n of its own. A CuPy chunk's labels stay on its GPU; so do a NumPy
chunk's where its worker labels on CUDA and has CuPy, while the device has room, until the chunk
is renumbered there and its final labels come back (through a page-locked buffer): only the
boundary planes and the final labels cross the bus. Each chunk then hands over only its
boundary planes and count; for each chunk, the pairs of labels that touch under the
connectivity across its boundary with each neighbour it reaches by a step of +1 (a face, an
edge or a corner of the chunk grid) are collected in one task, all of them are joined once by a
union-find (``ccl``'s own, in Rust), and each chunk is renumbered with a gather through the
resulting table: four tasks a chunk, one merge. Labels are consecutive, numbered by
chunk in C order and then in raster order within the chunk (not the raster order of the whole
array: the same partition as ``scipy.ndimage.label``, numbered differently).

Unlike ``dask_image.ndmeasure.label`` with dask 2025.4 and later, no dask array is passed into
``dask.delayed``, so no chunk is labeled more than once per compute.
"""

from __future__ import annotations

import functools
import itertools
import threading

import numpy as np

from . import MAX_32BIT_ELEMENTS, _background_value, _ccl, _connectivity
from . import devices as ccl_devices
from . import label as _label_array
from ._slabs import _steps

__all__ = ["label"]

#: Chunk labelings in this process, for tests that check each chunk is labeled once.
_labelings = itertools.count()

#: Bytes of each piece of a chunk's labels on their way from the GPU to host memory.
_PIECE = 16 << 20
#: Device memory left free after keeping a chunk's labels on the GPU; below it they go to the host.
_DEVICE_RESERVE = 1 << 30

#: This thread's page-locked buffer (``buffer``) and CUDA streams by device (``streams``).
_thread = threading.local()


def _on_gpu(array) -> bool:
    return hasattr(array, "__cuda_array_interface__")


@functools.lru_cache(maxsize=None)
def _cuda_ordinal(device) -> int | None:
    """The CUDA device a NumPy chunk is labeled on when it may stay there (CuPy importable and
    ``device`` a ``cuda:N``, or None where ``ccl`` finds a CUDA device, its default), else None."""
    if device is None:
        device = next((d[0] for d in ccl_devices() if d[0].startswith("cuda:")), None)
    if device is None or not str(device).startswith("cuda:"):
        return None
    try:
        import cupy  # noqa: F401
    except ImportError:
        return None
    return int(str(device).split(":", 1)[1])


def _stream(cupy):
    """This thread's non-blocking stream on the current device: the work of different threads
    overlaps (on CuPy's default stream it would wait for each other's)."""
    streams = _thread.__dict__.setdefault("streams", {})
    device = cupy.cuda.Device().id
    if device not in streams:
        streams[device] = cupy.cuda.Stream(non_blocking=True)
    return streams[device]


def _device_room(cupy, nbytes: int) -> bool:
    """Whether the current device can keep ``nbytes`` more and still have ``_DEVICE_RESERVE``
    free (the memory pool's cached blocks count as free)."""
    free, _ = cupy.cuda.runtime.memGetInfo()
    return free + cupy.get_default_memory_pool().free_bytes() >= nbytes + _DEVICE_RESERVE


def _label_chunk(chunk, connectivity: int, algorithm, device, dtype):
    """A chunk's own labels 1..n, n, whether they come back from the GPU into host memory once
    renumbered (into ``dtype``, which the device needs room for), and its boundary planes
    (:func:`_planes`).

    A NumPy chunk whose worker labels on a CUDA device (with CuPy there) keeps its labels on
    that GPU until it is renumbered, while the device has room: only the chunk, its boundary
    planes and then its final labels cross the bus. A CuPy chunk's labels stay on its GPU."""
    next(_labelings)
    if chunk.size == 0:
        labels = np.zeros(chunk.shape, np.uint32)
        return labels, 0, False, _planes(labels)
    ordinal = None if _on_gpu(chunk) else _cuda_ordinal(device)
    if ordinal is not None:
        import cupy

        with cupy.cuda.Device(ordinal), _stream(cupy) as stream:
            if _device_room(cupy, chunk.size * (chunk.itemsize + 4 + np.dtype(dtype).itemsize)):
                gpu = _upload(np.ascontiguousarray(chunk), stream)
                labels, n = _label_array(gpu, connectivity=connectivity, algorithm=algorithm, return_num=True)
                return labels, int(n), True, _planes(labels)
    labels, n = _label_array(chunk, connectivity=connectivity, algorithm=algorithm, device=device, return_num=True)
    if _on_gpu(labels):  # on the chunk's device and stream, as the labeling
        with labels.device:
            return labels, int(n), False, _planes(labels)
    return labels, int(n), False, _planes(labels)


def _plane_keys(shape: tuple) -> list:
    """The boundary planes of an array of ``shape``: ``(axis, side)`` for each axis of nonzero
    length, side 0 the first plane and 1 the last."""
    return [(axis, side) for axis in range(len(shape)) if shape[axis] for side in (0, 1)]


@functools.lru_cache(maxsize=64)
def _plane_indices(shape: tuple, device: int):
    """The flat indices of the boundary planes (:func:`_plane_keys`) of a C-ordered array of
    ``shape``, one plane after the other, on CUDA device ``device``: one gather takes them all."""
    import cupy

    flat = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    planes = [flat.take(0 if side == 0 else shape[axis] - 1, axis=axis).ravel() for axis, side in _plane_keys(shape)]
    index = np.concatenate(planes)
    with cupy.cuda.Device(device):
        return cupy.asarray(index.astype(np.int32 if flat.size < 2**31 else np.int64))


def _planes(labels) -> dict:
    """The first and last plane of ``labels`` along each axis of nonzero length, in host memory,
    ``{(axis, side): plane}`` (from a GPU array by one gather and one copy, on the current
    stream)."""
    keys = _plane_keys(labels.shape)
    if not _on_gpu(labels):
        return {(axis, side): labels.take(0 if side == 0 else labels.shape[axis] - 1, axis=axis) for axis, side in keys}
    flat = labels.ravel()[_plane_indices(labels.shape, labels.device.id)].get()
    shapes = [labels.shape[:axis] + labels.shape[axis + 1 :] for axis, _ in keys]
    ends = np.cumsum([int(np.prod(shape)) for shape in shapes])[:-1]
    return {key: part.reshape(shape) for key, part, shape in zip(keys, np.split(flat, ends), shapes)}


def _faces(labeled) -> tuple:
    """A labeled chunk's boundary planes and count of labels: all that the links need of it."""
    _, n, _, planes = labeled
    return planes, n


def _pinned_buffer(cupy) -> np.ndarray:
    """This thread's page-locked buffer of ``_PIECE`` bytes."""
    buffer = getattr(_thread, "buffer", None)
    if buffer is None or buffer.size < _PIECE:
        buffer = _thread.buffer = np.frombuffer(cupy.cuda.alloc_pinned_memory(_PIECE), np.uint8, _PIECE)
    return buffer


def _upload(chunk: np.ndarray, stream):
    """``chunk`` (C-contiguous) copied to a new CuPy array through this thread's page-locked
    buffer, a piece at a time (the driver's own copies from pageable memory are slower)."""
    import cupy

    out = cupy.empty(chunk.shape, chunk.dtype)
    source, target = chunk.reshape(-1).view(np.uint8), out.reshape(-1).view(cupy.uint8)
    buffer = _pinned_buffer(cupy)
    for start in range(0, source.size, _PIECE):
        staged = buffer[: min(_PIECE, source.size - start)]
        staged[...] = source[start : start + staged.size]
        target[start : start + staged.size].set(staged, stream=stream)
        stream.synchronize()  # before the buffer is filled again
    return out


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


def _touching(faces_a: dict, faces_b: dict, direction: tuple, connectivity: int):
    """The boundary between chunk a and its neighbour b at ``direction`` (one the connectivity
    reaches across) as :func:`_pairs` takes it, ``(elements of a, elements of b, steps left to
    the connectivity)``."""
    budget = _steps(connectivity) - sum(1 for step in direction if step != 0)
    a = np.ascontiguousarray(_boundary(faces_a, direction, True), np.uint32)
    b = np.ascontiguousarray(_boundary(faces_b, direction, False), np.uint32)
    return a, b, budget


def _pairs(boundaries: list) -> list:
    """For each boundary of :func:`_touching`, the pairs (label of chunk a, label of chunk b)
    that touch across it, as two uint64 arrays (some repeated): all in one native call, which
    takes the GIL back once."""
    return _ccl._boundary_pairs(boundaries)


def _chunk_links(faced, neighbours: list, connectivity: int):
    """A chunk's count of labels and its links: for each neighbour ``(k, direction, faces)``
    that the chunk reaches by a step of ``direction`` (:func:`_directions`), ``(k, pairs)``."""
    faces, n = faced
    pairs = _pairs([_touching(faces, other[0], direction, connectivity) for _, direction, other in neighbours])
    return n, [(k, found) for (k, _, _), found in zip(neighbours, pairs)]


def _merge(linked: list, base: int):
    """Joins the chunks' labels: ``linked`` per chunk (C order) as its count and its links
    (chunk b, pairs of their local labels). Returns each chunk's offset, the table from global
    label to its number (``base`` + 1 ..) and the number of components."""
    counts = [n for n, _ in linked]
    offsets = np.concatenate([[0], np.cumsum(counts, dtype=np.uint64)]).astype(np.uint64)
    total = int(offsets[-1])
    shift = np.uint64(base)
    links = [(ka, kb, pairs) for ka, (_, chunk_links) in enumerate(linked) for kb, pairs in chunk_links]
    a = [shift + offsets[ka] + pa for ka, kb, (pa, pb) in links]
    b = [shift + offsets[kb] + pb for ka, kb, (pa, pb) in links]
    a = np.concatenate(a) if a else np.zeros(0, np.uint64)
    b = np.concatenate(b) if b else np.zeros(0, np.uint64)
    table, count = _ccl._merge_labels(total, a, b, base)
    return offsets, table, count


def _num(merged) -> np.int64:
    return np.int64(merged[2])


def _download(labels, stream) -> np.ndarray:
    """``labels`` (CuPy, C-contiguous) copied into a new NumPy array through a page-locked buffer
    of this thread's, a piece at a time (the driver's own copies from the device into pageable
    memory are slower)."""
    import cupy

    out = np.empty(labels.shape, labels.dtype)
    source, target = labels.reshape(-1).view(cupy.uint8), out.reshape(-1).view(np.uint8)
    buffer = _pinned_buffer(cupy)
    for start in range(0, target.size, _PIECE):
        piece = source[start : start + _PIECE]
        staged = buffer[: piece.size]
        piece.get(out=staged, stream=stream)  # waits for the copy
        target[start : start + piece.size] = staged
    return out


def _relabel(labeled, merged, chunk: int, dtype):
    """A chunk's labels renumbered through the merged table (background stays 0): on the GPU
    where its labels are there, then into host memory for a NumPy chunk."""
    labels, n, to_host, _ = labeled
    offsets, table, _ = merged
    start = int(offsets[chunk])
    if _on_gpu(labels):
        import cupy

        local = table[start : start + n + 1].astype(dtype)
        local[0] = 0
        with labels.device, _stream(cupy) as stream:
            renumbered = cupy.asarray(local)[labels]
            if not to_host:
                stream.synchronize()
                return renumbered
            return _download(renumbered, stream)
    return _ccl._relabel_chunk(np.ascontiguousarray(labels, np.uint32), table, start, np.dtype(dtype).itemsize * 8)


def _directions(ndim: int, connectivity: int):
    """Half of the steps to the neighbours of a chunk in the grid that the connectivity reaches
    across (a face, an edge or a corner it spans): those whose first nonzero step is +1 (each
    touching pair of chunks once)."""
    for step in itertools.product((-1, 0, 1), repeat=ndim):
        nonzero = [s for s in step if s != 0]
        if nonzero and nonzero[0] == 1 and len(nonzero) <= _steps(connectivity):
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
    import dask.array as da
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

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

    # One layer of plain tasks, keyed by chunk index: building it costs a few milliseconds where
    # a delayed call per task cost tens (each is tokenized and made a layer of its own).
    token = tokenize(image, conn, dtype, algorithm, device, _label_base)
    name, num_name = "ccl-dask-label-" + token, "ccl-dask-num-" + token
    labeled, faced, linked, merged = (f"ccl-dask-{step}-{token}" for step in ("chunk", "faces", "links", "merge"))
    grid = image.numblocks
    order = {index: k for k, index in enumerate(np.ndindex(*grid))}
    tasks = {}
    for index, k in order.items():
        tasks[(labeled, *index)] = (_label_chunk, (image.name, *index), conn, algorithm, device, dtype)
        tasks[(faced, *index)] = (_faces, (labeled, *index))
        neighbours = []
        for step in _directions(image.ndim, conn):
            other = tuple(i + s for i, s in zip(index, step))
            if all(0 <= o < g for o, g in zip(other, grid)):
                neighbours.append([order[other], step, (faced, *other)])
        tasks[(linked, *index)] = (_chunk_links, (faced, *index), neighbours, conn)
        tasks[(name, *index)] = (_relabel, (labeled, *index), merged, k, dtype)
    tasks[merged] = (_merge, [(linked, *index) for index in order], int(_label_base))
    graph = HighLevelGraph.from_collections(name, tasks, dependencies=[image])
    labels = da.Array(graph, name, image.chunks, dtype=dtype, meta=image._meta.astype(dtype))
    graph = HighLevelGraph.from_collections(num_name, {(num_name,): (_num, merged)}, dependencies=[labels])
    num = da.Array(graph, num_name, (), dtype=np.int64, meta=np.zeros((), np.int64))
    return labels, num
