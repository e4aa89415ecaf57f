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
