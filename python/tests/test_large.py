"""Arrays labeled in slabs (``ccl.label`` with ``max_device_bytes``, ``CCL_MAX_DEVICE_BYTES`` or
``dtype=np.uint64``): the same labels, bit for bit, as labeling the array whole, on every device
and connectivity, with caps that cut one-plane, uneven and single slabs; bad caps and dtypes are
refused. The Rust suite (tests/slabs.rs) checks the slabs themselves more widely."""

import numpy as np
import pytest

import ccl
from _devices import DEVICES

PLANE_BYTES = ccl.DEVICE_BYTES_PER_ELEMENT


def _arrays():
    rng = np.random.default_rng(5)
    yield "image", rng.random((61, 43)) < 0.5, (4, 8)
    yield "stairs", np.fromfunction(lambda y, x: (x + y) % 3 == 0, (40, 21)), (4, 8)
    yield "volume", rng.random((17, 11, 13)) < 0.45, (6, 18, 26)
    yield "volume full", np.ones((9, 4, 5), bool), (6, 18, 26)
    yield "volume empty", np.zeros((9, 4, 5), bool), (6, 18, 26)


@pytest.mark.parametrize("device", DEVICES)
def test_slabs_equal_the_whole_labeling(device):
    for name, array, connectivities in _arrays():
        plane = int(np.prod(array.shape[1:]))
        for connectivity in connectivities:
            whole, n = ccl.label(array, connectivity, device=device, return_num=True)
            for planes in (1, 2, 5, array.shape[0]):
                cap = planes * plane * PLANE_BYTES
                got, m = ccl.label(array, connectivity, device=device, return_num=True, max_device_bytes=cap)
                assert m == n and got.dtype == np.uint32, (name, connectivity, planes)
                np.testing.assert_array_equal(got, whole, err_msg=f"{name} {connectivity} {planes} planes")
            wide, m = ccl.label(array, connectivity, device=device, return_num=True, dtype=np.uint64)
            assert wide.dtype == np.uint64 and m == n
            np.testing.assert_array_equal(wide, whole)


def test_the_environment_caps_device_memory(monkeypatch):
    array = np.random.default_rng(2).random((50, 30)) < 0.5
    whole = ccl.label(array, device="cpu")
    monkeypatch.setenv("CCL_MAX_DEVICE_BYTES", str(3 * 30 * PLANE_BYTES))
    np.testing.assert_array_equal(ccl.label(array, device="cpu"), whole)
    monkeypatch.setenv("CCL_MAX_DEVICE_BYTES", "many")
    with pytest.raises(ValueError, match="CCL_MAX_DEVICE_BYTES"):
        ccl.label(array, device="cpu")


def test_slab_arguments_are_checked():
    array = np.ones((10, 10), bool)
    with pytest.raises(ValueError, match="cap"):
        ccl.label(array, device="cpu", max_device_bytes=10 * PLANE_BYTES - 1)
    with pytest.raises(ValueError, match="max_device_bytes"):
        ccl.label(array, device="cpu", max_device_bytes=-5)
    with pytest.raises(ValueError, match="uint32, int32, uint64 or int64"):
        ccl.label(array, device="cpu", dtype=np.int16)
    out = np.zeros((10, 10), np.uint64)
    assert ccl.label(array, device="cpu", output=out, dtype=np.uint64) is out and out.max() == 1
    with pytest.raises(ValueError, match="output"):
        ccl.label(array, device="cpu", output=np.zeros((10, 10), np.uint32), dtype=np.uint64)


def test_labels_from_a_base_past_32_bits():
    array = np.random.default_rng(3).random((30, 20)) < 0.5
    whole = ccl.label(array, device="cpu")
    base = 2**32 + 7
    labels, n, slabs = ccl._ccl._label_slabs(array.view(np.uint8), 8, None, "cpu", 4 * 20 * PLANE_BYTES, 64, base)
    assert slabs == 8 and labels.dtype == np.uint64
    np.testing.assert_array_equal(labels, np.where(whole > 0, whole.astype(np.uint64) + base, 0))


def test_64_bit_labels_from_slabs_are_returned_without_a_copy():
    # Slabs make uint64 labels (gigabytes, past 2^32 elements): dtype uint64 returns them as
    # they are and int64 as a view of them, never a second array of that size.
    array = np.random.default_rng(4).random((20, 30)) < 0.5
    raw, n, _ = ccl._ccl._label_slabs(array.view(np.uint8), 8, None, "cpu", None, 64, 0)
    for dtype in (np.uint64, np.int64):
        labels = ccl._with_dtype(raw, np.dtype(dtype), n)
        assert labels.dtype == dtype and np.shares_memory(labels, raw)
    np.testing.assert_array_equal(ccl.label(array, device="cpu", dtype=np.int64), ccl.label(array, device="cpu"))


@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.uint64, np.int64])
def test_slabs_write_into_an_output(dtype):
    array = np.random.default_rng(6).random((41, 23)) < 0.5
    whole = ccl.label(array, device="cpu")
    output = np.full(array.shape, 7, dtype)
    labels = ccl.label(array, device="cpu", output=output, dtype=dtype, max_device_bytes=5 * 23 * PLANE_BYTES)
    assert labels is output
    np.testing.assert_array_equal(output, whole)
    strided = np.zeros((41, 46), dtype)[:, ::2]
    with pytest.raises(ValueError, match="C-contiguous, writeable"):
        ccl.label(array, device="cpu", output=strided, dtype=dtype, max_device_bytes=5 * 23 * PLANE_BYTES)
    assert not strided.any()


def test_a_memory_mapped_npy_in_slabs(tmp_path):
    # np.load(mmap_mode="r") hands ccl.label the file's pages: slabs read them as they go, so an
    # array larger than host memory needs none of its own.
    image = np.random.default_rng(13).random((70, 50)) < 0.5
    np.save(tmp_path / "a.npy", image)
    mapped = np.load(tmp_path / "a.npy", mmap_mode="r")
    labels, n = ccl.label(mapped, device="cpu", return_num=True, max_device_bytes=7 * 50 * PLANE_BYTES, dtype=np.uint64)
    whole, m = ccl.label(image, device="cpu", return_num=True)
    assert n == m and labels.dtype == np.uint64
    np.testing.assert_array_equal(labels, whole)


# --- Slabs where the array lies (ccl._slabs: GPU arrays past 32-bit labels) ----------------------
# The steps run here on NumPy with the host labeler, as they run on CuPy with the CUDA one
# (test_gpu_arrays.py drives them through ccl.label with a fake and a real CuPy).


def _spiral(size: int) -> np.ndarray:
    """A path winding inwards, one gap between its turns: one component whose labels meet across
    each slab boundary many times, joined only through far slabs."""
    image = np.zeros((size, size), bool)
    y, x, dy, dx = 0, 0, 0, 1
    top, left, bottom, right = 2, 0, size - 1, size - 1  # the turn limits, shrinking by 2
    image[y, x] = True
    while True:
        moved = False
        while (dx == 1 and x < right) or (dx == -1 and x > left) or (dy == 1 and y < bottom) or (dy == -1 and y > top):
            y, x = y + dy, x + dx
            image[y, x] = moved = True
        if not moved:
            return image
        if dx == 1:
            right -= 2
        elif dx == -1:
            left += 2
        elif dy == 1:
            bottom -= 2
        else:
            top += 2
        dy, dx = dx, -dy


def _slab_cases():
    rng = np.random.default_rng(17)
    yield "image", rng.random((61, 43)) < 0.5, (4, 8)
    yield "spiral", _spiral(33), (4, 8)
    yield "diagonal", np.eye(24, dtype=bool), (4, 8)  # contacts only at corners
    yield "volume", rng.random((17, 11, 13)) < 0.45, (6, 18, 26)
    yield "corners", np.fromfunction(lambda z, y, x: (x + y + z) % 2 == 0, (8, 5, 6)), (6, 18, 26)
    yield "full", np.ones((9, 4, 5), bool), (6, 26)
    yield "empty", np.zeros((9, 4, 5), bool), (6, 26)


def _host_slab_labeler(connectivity):
    def label_slab(slab, labels):
        return ccl.label(slab, connectivity, device="cpu", output=labels, return_num=True)[1]

    return label_slab


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64, np.int64])
def test_slabs_where_the_array_lies_equal_the_whole_labeling(dtype):
    from ccl import _slabs

    for name, array, connectivities in _slab_cases():
        plane = int(np.prod(array.shape[1:]))
        binary = array.view(np.uint8)
        for connectivity in connectivities:
            whole, n = ccl.label(array, connectivity, device="cpu", return_num=True)
            for planes in (1, 2, 5, array.shape[0], array.shape[0] + 3):
                label_slab = _host_slab_labeler(connectivity)
                got, m = _slabs.label(binary, connectivity, label_slab, np, dtype, planes * plane + plane // 2)
                assert m == n and got.dtype == dtype, (name, connectivity, planes)
                np.testing.assert_array_equal(got, whole, err_msg=f"{name} {connectivity} {planes} planes")


def test_slabs_where_the_array_lies_apply_the_filters_as_the_whole_labeling():
    from ccl import _slabs

    array = np.random.default_rng(23).random((40, 37)) < 0.55
    for min_size, keep_largest in [(3, None), (None, 4), (5, 2), (10**6, None), (None, 0), (1, 10**6)]:
        whole, n = ccl.label(array, 4, device="cpu", return_num=True, min_size=min_size, keep_largest=keep_largest)
        for planes in (1, 3, 40):
            got, m = _slabs.label(
                array.view(np.uint8), 4, _host_slab_labeler(4), np, np.uint64, planes * 37, filters=(min_size, keep_largest)
            )
            assert m == n, (min_size, keep_largest, planes)
            np.testing.assert_array_equal(got, whole, err_msg=f"{min_size} {keep_largest} {planes}")


def test_slabs_where_the_array_lies_from_a_base_past_32_bits():
    from ccl import _slabs

    array = np.random.default_rng(29).random((30, 20)) < 0.5
    whole = ccl.label(array, 8, device="cpu").astype(np.uint64)
    base = 2**32 + 7
    for filters in [(None, None), (2, 3)]:
        want = ccl.label(array, 8, device="cpu", min_size=filters[0], keep_largest=filters[1]).astype(np.uint64)
        got, n = _slabs.label(array.view(np.uint8), 8, _host_slab_labeler(8), np, np.uint64, 4 * 20, filters=filters, base=base)
        assert n == want.max()
        np.testing.assert_array_equal(got, np.where(want > 0, want + base, 0))
    del whole
    with pytest.raises(ValueError, match="do not fit labels of dtype uint32"):
        _slabs.label(array.view(np.uint8), 8, _host_slab_labeler(8), np, np.uint32, 4 * 20, base=base)


def test_slabs_where_the_array_lies_are_whole_planes():
    from ccl import _slabs

    assert _slabs.plan((10, 4, 5), 45) == [(0, 2), (2, 4), (4, 6), (6, 8), (8, 10)]
    assert _slabs.plan((3, 4), 100) == [(0, 3)]
    with pytest.raises(ValueError, match="a plane of shape \\(4, 5\\) has 20 elements"):
        _slabs.plan((10, 4, 5), 19)
