"""ccl.label_batch: every item labeled as ccl.label labels it alone, on every device (full mode)."""

import numpy as np
import pytest

import ccl
from _devices import DEVICES


def random_batch(shape, density, seed):
    return np.random.default_rng(seed).random(shape) < density


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("connectivity", [4, 8])
def test_image_batches_label_as_single_calls(device, connectivity):
    batch = random_batch((9, 37, 53), 0.45, 1)
    labels, counts = ccl.label_batch(batch, connectivity=connectivity, device=device)
    assert labels.shape == batch.shape and labels.dtype == np.uint32
    assert counts.dtype == np.int64 and counts.shape == (9,)
    for i, image in enumerate(batch):
        want, n = ccl.label(image, connectivity=connectivity, device=device, return_num=True)
        np.testing.assert_array_equal(labels[i], want, err_msg=f"item {i}")
        assert counts[i] == n


@pytest.mark.parametrize("device", DEVICES)
def test_volume_batches_label_as_single_calls(device):
    batch = random_batch((4, 7, 11, 13), 0.3, 2).astype(np.float32)  # any dtype: nonzero
    labels, counts = ccl.label_batch(batch, connectivity=18, device=device)
    for i, volume in enumerate(batch):
        want, n = ccl.label(volume, connectivity=18, device=device, return_num=True)
        np.testing.assert_array_equal(labels[i], want)
        assert counts[i] == n


def test_lists_of_any_shapes_and_outputs():
    images = [random_batch((5, 9), 0.5, 3), random_batch((12, 4), 0.5, 4), random_batch((3, 4, 5), 0.5, 5)]
    labels, counts = ccl.label_batch(images, device="cpu")
    assert isinstance(labels, list) and len(labels) == 3
    for image, got, n in zip(images, labels, counts):
        want, m = ccl.label(image, device="cpu", return_num=True)
        np.testing.assert_array_equal(got, want)
        assert n == m
    batch = random_batch((3, 16, 16), 0.5, 6)
    out = np.full(batch.shape, 7, dtype=np.int32)
    labels, counts = ccl.label_batch(batch, device="cpu", output=out)
    assert labels is out
    np.testing.assert_array_equal(out[1], ccl.label(batch[1], device="cpu"))


def test_empty_batches_and_errors():
    labels, counts = ccl.label_batch(np.zeros((0, 4, 4), bool), device="cpu")
    assert labels.shape == (0, 4, 4) and counts.shape == (0,)
    with pytest.raises(ValueError, match="a batch has 3 dimensions"):
        ccl.label_batch(np.zeros((4, 4), bool), device="cpu")
    with pytest.raises(ValueError, match="connectivity 26 is not for an image"):
        ccl.label_batch(np.zeros((2, 4, 4), bool), connectivity=26, device="cpu")
    with pytest.raises(ValueError, match="output"):
        ccl.label_batch(np.zeros((2, 4, 4), bool), device="cpu", output=np.zeros((2, 4, 5), np.uint32))
    with pytest.raises(ValueError, match="empty"):
        ccl.label_batch(np.zeros((2, 0, 4), bool), device="cpu")


@pytest.mark.parametrize("device", DEVICES)
def test_batches_with_stats_match_label_with_stats(device):
    batch = random_batch((5, 31, 44), 0.5, 11)
    for images in (batch, list(batch)):
        labels, counts, stats, centroids = ccl.label_batch(images, connectivity=4, device=device, stats=True)
        assert len(stats) == len(centroids) == 5
        for i, image in enumerate(batch):
            num, want, want_stats, want_centroids = ccl.label_with_stats(image, connectivity=4, device=device)
            np.testing.assert_array_equal(labels[i], want)
            assert counts[i] == num - 1
            np.testing.assert_array_equal(stats[i], want_stats)
            np.testing.assert_allclose(centroids[i], want_centroids)
    volumes = random_batch((2, 6, 7, 8), 0.4, 12)
    labels, counts, stats, centroids = ccl.label_batch(volumes, device=device, stats=True)
    for i, volume in enumerate(volumes):
        num, want, want_stats, _ = ccl.label_with_stats(volume, device=device)
        np.testing.assert_array_equal(stats[i], want_stats)
        assert stats[i].shape == (num, 7) and centroids[i].shape == (num, 3)
