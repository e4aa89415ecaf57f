"""The Python package against SciPy and OpenCV on every device ccl finds (POCL and the CPU
reference in CI): labels equal to scipy.ndimage.label (same numbering), statistics equal to
cv2.connectedComponentsWithStats, every dtype and memory layout, volumes, errors."""

import numpy as np
import pytest

import ccl

scipy_ndimage = pytest.importorskip("scipy.ndimage")
cv2 = pytest.importorskip("cv2")

from _devices import DEVICES


def random_image(shape, density, seed):
    return np.random.default_rng(seed).random(shape) < density


def scipy_label(image, connectivity):
    rank = {4: 1, 8: 2, 6: 1, 18: 2, 26: 3}[connectivity]
    structure = scipy_ndimage.generate_binary_structure(image.ndim, rank)
    return scipy_ndimage.label(image, structure=structure)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("connectivity", [4, 8])
@pytest.mark.parametrize("density", [0.0, 0.1, 0.45, 0.9, 1.0])
def test_images_label_as_scipy(device, connectivity, density):
    image = random_image((67, 131), density, int(density * 100) + connectivity)
    labels, num = ccl.label(image, connectivity=connectivity, device=device, return_num=True)
    want, n = scipy_label(image, connectivity)
    assert labels.dtype == np.uint32 and labels.shape == image.shape
    assert num == n
    np.testing.assert_array_equal(labels, want)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("connectivity", [6, 18, 26])
def test_volumes_label_as_scipy(device, connectivity):
    volume = random_image((9, 17, 23), 0.35, connectivity)
    labels, num = ccl.label(volume, connectivity=connectivity, device=device, return_num=True)
    want, n = scipy_label(volume, connectivity)
    assert num == n
    np.testing.assert_array_equal(labels, want)


@pytest.mark.parametrize("device", DEVICES)
def test_every_algorithm_gives_the_same_labels(device):
    image = random_image((45, 77), 0.5, 3)
    want, _ = scipy_label(image, 8)
    for algorithm in ccl.algorithms():
        np.testing.assert_array_equal(ccl.label(image, algorithm=algorithm, device=device), want, err_msg=algorithm)


@pytest.mark.parametrize(
    "dtype", [bool, np.uint8, np.int8, np.uint16, np.int16, np.int32, np.uint32, np.int64, np.float32, np.float64]
)
def test_every_dtype(dtype):
    values = random_image((31, 29), 0.5, 7).astype(np.int64) * 3  # 0 or 3: nonzero is foreground
    image = values.astype(dtype)
    np.testing.assert_array_equal(ccl.label(image, device="cpu"), scipy_label(image != 0, 8)[0])


def test_strided_and_fortran_views_are_labeled_as_their_values():
    base = random_image((90, 120), 0.5, 11).astype(np.uint8)
    for view in [base[::2, ::3], base[5:70, 10:100], base.T, np.asfortranarray(base), base[::-1, ::-1]]:
        for device in DEVICES:
            np.testing.assert_array_equal(ccl.label(view, device=device), scipy_label(view, 8)[0])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("connectivity", [4, 8])
def test_stats_equal_opencv(device, connectivity):
    image = random_image((73, 129), 0.4, connectivity).astype(np.uint8)
    num, labels, stats, centroids = ccl.label_with_stats(image, connectivity=connectivity, device=device)
    cv_num, cv_labels, cv_stats, cv_centroids = cv2.connectedComponentsWithStats(image, connectivity=connectivity)
    assert num == cv_num
    # The same partition; OpenCV may number components in another order: map ours to its.
    order = np.zeros(num, dtype=np.int64)
    order[labels.ravel()] = cv_labels.ravel()
    np.testing.assert_array_equal(order[labels], cv_labels)
    np.testing.assert_array_equal(stats, cv_stats[order])
    np.testing.assert_allclose(centroids, cv_centroids[order], rtol=0, atol=1e-9)
    assert stats.shape == (num, 5) and centroids.shape == (num, 2)


def test_stats_of_a_volume():
    volume = np.zeros((4, 5, 6), dtype=bool)
    volume[1:3, 2, 1:4] = True
    volume[3, 4, 5] = True
    num, labels, stats, centroids = ccl.label_with_stats(volume, device="cpu")
    assert num == 3 and stats.shape == (3, 7) and centroids.shape == (3, 3)
    np.testing.assert_array_equal(stats[1], [1, 2, 1, 3, 1, 2, 6])  # left, top, front, width, height, depth, area
    np.testing.assert_array_equal(centroids[1], [2.0, 2.0, 1.5])
    np.testing.assert_array_equal(stats[2], [5, 4, 3, 1, 1, 1, 1])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("density", [0.5, 1.0])
def test_a_volume_of_one_slice_has_its_images_statistics_and_z_columns(device, density):
    image = random_image((23, 31), density, 8).astype(np.uint8)
    num, labels, stats, centroids = ccl.label_with_stats(image, device=device)
    num3, labels3, stats3, centroids3 = ccl.label_with_stats(image[None], connectivity=26, device=device)
    assert num3 == num and stats3.shape == (num, 7) and centroids3.shape == (num, 3)
    np.testing.assert_array_equal(labels3[0], labels)
    np.testing.assert_array_equal(stats3[:, [0, 1, 3, 4, 6]], stats)
    present = stats[:, 4] > 0  # the background's row is empty without background
    np.testing.assert_array_equal(stats3[:, 2], 0)
    np.testing.assert_array_equal(stats3[:, 5], present.astype(np.int64))
    np.testing.assert_array_equal(centroids3[:, :2], centroids)
    np.testing.assert_array_equal(centroids3[:, 2], np.where(present, 0.0, np.nan))


def test_errors_are_python_exceptions_with_the_librarys_message():
    with pytest.raises(ValueError, match="dimensions"):
        ccl.label(np.ones(5))
    with pytest.raises(ValueError, match="connectivity 26"):
        ccl.label(np.ones((3, 3)), connectivity=26)
    with pytest.raises(ValueError, match="unknown algorithm"):
        ccl.label(np.ones((3, 3)), algorithm="nope", device="cpu")
    with pytest.raises(ValueError):
        ccl.label(np.ones((3, 3)), device="nope:1")
    with pytest.raises(ValueError, match="dtype"):
        ccl.label(np.array([["a", "b"], ["c", "d"]]))
    with pytest.raises(ValueError, match="BKE"):
        ccl.label(np.ones((3, 3)), connectivity=4, algorithm="BKE", device="cpu")


def test_help_reads_like_scipys():
    assert "Returns" in ccl.label.__doc__ and "connectivity" in ccl.label.__doc__
    assert "connectedComponentsWithStats" in ccl.label_with_stats.__doc__


@pytest.mark.parametrize("device", DEVICES)
def test_threads_label_at_once_each_its_own_image(device):
    # Each call borrows a labeler of its own (made while others are lent), so calls from several
    # threads run together: images of different shapes, volumes, statistics and binarized pages
    # interleaved, each equal to SciPy's labels.
    from concurrent.futures import ThreadPoolExecutor

    def work(seed):
        shape = (40 + seed % 7, 50 + 3 * seed) if seed % 3 else (9, 11 + seed % 5, 13)
        image = random_image(shape, 0.45, seed)
        connectivity = (8 if seed % 2 else 4) if image.ndim == 2 else 26
        want, n = scipy_label(image, connectivity)
        if seed % 4 == 1:
            num, labels, stats, _ = ccl.label_with_stats(image, connectivity, device=device)
            assert num == n + 1 and stats[1:, -1].sum() == image.sum()
        else:
            labels, num = ccl.label(image, connectivity, device=device, return_num=True)
            assert num == n
        np.testing.assert_array_equal(labels, want)
        page = np.where(random_image((48, 64), 0.5, seed), 40, 220).astype(np.uint8)
        np.testing.assert_array_equal(ccl.label(page, binarize="otsu", device=device), scipy_label(page < 128, 8)[0])

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(work, range(36)))


@pytest.mark.parametrize("device", DEVICES)
def test_output_arrays_receive_the_labels(device):
    image = random_image((61, 87), 0.45, 21)
    want, n = scipy_label(image, 8)
    for dtype in (np.uint32, np.int32):
        output = np.full(image.shape, 7, dtype=dtype)
        labels, num = ccl.label(image, device=device, return_num=True, output=output)
        assert labels is output and num == n
        np.testing.assert_array_equal(output, want)
    output = np.zeros(image.shape, dtype=np.uint32)
    num, labels, stats, _ = ccl.label_with_stats(image, device=device, output=output)
    assert labels is output and num == n + 1
    np.testing.assert_array_equal(output, want)
    for bad in (
        np.zeros(image.shape, dtype=np.int64),
        np.zeros((61, 86), dtype=np.uint32),
        np.zeros(image.shape[::-1], dtype=np.uint32).T,  # not C-contiguous
        [[0] * 87] * 61,
    ):
        with pytest.raises(ValueError, match="output"):
            ccl.label(image, device=device, output=bad)
    readonly = np.zeros(image.shape, dtype=np.uint32)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="output"):
        ccl.label(image, device=device, output=readonly)


@pytest.mark.parametrize("device", DEVICES)
def test_host_arrays_are_zeroed_inputs_and_outputs(device):
    image = random_image((40, 50), 0.5, 5)
    pixels = ccl.host_array(image.shape, device=device)
    out = ccl.host_array(image.shape, np.uint32, device=device)
    assert pixels.dtype == np.uint8 and pixels.shape == (40, 50) and not pixels.any()
    assert out.dtype == np.uint32 and out.shape == (40, 50) and pixels.flags.c_contiguous
    pixels[...] = image
    labels = ccl.label(pixels, device=device, output=out)
    assert labels is out
    np.testing.assert_array_equal(out, scipy_label(image, 8)[0])
    # A view keeps the memory alive after the array it came from is gone.
    view = out[3:10]
    del labels, out
    import gc

    gc.collect()
    np.testing.assert_array_equal(view, scipy_label(image, 8)[0][3:10])
    assert ccl.host_array(0).shape == (0,) and ccl.host_array((2, 0, 3), np.int32).shape == (2, 0, 3)
    with pytest.raises(ValueError, match="negative"):
        ccl.host_array((2, -1))


@pytest.mark.parametrize("device", DEVICES)
def test_background_box_when_the_faces_are_foreground(device):
    # A foreground frame: the background's box is the interior, found from projections.
    image = np.ones((23, 31), dtype=np.uint8)
    image[3:17, 5:20] = 0
    image[8, 9] = 1
    num, labels, stats, centroids = ccl.label_with_stats(image, device=device)
    cv_num, _, cv_stats, cv_centroids = cv2.connectedComponentsWithStats(image, connectivity=8)
    assert num == cv_num == 3
    np.testing.assert_array_equal(stats[0], cv_stats[0])
    np.testing.assert_allclose(centroids[0], cv_centroids[0], rtol=0, atol=1e-9)
    # Background on one face only (the bottom row): the fast path on x, a projection on y.
    image = np.ones((9, 12), dtype=np.uint8)
    image[8, 4:7] = 0
    _, _, stats, _ = ccl.label_with_stats(image, device=device)
    np.testing.assert_array_equal(stats[0], [4, 8, 3, 1, 3])


OCLGRIND_ICDS = ["/usr/lib/oclgrind/liboclgrind-rt-icd.so", "/usr/lib/x86_64-linux-gnu/oclgrind/liboclgrind-rt-icd.so"]


def test_default_falls_back_with_a_warning_on_a_device_with_small_work_groups(tmp_path):
    # Oclgrind with work-groups of at most 128 work-items: the first of the 8-connectivity
    # ranking cannot run there, so the default is the next that can, told as a UserWarning
    # that points at the caller's line.
    import os
    import subprocess
    import sys

    icd = next((p for p in [os.environ.get("CCL_OCLGRIND_ICD")] + OCLGRIND_ICDS if p and os.path.exists(p)), None)
    if icd is None:
        if "oclgrind" in [t.strip().lower() for t in os.environ.get("CCL_REQUIRE_BACKENDS", "").split(",")]:
            pytest.fail("CCL_REQUIRE_BACKENDS requires oclgrind, and no Oclgrind ICD library was found")
        pytest.skip("Oclgrind is not installed")
    (tmp_path / "oclgrind.icd").write_text(icd + "\n")
    env = dict(os.environ, OCL_ICD_VENDORS=str(tmp_path), OCLGRIND_MAX_WGSIZE="128", OCLGRIND_LOCAL_MEM_SIZE="32768")
    env.pop("OCL_ICD_FILENAMES", None)
    env["CCL_CACHE_DIR"] = str(tmp_path / "cache")
    script = """
import warnings, numpy as np, ccl
from scipy import ndimage
image = np.random.default_rng(5).random((21, 37)) < 0.5
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    labels = ccl.label(image, connectivity=8, device="opencl:0")
want, _ = ndimage.label(image, structure=np.ones((3, 3)))
assert (labels == want).all(), "wrong labels"
notes = [w for w in caught if issubclass(w.category, UserWarning)]
assert len(notes) == 1, [str(w.message) for w in notes]
assert notes[0].filename == "<string>", notes[0].filename  # the caller's line, not ccl's
print(notes[0].message)
"""
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "cannot run here" in run.stdout, run.stdout
