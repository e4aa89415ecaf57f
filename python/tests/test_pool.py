"""The label arrays ccl.label returns from an accelerator (any device but the CPU reference)
live in page-locked memory recycled through a pool: each holds the right labels, keeps its
memory while any view of it lives, and gives it back to the pool when it is gone."""

import gc

import numpy as np
import pytest

import ccl
from ccl import _ccl
from _devices import ALL_DEVICES

ACCELERATORS = [d for d in ALL_DEVICES if d != "cpu"]
SIDE = 1024  # 4 MiB of labels: pooled (at least 1 MiB)


def usage():
    gc.collect()
    return _ccl._pool_usage()[:2]


@pytest.mark.skipif(not ACCELERATORS, reason="no device but the CPU reference")
@pytest.mark.parametrize("device", ACCELERATORS)
def test_returned_labels_are_pooled_recycled_and_kept_alive_by_views(device):
    image = np.random.default_rng(7).random((SIDE, SIDE)) < 0.5
    want = ccl.label(image, device="cpu")
    other = ccl.label(~image, device="cpu")
    lent0, _ = usage()
    first = ccl.label(image, device=device)
    np.testing.assert_array_equal(first, want)
    assert usage()[0] == lent0 + first.nbytes, "the returned array is not from the pool"
    view = first[10:20]
    del first
    assert usage()[0] == lent0 + 4 * SIDE * SIDE, "a live view must keep its buffer lent"
    second = ccl.label(~image, device=device)
    np.testing.assert_array_equal(second, other)
    np.testing.assert_array_equal(view, want[10:20], err_msg="a viewed buffer was reused")
    del view, second
    lent, kept = usage()
    assert lent == lent0 and kept >= 2 * 4 * SIDE * SIDE
    third = ccl.label(image, device=device)
    assert usage() == (lent0 + third.nbytes, kept - third.nbytes), "a kept buffer is not reused"
    np.testing.assert_array_equal(third, want)


def test_the_cpu_reference_and_small_arrays_use_ordinary_memory():
    before = usage()
    labels = ccl.label(np.ones((SIDE, SIDE), bool), device="cpu")
    assert usage() == before and type(labels.base).__name__ != "PooledLabels"
    small = ccl.label(np.ones((16, 16), bool), device=ALL_DEVICES[0])
    assert usage() == before and small.max() == 1


@pytest.mark.skipif(not ACCELERATORS, reason="no device but the CPU reference")
@pytest.mark.parametrize("device", ACCELERATORS)
def test_numpy_batches_are_labeled_into_the_pool(device):
    batch = np.random.default_rng(8).random((3, 512, 700)) < 0.5
    lent0, _ = usage()
    labels, counts = ccl.label_batch(batch, device=device)
    assert usage()[0] == lent0 + labels.nbytes, "the batch's labels are not from the pool"
    for i, image in enumerate(batch):
        np.testing.assert_array_equal(labels[i], ccl.label(image, device="cpu"))
    del labels
    assert usage()[0] == lent0


def test_the_pool_is_bounded():
    lent, kept, limit = _ccl._pool_usage()
    assert 256 << 20 <= limit <= 4 << 30 and lent + kept <= limit
