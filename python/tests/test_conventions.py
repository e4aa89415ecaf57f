"""The call conventions users bring from scikit-image, SciPy and cc3d, on every device ccl finds:
``background=`` (scikit-image's), ``min_size=`` and ``keep_largest=`` (cc3d's ``dust`` and
``largest_k``, made on the device), ``dtype=`` (uint32, int32, uint64, int64), ``connectivity``
as hops (scikit-image's) and SciPy's ``structure``; the same labels as those libraries (their
numbering where they number in raster order, else the same partition), and clear errors."""

import numpy as np
import pytest

import ccl

scipy_ndimage = pytest.importorskip("scipy.ndimage")
skimage_measure = pytest.importorskip("skimage.measure")
cc3d = pytest.importorskip("cc3d")

from _devices import DEVICES

#: scikit-image's and SciPy's hops for ccl's neighbour counts.
HOPS = {4: 1, 8: 2, 6: 1, 18: 2, 26: 3}


def random_image(shape, density, seed):
    return np.random.default_rng(seed).random(shape) < density


def blobs(shape, seed):
    """Components of many sizes: random squares (cubes) of sides 1 to 9 on a sparse grid, so that
    the sizes differ and ``keep_largest`` cuts between two sizes."""
    rng = np.random.default_rng(seed)
    image = np.zeros(shape, dtype=np.uint8)
    for corner in rng.integers(0, np.array(shape) - 1, size=(40, len(shape))):
        side = int(rng.integers(1, 10))
        image[tuple(slice(c, c + side) for c in corner)] = 1
    return image | (rng.random(shape) < 0.08)


def same_partition(a, b):
    """Whether labelings ``a`` and ``b`` have the same background and the same components."""
    if not np.array_equal(a == 0, b == 0):
        return False
    pairs = np.unique(np.stack([a[a != 0].astype(np.int64), b[b != 0].astype(np.int64)]), axis=1)
    return len(np.unique(pairs[0])) == pairs.shape[1] == len(np.unique(pairs[1]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int64, np.float32])
def test_background_as_scikit_image(device, dtype):
    # Two values: the background's and another; scikit-image labels the other one's components.
    mask = random_image((53, 71), 0.45, 3)
    image = np.where(mask, 3, 7).astype(dtype)
    labels, num = ccl.label(image, connectivity=1, background=7, device=device, return_num=True, dtype=np.int64)
    want, n = skimage_measure.label(image, background=7, connectivity=1, return_num=True)
    assert labels.dtype == want.dtype == np.int64 and num == n
    np.testing.assert_array_equal(labels, want)
    # Background 0 stays the default; a negative background of a signed type.
    np.testing.assert_array_equal(ccl.label(image, background=0, device=device), ccl.label(image, device=device))
    if np.dtype(dtype).kind in "if":
        signed = np.where(mask, 5, -2).astype(dtype)
        np.testing.assert_array_equal(ccl.label(signed, background=-2, device=device), ccl.label(mask, device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_background_of_volumes_and_bools(device):
    volume = random_image((9, 14, 17), 0.4, 5)
    want = scipy_ndimage.label(~volume, structure=np.ones((3, 3, 3)))[0]
    np.testing.assert_array_equal(ccl.label(volume, background=True, device=device), want)
    np.testing.assert_array_equal(ccl.label(volume.astype(np.uint16) * 9, background=9, device=device), want)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,connectivity", [((80, 90), 4), ((80, 90), 8), ((20, 24, 26), 6), ((20, 24, 26), 26)])
def test_min_size_as_cc3d_dust(device, shape, connectivity):
    image = blobs(shape, 11)
    for threshold in (0, 1, 2, 5, 30, 10**6):
        labels, num = ccl.label(image, connectivity, device=device, min_size=threshold, return_num=True)
        kept = cc3d.dust(image, threshold=threshold, connectivity=connectivity, in_place=False)
        # The kept components, numbered 1..N in raster order as scipy numbers the dusted image.
        structure = scipy_ndimage.generate_binary_structure(len(shape), HOPS[connectivity])
        want, n = scipy_ndimage.label(kept, structure=structure)
        assert num == n, f"min_size={threshold}"
        np.testing.assert_array_equal(labels, want, err_msg=f"min_size={threshold}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,connectivity", [((80, 90), 8), ((20, 24, 26), 26), ((20, 24, 26), 18)])
def test_keep_largest_as_cc3d_largest_k(device, shape, connectivity):
    image = blobs(shape, 17)
    structure = scipy_ndimage.generate_binary_structure(len(shape), HOPS[connectivity])
    full, total = scipy_ndimage.label(image, structure=structure)
    sizes = np.sort(np.bincount(full.ravel())[1:])[::-1]
    # Cuts where the k-th and the (k+1)-th largest sizes differ (cc3d leaves ties unspecified).
    cuts = [k for k in range(1, total) if sizes[k - 1] != sizes[k]][:6] + [0, total, total + 3]
    for k in cuts:
        labels, num = ccl.label(image, connectivity, device=device, keep_largest=k, return_num=True)
        theirs = cc3d.largest_k(image, k=k, connectivity=connectivity)
        assert num == min(k, total), f"keep_largest={k}"
        assert same_partition(labels, theirs), f"keep_largest={k}"
        # Numbered 1..N in raster order: scipy's numbering of the kept pixels.
        np.testing.assert_array_equal(labels, scipy_ndimage.label(labels > 0, structure=structure)[0])


@pytest.mark.parametrize("device", DEVICES)
def test_filters_together_with_statistics(device):
    image = blobs((70, 64), 23)
    labels, num = ccl.label(image, device=device, min_size=4, keep_largest=5, return_num=True)
    first = ccl.label(image, device=device, min_size=4)
    sizes = np.bincount(first.ravel())[1:]
    # keep_largest after min_size; ties (equal areas) go to the lower label.
    keep = sorted(sorted(range(len(sizes)), key=lambda i: (-sizes[i], i))[:5])
    np.testing.assert_array_equal(labels > 0, np.isin(first, np.array(keep) + 1))
    assert num == len(keep) == int(labels.max())
    count, labels_s, stats, _ = ccl.label_with_stats(image, device=device, min_size=4, keep_largest=5)
    np.testing.assert_array_equal(labels_s, labels)
    assert count == num + 1
    np.testing.assert_array_equal(stats[1:, 4], np.bincount(labels.ravel(), minlength=num + 1)[1:])


@pytest.mark.parametrize("device", DEVICES)
def test_filters_in_slabs_equal_the_whole_labeling(device):
    volume = blobs((24, 20, 18), 29)
    for options in ({"min_size": 6}, {"keep_largest": 4}, {"min_size": 2, "keep_largest": 9}):
        whole, n = ccl.label(volume, device=device, return_num=True, **options)
        slabs, m = ccl.label(volume, device=device, return_num=True, max_device_bytes=5 * 20 * 18 * 16, **options)
        wide, k = ccl.label(volume, device=device, return_num=True, dtype=np.uint64, **options)
        assert n == m == k, options
        np.testing.assert_array_equal(slabs, whole)
        np.testing.assert_array_equal(wide, whole)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.uint64, np.int64, "int64", None])
def test_label_dtypes(device, dtype):
    image = random_image((40, 50), 0.5, 2)
    want = scipy_ndimage.label(image, structure=np.ones((3, 3)))[0]
    labels = ccl.label(image, device=device, dtype=dtype)
    assert labels.dtype == np.dtype(np.uint32 if dtype is None else dtype)
    np.testing.assert_array_equal(labels, want)
    # scikit-image's dtype and numbering.
    np.testing.assert_array_equal(ccl.label(image, device=device, dtype=np.int64), skimage_measure.label(image))


@pytest.mark.parametrize("device", DEVICES)
def test_hops_and_structures_as_scipy(device):
    for shape in ((33, 45), (11, 13, 15)):
        image = random_image(shape, 0.4, len(shape))
        for hops in range(1, len(shape) + 1):
            structure = scipy_ndimage.generate_binary_structure(len(shape), hops)
            want, n = scipy_ndimage.label(image, structure=structure)
            by_hops = ccl.label(image, connectivity=hops, device=device)
            by_structure, num = ccl.label(image, structure=structure, device=device, return_num=True)
            np.testing.assert_array_equal(by_hops, want)
            np.testing.assert_array_equal(by_structure, want)
            assert num == n
            np.testing.assert_array_equal(skimage_measure.label(image, connectivity=hops), by_hops)


def test_conventions_refuse_what_they_cannot_mean():
    image = np.zeros((4, 5), dtype=np.uint8)
    bad = [
        ({"background": -1}, "not a value of a uint8"),
        ({"background": 256}, "not a value of a uint8"),
        ({"background": 1.5}, "not a value of a uint8"),
        ({"min_size": -1}, "min_size=-1"),
        ({"min_size": 2.5}, "min_size=2.5"),
        ({"keep_largest": True}, "keep_largest=True"),
        ({"dtype": np.float32}, "uint32, int32, uint64 or int64"),
        ({"dtype": np.int16}, "uint32, int32, uint64 or int64"),
        ({"connectivity": 3}, "connectivity 3 is not for an image"),
        ({"connectivity": 1.5}, "connectivity=1.5"),
        ({"structure": np.ones((3, 3, 3))}, "only the standard structuring elements"),
        ({"structure": [[0, 1, 0], [1, 1, 1], [0, 1, 1]]}, "only the standard structuring elements"),
        ({"structure": np.ones((3, 3)), "connectivity": 4}, "structure is 8-connectivity"),
        ({"background": 3, "binarize": "otsu"}, "background applies to images labeled as they are"),
        ({"dtype": np.int64, "output": np.zeros((4, 5), np.uint32)}, "output must be a C-contiguous, writeable NumPy int64 array"),
    ]
    for kwargs, message in bad:
        with pytest.raises(ValueError, match=message):
            ccl.label(image, device="cpu", **kwargs)
    with pytest.raises(ValueError, match="not a value of a bool"):
        ccl.label(image.astype(bool), background=2, device="cpu")
    # The same structure and connectivity agree.
    np.testing.assert_array_equal(
        ccl.label(image, structure=np.ones((3, 3)), connectivity=8, device="cpu"), np.zeros((4, 5), np.uint32)
    )
