"""``ccl.dask.label`` against ``scipy.ndimage.label`` (the same partition, consecutive labels) on
arrays chunked in odd ways: chunks of one element, irregular chunks, a single chunk, empty and
full arrays, contacts only at the corner of four (eight) chunks, a spiral across many chunks,
every connectivity, 32- and 64-bit labels (a label base past 2^32 injected on a small array),
and each chunk labeled exactly once per compute, on the threaded scheduler and on
``dask.distributed``; on a CUDA device, NumPy chunks whose labels stay on the GPU until they are
renumbered (or come back at once where it has no room) and CuPy chunks."""

import importlib
import itertools
import os

import numpy as np
import pytest


def _require(module: str):
    """A module the suite needs: required in full mode (scripts/setup.sh installs it), else the
    tests are skipped where it is missing."""
    if os.environ.get("CCL_TEST_FULL") == "1":
        return importlib.import_module(module)
    return pytest.importorskip(module)


dask = _require("dask")
da = _require("dask.array")
ndi = _require("scipy.ndimage")

import ccl.dask  # noqa: E402

STRUCTURE = {4: (2, 1), 8: (2, 2), 6: (3, 1), 18: (3, 2), 26: (3, 3)}


def _check(labels, num, image, connectivity, base=0):
    """``labels`` (computed) partition ``image`` as scipy does, numbered base+1..base+num."""
    rank, order = STRUCTURE[connectivity]
    want, n = ndi.label(image, ndi.generate_binary_structure(rank, order))
    assert num == n, f"{num} components, scipy {n}"
    fg = want > 0
    assert ((labels > 0) == fg).all(), "background differs"
    if n:
        got = labels[fg].astype(np.uint64) - np.uint64(base)
        assert got.min() == 1 and got.max() == n, "labels not consecutive"
        pairs = np.unique(np.stack([want[fg].astype(np.uint64), got]), axis=1)
        assert pairs.shape[1] == n, "not the same partition"


def _label(image, chunks, connectivity, **kw):
    before = next(ccl.dask._labelings)
    array = da.from_array(image, chunks=chunks)
    labels, num = ccl.dask.label(array, connectivity=connectivity, device="cpu", **kw)
    assert labels.chunks == array.chunks
    labels, num = dask.compute(labels, num, scheduler="threads")
    labeled = next(ccl.dask._labelings) - before - 1
    assert labeled == int(np.prod(array.numblocks)), f"{labeled} chunk labelings for {array.numblocks} chunks"
    return labels, int(num)


def _spiral(n):
    on = np.zeros((n, n), bool)
    lo, hi = 0, n - 1
    while lo <= hi:
        on[lo, lo : hi + 1] = on[lo : hi + 1, hi] = on[hi, lo : hi + 1] = True
        on[lo + 2 : hi + 1, lo] = True
        if lo + 2 <= hi:
            on[lo + 2, lo + 1] = True
        lo, hi = lo + 2, hi - 2
    return on


CASES_2D = {
    "random, irregular chunks": (np.random.default_rng(1).random((37, 29)) < 0.5, ((5, 1, 20, 11), (7, 7, 15))),
    "chunks of one element": (np.random.default_rng(2).random((9, 8)) < 0.5, 1),
    "one chunk": (np.random.default_rng(3).random((20, 20)) < 0.5, -1),
    "spiral across many chunks": (_spiral(41), 6),
    "corner of four chunks": (np.eye(8, dtype=bool)[::-1] | np.eye(8, dtype=bool), 4),
    "empty": (np.zeros((12, 10), bool), 5),
    "full": (np.ones((12, 10), bool), 5),
}


@pytest.mark.parametrize("case", sorted(CASES_2D))
@pytest.mark.parametrize("connectivity", [4, 8])
def test_images_in_chunks(case, connectivity):
    image, chunks = CASES_2D[case]
    labels, num = _label(image, chunks, connectivity)
    _check(labels, num, image, connectivity)


def _corner_volume():
    volume = np.zeros((8, 8, 8), bool)
    volume[3, 3, 3] = volume[4, 4, 4] = True  # touch only at the corner of eight 4^3 chunks
    volume[3, 4, 3] = volume[4, 3, 5] = True
    return volume


CASES_3D = {
    "random, irregular chunks": (np.random.default_rng(4).random((13, 11, 17)) < 0.4, ((4, 9), (1, 5, 5), (6, 11))),
    "chunks of one element": (np.random.default_rng(5).random((4, 5, 3)) < 0.5, 1),
    "one chunk": (np.random.default_rng(6).random((9, 9, 9)) < 0.5, -1),
    "corners of eight chunks": (_corner_volume(), 4),
    "full": (np.ones((6, 7, 8), bool), 3),
}


@pytest.mark.parametrize("case", sorted(CASES_3D))
@pytest.mark.parametrize("connectivity", [6, 18, 26])
def test_volumes_in_chunks(case, connectivity):
    volume, chunks = CASES_3D[case]
    labels, num = _label(volume, chunks, connectivity)
    _check(labels, num, volume, connectivity)


def test_64_bit_labels_from_a_base_past_32_bits():
    image = np.random.default_rng(7).random((30, 26)) < 0.5
    base = 2**32 + 3
    labels, num = _label(image, (7, 9), 8, dtype=np.uint64, _label_base=base)
    assert labels.dtype == np.uint64 and labels.max() > 2**32
    _check(labels, num, image, 8, base)
    with pytest.raises(ValueError, match="uint64"):
        ccl.dask.label(da.from_array(image), dtype=np.uint32, _label_base=base)
    with pytest.raises(ValueError, match="uint32 or uint64"):
        ccl.dask.label(da.from_array(image), dtype=np.int8)


def test_labels_and_count_computed_apart_label_each_chunk_once_each():
    image = np.random.default_rng(8).random((20, 20)) < 0.5
    labels, num = ccl.dask.label(da.from_array(image, chunks=5), device="cpu")
    before = next(ccl.dask._labelings)
    labels.compute(scheduler="threads")
    num.compute(scheduler="threads")
    assert next(ccl.dask._labelings) - before - 1 == 2 * 16


def test_on_dask_distributed():
    distributed = _require("distributed")
    Client, LocalCluster = distributed.Client, distributed.LocalCluster
    volume = np.random.default_rng(9).random((16, 12, 10)) < 0.4
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        with Client(cluster):
            labels, num = ccl.dask.label(da.from_array(volume, chunks=(5, 6, 4)), connectivity=26, device="cpu")
            labels, num = dask.compute(labels, num)
    _check(labels, int(num), volume, 26)


def test_a_persisted_array_on_dask_distributed():
    # dask 2025.3 hands the chunks of a persisted array to the graph as their keys unless the
    # array's graph is left unoptimized: labeled as tuples, not arrays.
    distributed = _require("distributed")
    Client, LocalCluster = distributed.Client, distributed.LocalCluster
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        with Client(cluster):
            image = (da.random.RandomState(3).random_sample((24, 20, 18), chunks=(8, 10, 9)) < 0.45).persist()
            distributed.wait(image)
            labels, num = ccl.dask.label(image, connectivity=18, device="cpu")
            labels, num = dask.persist(labels, num)
            labels, num = labels.compute(), int(num.compute())
            volume = image.compute()
    _check(labels, num, volume, 18)


def test_zarr_in_and_out(tmp_path):
    # A volume larger than memory is read from zarr and its labels written to zarr, chunk by chunk.
    zarr = _require("zarr")
    volume = np.random.default_rng(12).random((18, 16, 14)) < 0.45
    source = zarr.open_array(tmp_path / "in.zarr", mode="w", shape=volume.shape, chunks=(5, 8, 7), dtype=bool)
    source[...] = volume
    labels, num = ccl.dask.label(da.from_zarr(str(tmp_path / "in.zarr")), connectivity=26, device="cpu")
    labels.to_zarr(str(tmp_path / "labels.zarr"))
    written = zarr.open_array(tmp_path / "labels.zarr", mode="r")
    assert written.dtype == np.uint32 and written.chunks == (5, 8, 7)
    _check(written[...], int(num.compute()), volume, 26)



@pytest.mark.parametrize("shape, chunks", [((0, 5), (1, 2)), ((4, 0, 3), 2)])
def test_arrays_of_no_elements(shape, chunks):
    labels, num = _label(np.zeros(shape, bool), chunks, 8 if len(shape) == 2 else 26)
    assert labels.shape == shape and labels.dtype == np.uint32 and num == 0


def test_a_background_value_as_ccl_label():
    values = np.random.default_rng(21).integers(-2, 3, (23, 31)).astype(np.int16)
    labels, num = _label(values, (7, 9), 8, background=-2)
    _check(labels, num, values != -2, 8)
    with pytest.raises(ValueError, match="not a value of a int16"):
        ccl.dask.label(da.from_array(values), background=1 << 20)


# --- GPU chunks (skipped without CuPy or a CUDA device, unless CCL_REQUIRE_BACKENDS names cuda) ---

REQUIRE_CUDA = "cuda" in [t.strip().lower() for t in os.environ.get("CCL_REQUIRE_BACKENDS", "").split(",")]


@pytest.fixture(scope="module")
def cp():
    reason = None
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1 or not any(d[0] == "cuda:0" for d in ccl.devices()):
            reason = "no CUDA device"
    except Exception as error:  # ImportError, or CuPy without a driver
        reason = f"CuPy cannot reach a CUDA device: {error}"
    if reason is not None:
        if REQUIRE_CUDA:
            pytest.fail(f"CCL_REQUIRE_BACKENDS names cuda, but {reason}")
        pytest.skip(reason)
    return cupy


def _count_downloads(monkeypatch) -> list:
    """Counts the chunks whose labels come back from the GPU through ``ccl.dask._download``."""
    calls = []
    download = ccl.dask._download

    def counted(labels, stream):
        calls.append(labels.shape)
        return download(labels, stream)

    monkeypatch.setattr(ccl.dask, "_download", counted)
    return calls


@pytest.mark.parametrize("case", sorted(CASES_2D))
def test_numpy_chunks_keep_their_labels_on_the_gpu(cp, monkeypatch, case):
    # Pieces of 4 KiB: chunks of labels come back in several pieces through the pinned buffer.
    monkeypatch.setattr(ccl.dask, "_PIECE", 4096)
    downloads = _count_downloads(monkeypatch)
    image, chunks = CASES_2D[case]
    array = da.from_array(image, chunks=chunks)
    labels, num = ccl.dask.label(array, connectivity=8, device="cuda:0")
    labels, num = dask.compute(labels, num, scheduler="threads")
    assert isinstance(labels, np.ndarray) and labels.dtype == np.uint32
    _check(labels, int(num), image, 8)
    assert len(downloads) == int(np.prod(array.numblocks))


def test_numpy_chunks_without_room_on_the_gpu_come_back_to_the_host(cp, monkeypatch):
    downloads = _count_downloads(monkeypatch)
    monkeypatch.setattr(ccl.dask, "_DEVICE_RESERVE", 1 << 62)
    volume = np.random.default_rng(31).random((30, 26, 22)) < 0.35
    labels, num = ccl.dask.label(da.from_array(volume, chunks=(11, 9, 8)), connectivity=26, device="cuda:0")
    labels, num = dask.compute(labels, num, scheduler="threads")
    assert isinstance(labels, np.ndarray)
    _check(labels, int(num), volume, 26)
    assert downloads == []


@pytest.mark.parametrize("connectivity", [6, 18, 26])
def test_cupy_chunks_stay_on_the_gpu(cp, connectivity):
    volume = np.random.default_rng(32).random((30, 26, 22)) < 0.35
    array = da.from_array(cp.asarray(volume), chunks=(7, 13, 10), asarray=False)
    labels, num = ccl.dask.label(array, connectivity=connectivity, dtype=np.uint64)
    labels, num = dask.compute(labels, num, scheduler="threads")
    assert isinstance(labels, cp.ndarray) and labels.dtype == np.uint64
    _check(labels.get(), int(num), volume, connectivity)


def test_numpy_chunks_on_the_gpu_with_dask_distributed(cp):
    distributed = _require("distributed")
    volume = np.random.default_rng(33).random((32, 30, 28)) < 0.4
    with distributed.LocalCluster(n_workers=1, threads_per_worker=4, processes=False, dashboard_address=None) as c:
        with distributed.Client(c):
            labels, num = ccl.dask.label(da.from_array(volume, chunks=(9, 16, 10)), connectivity=26)
            labels, num = dask.compute(labels, num)
    _check(labels, int(num), volume, 26)


def _touching_pairs(a, b, budget):
    """The pairs of ``_boundary_pairs`` by brute force, as a set."""
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    found = set()
    for y, x in np.ndindex(*a.shape):
        for dy, dx in itertools.product((-1, 0, 1), repeat=2):
            if (dy != 0) + (dx != 0) > budget or not (0 <= y + dy < a.shape[0] and 0 <= x + dx < a.shape[1]):
                continue
            if a[y, x] and b[y + dy, x + dx]:
                found.add((int(a[y, x]), int(b[y + dy, x + dx])))
    return found


def test_boundary_pairs_of_several_boundaries_in_one_call():
    rng = np.random.default_rng(41)
    labels = lambda shape: np.array(rng.integers(0, 4, shape) * (rng.random(shape) < 0.6), np.uint32)  # noqa: E731
    boundaries = [(labels((9, 7)), labels((9, 7)), 2), (labels((9, 7)), labels((9, 7)), 0), (labels(13), labels(13), 1)]
    boundaries += [(labels(()), labels(()), 0), (labels((0, 5)), labels((0, 5)), 2), (labels((4, 6)), labels((4, 6)), 1)]
    pairs = ccl._ccl._boundary_pairs(boundaries)
    assert len(pairs) == len(boundaries)
    for (a, b, budget), (first, second) in zip(boundaries, pairs):
        assert first.dtype == second.dtype == np.uint64
        assert set(zip(first.tolist(), second.tolist())) == _touching_pairs(a, b, budget)
    assert ccl._ccl._boundary_pairs([]) == []
    with pytest.raises(ValueError, match=r"\[3, 4\] and \[4, 3\]"):
        ccl._ccl._boundary_pairs([boundaries[0], (labels((3, 4)), labels((4, 3)), 1)])
