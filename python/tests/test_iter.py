"""ccl.label_iter: a stream of images labeled chunk by chunk, each result as ccl.label gives it,
in order, reading at most two chunks ahead."""

import numpy as np
import pytest

import ccl
from _devices import DEVICES


def frames(count, shape=(33, 47), seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield rng.random(shape) < 0.5


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("chunk", [1, 3, 8])
def test_a_stream_labels_as_single_calls_in_order(device, chunk):
    images = list(frames(10)) + [np.ones((5, 4, 3), np.uint8), np.eye(6, dtype=np.int32)]  # mixed shapes
    results = list(ccl.label_iter(iter(images), device=device, chunk=chunk))
    assert len(results) == len(images)
    for i, (image, (labels, n)) in enumerate(zip(images, results)):
        want, want_n = ccl.label(image, device=device, return_num=True)
        np.testing.assert_array_equal(labels, want, err_msg=f"item {i}")
        assert n == want_n and isinstance(n, int)


def test_the_stream_is_read_lazily_and_bounded():
    taken = []

    def endless():
        for i, image in enumerate(frames(10**9)):
            taken.append(i)
            yield image

    stream = ccl.label_iter(endless(), device="cpu", chunk=4)
    first = next(stream)
    assert first[1] > 0
    assert len(taken) <= 8, f"{len(taken)} images read for the first result of chunks of 4"
    stream.close()


def test_an_empty_stream_and_bad_chunks():
    assert list(ccl.label_iter([], device="cpu")) == []
    for chunk in [0, -1]:
        with pytest.raises(ValueError, match="chunk"):
            list(ccl.label_iter(frames(2), device="cpu", chunk=chunk))


def test_errors_reach_the_caller():
    with pytest.raises(ValueError):
        list(ccl.label_iter([np.ones((4, 4)), np.ones((2, 2, 2, 2))], device="cpu", chunk=1))
