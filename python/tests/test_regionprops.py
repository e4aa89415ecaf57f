"""Region properties (``ccl.regionprops_table``) on every device ccl finds, property by property
against scikit-image's ``regionprops_table``: images and volumes of random blobs (holes,
tunnels, thin parts, regions on the border), 4- and 8-connected labels, float32, float64 and
integer intensity images, isotropic and anisotropic spacing, a real DIBCO page where
../shared/data has one; label images with gaps, large and negative values, every integer dtype;
empty images; the errors; and the CuPy path (a fake CuPy over host memory, no GPU needed).

Tolerances: integer columns (label, bbox, num_pixels, euler_number) exactly; the others to 1e-9
of each value's scale: the column's largest magnitude, and for moments the region's area times
its extent to the moment's order (the central moments of order 1 are 0 up to rounding, which is
of that scale); intensity statistics of float32 images to 1e-6 (scikit-image sums them in
float32, ccl in float64); axis lengths and eccentricity by their squares (square roots of
eigenvalue differences near zero amplify rounding to its square root). Orientation is compared where the inertia tensor is not isotropic
(where it is, the angle is undefined and both libraries return whatever the rounding gives).
"""

import os

import numpy as np
import pytest

import ccl

skimage_measure = pytest.importorskip("skimage.measure")

from _devices import DEVICES, dibco_file

PROPERTIES_2D = (
    "label", "area", "num_pixels", "bbox", "area_bbox", "centroid", "centroid_local", "extent",
    "equivalent_diameter_area", "euler_number", "perimeter", "moments", "moments_central",
    "moments_normalized", "moments_hu", "inertia_tensor", "inertia_tensor_eigvals", "orientation",
    "eccentricity", "axis_major_length", "axis_minor_length",
)
PROPERTIES_3D = tuple(p for p in PROPERTIES_2D if p not in ("perimeter", "moments_hu", "orientation", "eccentricity"))
INTENSITY = ("intensity_mean", "intensity_min", "intensity_max")
INTEGER = ("label", "bbox", "num_pixels", "euler_number")


def blobs(shape, density, cell, seed):
    """Random cells of ``cell`` elements a side, with single elements flipped."""
    rng = np.random.default_rng(seed)
    cells = rng.random(tuple(-(-s // cell) for s in shape)) < density
    for axis in range(len(shape)):
        cells = cells.repeat(cell, axis=axis)
    cells = cells[tuple(slice(0, s) for s in shape)]
    return cells ^ (rng.random(shape) < 0.08)


def moment_order(name):
    """The order of a moment column (``moments_central-1-2``: 3), else None."""
    if not name.startswith(("moments-", "moments_central-", "moments_normalized-")):
        return None
    return sum(int(i) for i in name.split("-")[1:])


def assert_tables_close(got, want, labels_ndim, spacing=None, float32_intensity=False):
    assert list(got) == list(want), set(got) ^ set(want)
    area = np.asarray(want["num_pixels"], dtype=float) if "num_pixels" in want else None
    ndim = labels_ndim
    extent = None
    if "bbox-0" in want:
        extent = np.max([np.asarray(want[f"bbox-{ndim + a}"]) - np.asarray(want[f"bbox-{a}"]) for a in range(ndim)], axis=0)
        extent = extent * (max(spacing) if spacing else 1.0)
    for name in want:
        w, g = np.asarray(want[name]), np.asarray(got[name])
        assert g.shape == w.shape, name
        if name.split("-")[0] in INTEGER:
            assert g.dtype == np.int64, name
            np.testing.assert_array_equal(g, w, err_msg=name)
            continue
        assert g.dtype == np.float64, name
        w, g = w.astype(float), g.astype(float)
        if name.startswith(("axis_", "eccentricity")):
            # Square roots of eigenvalue differences near zero amplify rounding: compare squares.
            w, g = w**2, g**2
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{name}: NaN")
        finite = ~np.isnan(w)
        scale = np.full(w.shape, np.nanmax(np.abs(w)) if finite.any() else 1.0) + 1.0
        order = moment_order(name)
        if order is not None and area is not None and extent is not None:
            raw = area * np.maximum(extent, 1.0) ** order
            if name.startswith("moments_normalized"):
                raw = raw / (area ** (order / ndim + 1) * min(spacing or [1.0]) ** order)
            scale = np.maximum(scale, raw)
        if name.startswith("orientation"):
            t = [np.asarray(want[f"inertia_tensor-{i}"], dtype=float) for i in ("0-0", "0-1", "1-1")]
            finite &= np.abs(t[0] - t[2]) + np.abs(t[1]) > 1e-6 * (np.abs(t[0]) + np.abs(t[2]))
        tolerance = 1e-6 if (float32_intensity and name.startswith("intensity")) else 1e-9
        bad = np.abs(g - w)[finite] > tolerance * scale[finite]
        assert not bad.any(), f"{name}: {g[finite][bad][:5]} vs scikit-image {w[finite][bad][:5]}"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("connectivity", [1, 2])
@pytest.mark.parametrize("spacing", [None, (0.5, 0.5), (2.0, 0.75)])
def test_image_properties_equal_scikit_image(device, connectivity, spacing):
    labels = skimage_measure.label(blobs((97, 131), 0.5, 5, connectivity), connectivity=connectivity)
    intensity = np.random.default_rng(3).random(labels.shape).astype(np.float32) * 200 - 50
    properties = PROPERTIES_2D + INTENSITY
    if spacing is not None:
        properties = tuple(p for p in properties if p != "moments_hu")
        if spacing[0] != spacing[1]:
            properties = tuple(p for p in properties if p != "perimeter")
    want = skimage_measure.regionprops_table(labels, intensity, properties=properties, spacing=spacing)
    got = ccl.regionprops_table(labels, intensity, properties=properties, spacing=spacing, device=device)
    assert len(got["label"]) > 20
    assert_tables_close(got, want, 2, spacing, float32_intensity=True)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("spacing", [None, (2.0, 1.0, 0.5)])
def test_volume_properties_equal_scikit_image(device, spacing):
    labels = skimage_measure.label(blobs((19, 23, 29), 0.45, 3, 7), connectivity=1)
    intensity = np.random.default_rng(5).integers(0, 4000, labels.shape).astype(np.uint16)
    properties = PROPERTIES_3D + INTENSITY
    want = skimage_measure.regionprops_table(labels, intensity, properties=properties, spacing=spacing)
    got = ccl.regionprops_table(labels, intensity, properties=properties, spacing=spacing, device=device)
    assert len(got["label"]) > 10
    assert_tables_close(got, want, 3, spacing)


def dibco_labels():
    """The labels of a real DIBCO page's ground truth where ../shared/data (or CCL_DATA_DIR)
    has one, else None."""
    path = dibco_file("2009", "GT")
    if path is None:
        return None
    io = pytest.importorskip("skimage.io")
    gt = io.imread(path)
    if gt.ndim == 3:
        gt = gt[..., 0]
    gt = gt.astype(float)
    return skimage_measure.label(gt < gt.max() / 2, connectivity=2)  # 0 = ink


@pytest.mark.parametrize("device", DEVICES)
def test_a_real_page_equals_scikit_image(device):
    labels = dibco_labels()
    if labels is None:
        pytest.skip("no DIBCO ground truth in ../shared/data (the synthetic tests cover the properties)")
    properties = PROPERTIES_2D
    want = skimage_measure.regionprops_table(labels, properties=properties)
    got = ccl.regionprops_table(labels, properties=properties, device=device)
    assert len(got["label"]) > 50
    assert_tables_close(got, want, 2)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int32, np.uint32, np.int64, np.uint64])
def test_label_images_of_any_integer_dtype_gaps_and_large_values(device, dtype):
    base = skimage_measure.label(blobs((41, 53), 0.5, 4, 11), connectivity=2)
    top = np.iinfo(dtype).max
    # Gaps, values near the dtype's top, and (signed) negative values, which are background.
    values = np.unique(base[base > 0])
    mapping = np.zeros(base.max() + 1, dtype=np.int64)
    mapping[values] = np.linspace(3, min(top, 2**62), len(values)).astype(np.int64) if top > 2 * len(values) else values
    labels = mapping[base].astype(dtype)
    if np.dtype(dtype).kind == "i":
        labels[0, :] = -1
    properties = ("label", "area", "bbox", "centroid", "euler_number", "perimeter")
    # scikit-image's table of the labels numbered 1..N (its own would allocate per value up to the
    # largest), with the label column given back.
    positive = np.where(labels > 0, labels, 0)
    values, ranks = np.unique(positive, return_inverse=True)
    want = skimage_measure.regionprops_table(ranks.reshape(labels.shape), properties=properties)
    want["label"] = values[want["label"]].astype(np.int64)
    got = ccl.regionprops_table(labels, properties=properties, device=device)
    assert_tables_close(got, want, 2)


@pytest.mark.parametrize("device", DEVICES)
def test_the_output_of_label_and_empty_images(device):
    image = blobs((64, 80), 0.5, 4, 2)
    labels, n = ccl.label(image, return_num=True, device=device)
    got = ccl.regionprops_table(labels, properties=("label", "area", "bbox"), device=device)
    assert list(got) == ["label", "area", "bbox-0", "bbox-1", "bbox-2", "bbox-3"]
    np.testing.assert_array_equal(got["label"], np.arange(1, n + 1))
    assert got["area"].sum() == image.sum()
    empty = ccl.regionprops_table(np.zeros((5, 6), np.int32), properties=("label", "moments_central"), device=device)
    assert len(empty) == 1 + 16 and all(len(v) == 0 for v in empty.values())
    named = ccl.regionprops_table(labels, properties=("bbox",), separator="_", device=device)
    assert list(named) == ["bbox_0", "bbox_1", "bbox_2", "bbox_3"]


def test_the_errors():
    labels = np.ones((4, 5, 6), np.int32)
    for prop in ("perimeter", "orientation", "eccentricity", "moments_hu"):
        with pytest.raises(ValueError, match=prop):
            ccl.regionprops_table(labels, properties=(prop,))
    with pytest.raises(ValueError, match="solidity"):
        ccl.regionprops_table(labels, properties=("solidity",))
    with pytest.raises(ValueError, match="intensity"):
        ccl.regionprops_table(labels, properties=("intensity_mean",))
    with pytest.raises(ValueError, match="shape"):
        ccl.regionprops_table(labels, np.ones((4, 5)), properties=("intensity_mean",))
    with pytest.raises(ValueError, match="spacing"):
        ccl.regionprops_table(labels, properties=("area",), spacing=(1.0, -1.0, 1.0))
    with pytest.raises(ValueError, match="isotropic"):
        ccl.regionprops_table(labels[0], properties=("perimeter",), spacing=(1.0, 2.0))
    with pytest.raises(TypeError, match="non-integer"):
        ccl.regionprops_table(labels.astype(float))
    with pytest.raises(TypeError, match="non-integer"):
        ccl.regionprops_table(labels.astype(bool))
    with pytest.raises(ValueError, match="dimensions"):
        ccl.regionprops_table(np.ones(7, np.int32))
    with pytest.raises(ValueError, match="sequence"):
        ccl.regionprops_table(labels, properties="area")


# --- The CuPy path, with a fake CuPy over host memory (no GPU needed) ---------------------------


@pytest.fixture
def fake_cupy(monkeypatch):
    """A fake ``cupy`` module, and a native module whose ``_regionprops_cuda`` reads host memory
    and runs the host call on the CPU reference; returns the calls made."""
    import ctypes
    import sys
    import types

    from test_gpu_arrays import FakeCupyArray, FakeDevice

    real = ccl._ccl
    calls = []

    def host(address, ctype, count):
        return np.ctypeslib.as_array((ctype * count).from_address(address))

    def regionprops_cuda(labels_ptr, shape, count, properties, stream, device, spacing=None, intensity=None):
        n = int(np.prod(shape))
        labels = np.array(host(labels_ptr, ctypes.c_uint32, n)).reshape(shape)
        image = None
        if intensity is not None:
            address, wide = intensity
            image = np.array(host(address, ctypes.c_double if wide else ctypes.c_float, n)).reshape(shape)
        calls.append({"stream": stream, "device": device, "count": count, "intensity": intensity and intensity[1]})
        return real._regionprops(labels, count, properties, spacing, image, "cpu")

    native = types.SimpleNamespace(
        _regionprops=real._regionprops,
        _regionprops_cuda=regionprops_cuda,
        _cuda_device_of=lambda address: 0,
        devices=real.devices,
    )
    stream = types.SimpleNamespace(ptr=0, synchronize=lambda: None)
    cupy = types.ModuleType("cupy")
    cupy.ndarray = FakeCupyArray
    for name in ("uint32", "float32", "float64"):
        setattr(cupy, name, getattr(np, name))
    cupy.asarray = lambda a: np.asarray(a).view(FakeCupyArray)
    cupy.asnumpy = lambda a: np.asarray(a)
    cupy.ascontiguousarray = lambda a: np.ascontiguousarray(a).view(FakeCupyArray)
    cupy.where = lambda c, a, b: np.where(c, a, b).view(FakeCupyArray)
    cupy.unique = lambda a, return_inverse: tuple(v.view(FakeCupyArray) for v in np.unique(a, return_inverse=True))
    cupy.cuda = types.SimpleNamespace(get_current_stream=lambda: stream, Device=FakeDevice)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setattr(ccl, "_ccl", native)
    monkeypatch.setattr(ccl._regionprops, "_ccl", native)
    return calls, FakeCupyArray


def test_the_cupy_path_equals_the_numpy_path(fake_cupy):
    calls, FakeCupyArray = fake_cupy
    labels = skimage_measure.label(blobs((37, 45), 0.5, 3, 4), connectivity=2).astype(np.int32)
    labels[labels == 3] = 10**6  # a large value: mapped to 1..N on the GPU, given back
    labels[0, 0] = -5
    intensity = np.random.default_rng(1).random(labels.shape)
    properties = ("label", "area", "bbox", "moments_central", "euler_number", "perimeter", "intensity_max")
    want = ccl.regionprops_table(labels, intensity, properties=properties, device="cpu")
    got = ccl.regionprops_table(labels.view(FakeCupyArray), intensity.view(FakeCupyArray), properties=properties)
    assert list(got) == list(want)
    for name in want:
        assert type(got[name]) is FakeCupyArray, name
        np.testing.assert_array_equal(np.asarray(got[name]), want[name], err_msg=name)
    assert calls == [{"stream": 1, "device": "cuda:0", "count": len(want["label"]), "intensity": True}]
    with pytest.raises(ValueError, match="CuPy array"):
        ccl.regionprops_table(labels.view(FakeCupyArray), intensity, properties=("intensity_max",))


# --- Real GPU arrays (skipped without CuPy / a CUDA PyTorch, unless CCL_REQUIRE_BACKENDS names cuda)


REQUIRE_CUDA = "cuda" in [t.strip().lower() for t in os.environ.get("CCL_REQUIRE_BACKENDS", "").split(",")]


def gpu_module(name):
    try:
        module = __import__(name)
        ok = module.cuda.is_available() if name == "torch" else module.cuda.runtime.getDeviceCount() > 0
    except Exception as e:  # absent, or no CUDA device
        ok, module = False, e
    if not ok:
        if REQUIRE_CUDA:
            pytest.fail(f"CCL_REQUIRE_BACKENDS names cuda, but {name} cannot reach a CUDA device: {module}")
        pytest.skip(f"{name} with a CUDA device is not available")
    return module


@pytest.mark.parametrize("shape", [(211, 317), (23, 29, 31)])
def test_cupy_arrays_are_measured_on_their_gpu(shape):
    cupy = gpu_module("cupy")
    labels = skimage_measure.label(blobs(shape, 0.5, 4, 9), connectivity=len(shape)).astype(np.int32)
    labels[labels == 2] = 10**9  # large: mapped on the GPU
    intensity = np.random.default_rng(2).random(shape)
    properties = (PROPERTIES_2D if len(shape) == 2 else PROPERTIES_3D) + INTENSITY
    want = ccl.regionprops_table(labels, intensity, properties=properties, device="cpu")
    got = ccl.regionprops_table(cupy.asarray(labels), cupy.asarray(intensity.astype(np.float32)), properties=properties)
    assert all(isinstance(v, cupy.ndarray) for v in got.values())
    assert_tables_close({k: cupy.asnumpy(v) for k, v in got.items()}, want, len(shape), float32_intensity=True)


def test_torch_tensors_are_measured_on_their_gpu():
    torch = gpu_module("torch")
    labels = skimage_measure.label(blobs((120, 140), 0.5, 4, 10), connectivity=2)
    properties = PROPERTIES_2D + INTENSITY
    intensity = np.random.default_rng(3).random(labels.shape)
    want = ccl.regionprops_table(labels, intensity, properties=properties, device="cpu")
    got = ccl.regionprops_table(torch.from_numpy(labels).cuda(), torch.from_numpy(intensity).cuda(), properties=properties)
    assert all(isinstance(v, torch.Tensor) and v.is_cuda for v in got.values())
    assert_tables_close({k: v.cpu().numpy() for k, v in got.items()}, want, 2)
