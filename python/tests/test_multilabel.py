"""Multi-label images (``ccl.label(image, multilabel=True)``) on every device ccl finds: the
connected sets of equal values, the background value excepted, as scikit-image labels a label
image (the same numbering, int64) and as cc3d does (the same partition); every integer dtype,
signed backgrounds, volumes, filters and statistics, a real segmentation-like page, and the
errors."""

import numpy as np
import pytest

import ccl

skimage_measure = pytest.importorskip("skimage.measure")
cc3d = pytest.importorskip("cc3d")

from _devices import DEVICES, dibco_file

HOPS = {4: 1, 8: 2, 6: 1, 18: 2, 26: 3}


def classes(shape, count, granularity, seed):
    """``count`` random classes (0 among them) in cells of ``granularity`` elements a side."""
    rng = np.random.default_rng(seed)
    cells = rng.integers(0, count, tuple(-(-s // granularity) for s in shape))
    for axis in range(len(shape)):
        cells = cells.repeat(granularity, axis=axis)
    return cells[tuple(slice(0, s) for s in shape)]


def same_partition(a, b):
    if not np.array_equal(a == 0, b == 0):
        return False
    pairs = np.unique(np.stack([a[a != 0].astype(np.int64), b[b != 0].astype(np.int64)]), axis=1)
    return len(np.unique(pairs[0])) == pairs.shape[1] == len(np.unique(pairs[1]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("connectivity", [4, 8])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int32, np.uint32, np.int64, np.uint64])
def test_images_label_as_scikit_image_and_cc3d(device, connectivity, dtype):
    image = classes((83, 97), 8, 4, connectivity).astype(dtype)
    labels, num = ccl.label(image, connectivity, device=device, multilabel=True, return_num=True, dtype=np.int64)
    want, n = skimage_measure.label(image, background=0, connectivity=HOPS[connectivity], return_num=True)
    assert num == n and labels.dtype == np.int64
    np.testing.assert_array_equal(labels, want)
    theirs = cc3d.connected_components(image, connectivity=connectivity)
    assert same_partition(labels, theirs)
    # A binary labeling of the same image joins touching classes: fewer components.
    assert int(ccl.label(image, connectivity, device=device).max()) < num


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("connectivity", [6, 18, 26])
def test_volumes_label_as_scikit_image_and_cc3d(device, connectivity):
    volume = classes((13, 17, 19), 5, 2, connectivity).astype(np.uint16)
    labels = ccl.label(volume, connectivity, device=device, multilabel=True)
    want = skimage_measure.label(volume, background=0, connectivity=HOPS[connectivity])
    np.testing.assert_array_equal(labels, want)
    assert same_partition(labels, cc3d.connected_components(volume, connectivity=connectivity))


def dibco_bands():
    """A real DIBCO page (2016, gray) in 8 bands of 32 gray levels, a segmentation of many
    touching classes, where ../shared/data (or CCL_DATA_DIR) has one, else None."""
    path = dibco_file("2016", "Originals")
    if path is None:
        return None
    io = pytest.importorskip("skimage.io")
    page = io.imread(path)
    if page.ndim == 3:
        page = page[..., :3].mean(axis=2)
    return (page // 32).astype(np.uint8)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("connectivity", [4, 8])
def test_a_real_page_in_gray_bands_labels_as_scikit_image_and_cc3d(device, connectivity):
    bands = dibco_bands()
    if bands is None:
        pytest.skip("no DIBCO page in ../shared/data (the synthetic tests cover multi-label images)")
    labels, num = ccl.label(bands, connectivity, device=device, multilabel=True, return_num=True, dtype=np.int64)
    want, n = skimage_measure.label(bands, background=0, connectivity=HOPS[connectivity], return_num=True)
    assert num == n > 1000
    np.testing.assert_array_equal(labels, want)
    assert same_partition(labels, cc3d.connected_components(bands, connectivity=connectivity))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint64])
def test_component_values_name_each_components_class(device, dtype):
    image = (classes((45, 61), 6, 3, 4) * 3).astype(dtype)
    labels, num = ccl.label(image, device=device, multilabel=True, return_num=True)
    values = ccl.component_values(labels, image)
    assert values.dtype == image.dtype and values.shape == (num + 1,) and values[0] == 0
    np.testing.assert_array_equal(values[labels][labels > 0], image[labels > 0])
    # Against scikit-image's labels: each region's value there (its first pixel's).
    theirs = skimage_measure.label(image, background=0, connectivity=2)
    firsts = np.unique(theirs.ravel(), return_index=True)[1]
    np.testing.assert_array_equal(values[1:], image.ravel()[firsts[1:]])
    # Another background value, and filtered labels (removed components are background).
    shifted = image.astype(np.int64) - 3
    labels = ccl.label(shifted, device=device, multilabel=True, background=-3, min_size=10)
    values = ccl.component_values(labels, shifted, background=-3)
    assert values[0] == -3 and (values[1:] != -3).all()
    np.testing.assert_array_equal(values[labels][labels > 0], shifted[labels > 0])


def test_component_values_errors():
    image = classes((10, 12), 3, 2, 1).astype(np.uint8)
    labels = ccl.label(image, device="cpu", multilabel=True)
    with pytest.raises(ValueError, match="more than one value"):
        ccl.component_values(ccl.label(image, device="cpu"), image)  # a binary labeling
    with pytest.raises(ValueError, match="of shape"):
        ccl.component_values(labels[:5], image)
    with pytest.raises(ValueError, match="integers are expected"):
        ccl.component_values(labels.astype(np.float32), image)
    with pytest.raises(ValueError, match="negative labels"):
        ccl.component_values(labels.astype(np.int32) - 1, image)
    assert ccl.component_values(np.zeros((0, 3), np.uint32), np.zeros((0, 3), np.uint8)).tolist() == [0]


@pytest.mark.parametrize("device", DEVICES)
def test_backgrounds_of_any_value(device):
    image = classes((40, 52), 6, 3, 1).astype(np.int16) - 3  # -3..2
    for background in (-3, 0, 2, -1):
        labels = ccl.label(image, device=device, multilabel=True, background=background)
        want = skimage_measure.label(image, background=background, connectivity=2)
        np.testing.assert_array_equal(labels, want, err_msg=f"background {background}")
    wide = (classes((30, 30), 4, 3, 2).astype(np.uint64) << np.uint64(40)) + np.uint64(9)
    labels = ccl.label(wide, device=device, multilabel=True, background=int(wide[0, 0]))
    np.testing.assert_array_equal(labels, skimage_measure.label(wide, background=int(wide[0, 0]), connectivity=2))
    # bool and big-endian values; Fortran order.
    mask = classes((20, 30), 2, 2, 3).astype(bool)
    np.testing.assert_array_equal(ccl.label(mask, device=device, multilabel=True), ccl.label(mask, device=device))
    swapped = image.astype(image.dtype.newbyteorder(">"))
    np.testing.assert_array_equal(
        ccl.label(swapped, device=device, multilabel=True), ccl.label(image, device=device, multilabel=True)
    )
    np.testing.assert_array_equal(
        ccl.label(np.asfortranarray(image), device=device, multilabel=True),
        ccl.label(image, device=device, multilabel=True),
    )


@pytest.mark.parametrize("device", DEVICES)
def test_filters_and_statistics_of_multilabel_images(device):
    image = classes((64, 80), 5, 4, 7).astype(np.uint8)
    full, total = ccl.label(image, device=device, multilabel=True, return_num=True)
    sizes = np.bincount(full.ravel())[1:]
    labels, num = ccl.label(image, device=device, multilabel=True, min_size=20, return_num=True)
    assert num == int((sizes >= 20).sum())
    np.testing.assert_array_equal(labels > 0, np.isin(full, np.flatnonzero(sizes >= 20) + 1))
    dusted = cc3d.dust(image, threshold=20, connectivity=8, in_place=False)
    np.testing.assert_array_equal(labels > 0, dusted != 0)
    largest = ccl.label(image, device=device, multilabel=True, keep_largest=3)
    assert same_partition(largest, cc3d.largest_k(image, k=3, connectivity=8)) or len(set(np.sort(sizes)[-4:])) < 4
    count, labels_s, stats, centroids = ccl.label_with_stats(image, device=device, multilabel=True)
    assert count == total + 1
    np.testing.assert_array_equal(labels_s, full)
    np.testing.assert_array_equal(stats[1:, 4], sizes)


@pytest.mark.parametrize("device", DEVICES)
def test_multilabel_algorithms(device):
    image = classes((33, 41), 4, 2, 5).astype(np.uint8)
    want = ccl.label(image, device=device, multilabel=True)
    for algorithm in ("LE", "OLE", "UF", "UF_IC", "KE", "KE_IC", "TUF"):
        labels = ccl.label(image, device=device, multilabel=True, algorithm=algorithm)
        np.testing.assert_array_equal(labels, want, err_msg=algorithm)
    message = "BKE does not label multi-label images with 8-connectivity; LE, OLE, UF, UF_IC, KE, KE_IC, TUF do"
    with pytest.raises(ValueError, match=message):
        ccl.label(image, device=device, multilabel=True, algorithm="BKE")
    volume = classes((6, 7, 8), 3, 2, 1).astype(np.uint8)
    np.testing.assert_array_equal(
        ccl.label(volume, 6, device=device, multilabel=True, algorithm="TUF"),
        ccl.label(volume, 6, device=device, multilabel=True, algorithm="UF"),
    )
    message = "BKE does not label multi-label images with 26-connectivity; LE, OLE, UF, UF_IC, KE, KE_IC do"
    with pytest.raises(ValueError, match=message):
        ccl.label(volume, 26, device=device, multilabel=True, algorithm="BKE")


def test_multilabel_errors():
    image = np.zeros((4, 5), np.int16)
    with pytest.raises(ValueError, match="multi-label image of dtype float32"):
        ccl.label(image.astype(np.float32), multilabel=True, device="cpu")
    with pytest.raises(ValueError, match="not a value of a int16"):
        ccl.label(image, multilabel=True, background=70000, device="cpu")
    with pytest.raises(ValueError, match="max_device_bytes"):
        ccl.label(image, multilabel=True, max_device_bytes=1 << 20, device="cpu")
    with pytest.raises(ValueError, match="pass one"):
        ccl.label(image.astype(np.uint8), multilabel=True, binarize="otsu", device="cpu")
    assert ccl.label(image, multilabel=True, device="cpu").max() == 0
