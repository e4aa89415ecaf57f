"""Arrays in CUDA memory (CuPy arrays, PyTorch CUDA tensors, any __cuda_array_interface__)
labeled where they lie, on the CUDA device that holds them, and returned there: the same labels
as the NumPy path and scipy.ndimage.label, the same statistics as the NumPy path, every dtype and
memory layout, the result's kind and device, no copy through the host, the errors.

The adapter tests with fake interface objects run everywhere (CI has no GPU and no CuPy). The
CuPy tests skip without CuPy or a CUDA device, unless CCL_REQUIRE_BACKENDS names "cuda": then
they fail. The PyTorch tests skip without PyTorch or a CUDA build of it, with the reason."""

import os
import statistics
import time

import numpy as np
import pytest

import ccl

REQUIRE_CUDA = "cuda" in [t.strip().lower() for t in os.environ.get("CCL_REQUIRE_BACKENDS", "").split(",")]


def random_image(shape, density, seed):
    return np.random.default_rng(seed).random(shape) < density


def scipy_label(image, connectivity):
    """scipy.ndimage.label's labels and count; without SciPy, the CPU reference's through the
    NumPy path (which test_ccl.py checks equal to SciPy's)."""
    try:
        from scipy import ndimage
    except ImportError:
        return ccl.label(np.asarray(image), connectivity=connectivity, device="cpu", return_num=True)
    rank = {4: 1, 8: 2, 6: 1, 18: 2, 26: 3}[connectivity]
    return ndimage.label(image, structure=ndimage.generate_binary_structure(image.ndim, rank))


# --- The adapters, with fake objects (no GPU needed) -------------------------------------------


class FakeCudaArray:
    """An object exposing only __cuda_array_interface__ (no library behind it)."""

    def __init__(self, shape, typestr="|u1", strides=None, address=0x7F0000000000):
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "data": (address, False),
            "strides": strides,
            "version": 3,
            "stream": None,
        }


def test_a_cuda_array_cannot_go_through_the_host_without_its_library():
    for device in ["cpu", "opencl:0"]:
        with pytest.raises(ValueError, match="cannot be copied to the host"):
            ccl.label(FakeCudaArray((4, 5)), device=device)
        with pytest.raises(ValueError, match="cannot be copied to the host"):
            ccl.label_with_stats(FakeCudaArray((4, 5)), device=device)


def test_other_cuda_arrays_must_be_uint8_or_bool_in_c_order():
    with pytest.raises(ValueError, match="typestr '<f4'"):
        ccl.label(FakeCudaArray((4, 5), typestr="<f4"))
    with pytest.raises(ValueError, match="C-contiguous"):
        ccl.label(FakeCudaArray((4, 5), strides=(1, 4)))
    with pytest.raises(ValueError, match="dimensions"):
        ccl.label(FakeCudaArray((20,)))
    with pytest.raises(ValueError, match="empty"):
        ccl.label(FakeCudaArray((0, 5)))
    # Dense strides given explicitly are C order.
    assert ccl._gpu_array(FakeCudaArray((4, 5), strides=(5, 1))).shape == (4, 5)


def test_a_fake_cuda_pointer_is_refused_with_a_clear_error():
    # Without CuPy the labels cannot be allocated (ValueError); with it, the pointer is not CUDA
    # memory (ValueError), or there is no CUDA driver at all (RuntimeError).
    try:
        import cupy  # noqa: F401

        errors = (ValueError, RuntimeError)
    except Exception:
        errors = ValueError
    with pytest.raises(errors):
        ccl.label(FakeCudaArray((4, 5), typestr="|b1"))


def test_device_choice_for_cuda_arrays():
    assert ccl._cuda_device(None, 2) == "cuda:2"
    assert ccl._cuda_device("cuda", 0) == "cuda:0"
    assert ccl._cuda_device(" CUDA:1 ", 1) == "cuda:1"
    with pytest.raises(ValueError, match="on cuda:0, not on cuda:1"):
        ccl._cuda_device("cuda:1", 0)
    with pytest.raises(ValueError, match="unknown device"):
        ccl._cuda_device("cuda:x", 0)
    assert not ccl._on_host(None) and not ccl._on_host("cuda:3")
    assert ccl._on_host("cpu") and ccl._on_host("opencl:1")


def test_arrays_on_other_dlpack_devices_are_refused():
    class OnAnotherDevice:
        def __dlpack_device__(self):
            return (10, 0)  # kDLROCM

    with pytest.raises(ValueError, match="DLPack device type 10"):
        ccl.label(OnAnotherDevice())


def test_numpy_arrays_are_not_gpu_arrays():
    assert ccl._gpu_array(np.zeros((3, 3))) is None


# --- The CUDA path end to end, with a fake CuPy over host memory (no GPU needed) ---------------


class FakeCupyArray(np.ndarray):
    """A NumPy array dressed as a CuPy array: its module, device, get() and interface (whose
    pointer is host memory, which the fake native call below reads and writes)."""

    __module__ = "cupy"

    @property
    def device(self):
        return FakeDevice(0)

    def get(self):
        return np.array(self)

    @property
    def __cuda_array_interface__(self):
        dense = self.flags.c_contiguous
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.ctypes.data, False),
            "strides": None if dense else self.strides,
            "version": 3,
        }


class FakeDevice:
    def __init__(self, id):
        self.id = id

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.fixture
def fake_cuda(monkeypatch):
    """Installs a fake ``cupy`` module and a native module whose CUDA calls label host memory
    with the CPU reference; returns the calls made to ``_label_cuda``."""
    import ctypes
    import sys
    import types

    real = ccl._ccl
    calls = []

    def host(address, ctype, count):
        return np.ctypeslib.as_array((ctype * count).from_address(address)) if count else None

    def label_cuda(
        image_ptr,
        labels_ptr,
        shape,
        stream,
        connectivity,
        algorithm,
        device,
        stats_alloc=None,
        binarize=None,
        min_size=None,
        keep_largest=None,
        values=None,
    ):
        n = int(np.prod(shape))
        width = 1 if values is None else values[0]  # a multi-label image: its values' bytes
        image = host(image_ptr, ctypes.c_uint8, n * width).reshape(tuple(shape) + ((width,) if values else ()))
        out = host(labels_ptr, ctypes.c_uint32, n).reshape(shape)
        if binarize is not None:  # a gray page: its ink is labeled
            image = real._binarize(np.array(image), binarize, "cpu").view(np.uint8)
        labels, num, table = real._label(
            np.array(image),
            connectivity,
            algorithm,
            "cpu",
            stats_alloc is not None,
            None,
            None,
            min_size,
            keep_largest,
            values,
        )
        out[...] = labels
        if stats_alloc is not None:
            # OpenCV's tables, as the host path returns them.
            stats, centroids = table
            stats_at, centroids_at = stats_alloc(num)
            host(stats_at, ctypes.c_int64, stats.size)[:] = stats.ravel()
            host(centroids_at, ctypes.c_double, centroids.size)[:] = centroids.ravel()
        calls.append({"stream": stream, "device": device, "shape": tuple(shape)})
        return num

    def binarize_cuda(image_ptr, ink_ptr, shape, stream, binarize, device):
        n = int(np.prod(shape))
        page = np.array(host(image_ptr, ctypes.c_uint8, n).reshape(shape))
        ink = host(ink_ptr, ctypes.c_uint8, n).reshape(shape)
        ink[...] = real._binarize(page, binarize, "cpu")
        calls.append({"stream": stream, "device": device, "shape": tuple(shape), "binarize": binarize[0]})

    native = types.SimpleNamespace(
        _label=real._label,
        _binarize=real._binarize,
        _binarize_cuda=binarize_cuda,
        _label_cuda=label_cuda,
        _cuda_device_of=lambda address: 0,
        _boundary_pairs=real._boundary_pairs,
        _merge_labels=real._merge_labels,
        _label_slabs=real._label_slabs,
        devices=real.devices,
        algorithms=real.algorithms,
    )
    stream = types.SimpleNamespace(ptr=0, synchronize=lambda: None)
    cupy = types.ModuleType("cupy")
    cupy.ndarray, cupy.uint8, cupy.uint32, cupy.bool_ = FakeCupyArray, np.uint8, np.uint32, np.bool_
    cupy.uint64, cupy.int64, cupy.float64 = np.uint64, np.int64, np.float64
    cupy.stack = lambda arrays, axis=0: np.stack(arrays, axis=axis).view(FakeCupyArray)
    cupy.concatenate = lambda arrays: np.concatenate([np.asarray(a) for a in arrays]).view(FakeCupyArray)
    cupy.asarray = lambda a: np.asarray(a).view(FakeCupyArray)
    cupy.ascontiguousarray = lambda a: np.ascontiguousarray(a).view(FakeCupyArray)
    cupy.empty = lambda shape, dtype: np.empty(shape, dtype).view(FakeCupyArray)
    cupy.take = lambda a, indices, out=None: np.take(np.asarray(a), indices, out=out)
    cupy.bincount = lambda x, minlength=0: np.bincount(np.asarray(x).ravel(), minlength=minlength).view(FakeCupyArray)
    cupy.cuda = types.SimpleNamespace(get_current_stream=lambda: stream, Device=FakeDevice)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setattr(ccl, "_ccl", native)
    return calls


def fake(array):
    return np.asarray(array).view(FakeCupyArray)


@pytest.mark.parametrize("shape,connectivity", [((67, 131), 4), ((67, 131), 8), ((9, 17, 23), 6), ((9, 17, 23), 26)])
def test_the_cupy_path_labels_as_the_numpy_path(fake_cuda, shape, connectivity):
    image = random_image(shape, 0.45, connectivity)
    labels, num = ccl.label(fake(image), connectivity=connectivity, return_num=True)
    want, n = ccl.label(image, connectivity=connectivity, device="cpu", return_num=True)
    assert type(labels) is FakeCupyArray and labels.dtype == np.uint32 and num == n
    np.testing.assert_array_equal(np.asarray(labels), want)
    assert fake_cuda == [{"stream": 1, "device": "cuda:0", "shape": shape}]  # legacy default stream: 1


def test_the_cupy_path_binarizes_any_dtype_and_layout(fake_cuda):
    base = random_image((40, 60), 0.5, 3).astype(np.float32) * 2.5
    for view in [fake(base), fake(base)[::2, ::3], fake(base).T, fake(base.astype(bool)), fake(base.astype(np.uint8))]:
        want = ccl.label(np.asarray(view), device="cpu")
        np.testing.assert_array_equal(np.asarray(ccl.label(view)), want)
    # A C-contiguous uint8 or bool input is passed as it is (no binarized copy).
    x = fake(base.astype(np.uint8))
    assert ccl._CupyArray(x).binary().ctypes.data == x.ctypes.data


def test_the_cupy_path_binarizes_pages_on_their_gpu(fake_cuda):
    gray = (np.random.default_rng(4).random((40, 60)) * 255).astype(np.uint8)
    want = ccl.binarize(gray, window=9, device="cpu")
    ink = ccl.binarize(fake(gray), window=9)
    assert type(ink) is FakeCupyArray and ink.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(ink), want)
    assert fake_cuda.pop() == {"stream": 1, "device": "cuda:0", "shape": (40, 60), "binarize": "nick"}
    # Color, 16-bit and strided pages are converted on the GPU (as on the host) first.
    for page in [np.dstack([gray, gray, gray]), gray.astype(np.uint16) * 257, np.asfortranarray(gray)]:
        np.testing.assert_array_equal(np.asarray(ccl.binarize(fake(page), window=9)), want)
    on_host = ccl.binarize(fake(gray), window=9, device="cpu")  # an explicit host device: NumPy back
    assert type(on_host) is np.ndarray
    np.testing.assert_array_equal(on_host, want)
    fake_cuda.clear()
    # Labeling a page's ink: one call, binarized and labeled on the GPU.
    labels = ccl.label(fake(gray), binarize={"method": "nick", "window": 9})
    assert type(labels) is FakeCupyArray
    np.testing.assert_array_equal(np.asarray(labels), ccl.label(want, device="cpu"))
    num, labels, stats, _ = ccl.label_with_stats(fake(gray), binarize={"method": "nick", "window": 9})
    assert num == ccl.label_with_stats(want, device="cpu")[0]
    assert len(fake_cuda) == 2 and all(c["shape"] == (40, 60) for c in fake_cuda)
    with pytest.raises(ValueError, match="dtype"):
        ccl.binarize(fake(gray > 100))
    with pytest.raises(ValueError, match="connectivity"):
        ccl.label(fake(gray), connectivity=26, binarize="nick")


@pytest.mark.parametrize("shape", [(73, 129), (1, 50), (9, 17, 23), (1, 17, 23)])
@pytest.mark.parametrize("density", [0.0, 0.4, 1.0])
def test_the_cupy_path_stats_equal_the_numpy_path(fake_cuda, shape, density):
    image = random_image(shape, density, len(shape)).astype(np.uint8)
    num, labels, stats, centroids = ccl.label_with_stats(fake(image))
    want = ccl.label_with_stats(image, device="cpu")
    assert num == want[0] and type(labels) is FakeCupyArray
    # The statistics stay on the GPU too, as arrays of the input's library.
    assert type(stats) is FakeCupyArray and type(centroids) is FakeCupyArray
    assert stats.dtype == np.int64 and centroids.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(labels), want[1])
    np.testing.assert_array_equal(np.asarray(stats), want[2])
    np.testing.assert_array_equal(np.asarray(centroids), want[3])


def test_the_cupy_path_takes_the_conventions_of_the_numpy_path(fake_cuda):
    image = np.where(random_image((37, 53), 0.5, 6), 4, -1).astype(np.int16)
    options = {"background": -1, "min_size": 3, "keep_largest": 7, "connectivity": 1}
    want, n = ccl.label(image, device="cpu", return_num=True, **options)
    for dtype in (None, np.uint32, np.int32, np.uint64, np.int64):
        labels, num = ccl.label(fake(image), dtype=dtype, return_num=True, **options)
        assert type(labels) is FakeCupyArray and labels.dtype == np.dtype(dtype or np.uint32) and num == n
        np.testing.assert_array_equal(np.asarray(labels), want)
    count, labels, stats, _ = ccl.label_with_stats(fake(image), **options)
    np.testing.assert_array_equal(np.asarray(labels), want)
    np.testing.assert_array_equal(np.asarray(stats), ccl.label_with_stats(image, device="cpu", **options)[2])
    # Through the host on another device, the same.
    np.testing.assert_array_equal(ccl.label(fake(image), device="cpu", **options), want)


def test_the_cupy_path_labels_multilabel_images_as_the_numpy_path(fake_cuda):
    classes = (np.random.default_rng(12).integers(0, 4, (9, 12)).repeat(3, 0).repeat(3, 1) * 1000).astype(np.int32)
    want, n = ccl.label(classes, multilabel=True, device="cpu", return_num=True)
    labels, num = ccl.label(fake(classes), multilabel=True, return_num=True)
    assert type(labels) is FakeCupyArray and num == n and num > int(ccl.label(classes, device="cpu").max())
    np.testing.assert_array_equal(np.asarray(labels), want)
    assert fake_cuda[-1]["shape"] == classes.shape
    with_background = ccl.label(fake(classes), multilabel=True, background=2000, connectivity=4)
    np.testing.assert_array_equal(
        np.asarray(with_background), ccl.label(classes, multilabel=True, background=2000, connectivity=4, device="cpu")
    )


def test_the_cupy_path_device_rules(fake_cuda):
    x = fake(random_image((20, 30), 0.5, 1))
    with pytest.raises(ValueError, match="on cuda:0, not on cuda:1"):
        ccl.label(x, device="cuda:1")
    assert fake_cuda == []
    ccl.label(x, device="cuda")
    assert fake_cuda[-1]["device"] == "cuda:0"
    # An OpenCL or CPU device: through the host, NumPy out.
    labels = ccl.label(x, device="cpu")
    assert type(labels) is np.ndarray and len(fake_cuda) == 1
    with pytest.raises(ValueError, match="empty"):
        ccl.label(fake(np.zeros((0, 4), dtype=np.uint8)))
    with pytest.raises(ValueError, match="dtype"):
        ccl.label(fake(np.zeros((3, 3), dtype=np.complex64)))


def test_the_cupy_path_writes_into_an_output(fake_cuda):
    image = random_image((30, 44), 0.5, 8)
    want = ccl.label(image, device="cpu")
    for dtype in (np.uint32, np.int32):
        output = fake(np.zeros(image.shape, dtype=dtype))
        labels = ccl.label(fake(image), output=output)
        assert labels is output
        np.testing.assert_array_equal(np.asarray(output), want)
    num, labels, _, _ = ccl.label_with_stats(fake(image), output=output)
    assert labels is output and num == want.max() + 1
    for bad in (
        np.zeros(image.shape, dtype=np.uint32),  # host memory for a GPU image
        fake(np.zeros(image.shape, dtype=np.int64)),
        fake(np.zeros((30, 43), dtype=np.uint32)),
        fake(np.zeros((44, 30), dtype=np.uint32)).T,
    ):
        with pytest.raises(ValueError, match="output"):
            ccl.label(fake(image), output=bad)


@pytest.mark.parametrize("shape,connectivity", [((67, 31), 8), ((67, 31), 4), ((13, 9, 11), 26), ((13, 9, 11), 6)])
def test_the_cupy_path_labels_arrays_past_32_bit_labels_in_slabs(fake_cuda, monkeypatch, shape, connectivity):
    # Past 2^32 - 1 elements (lowered here) a GPU array is labeled in slabs along its first axis
    # on its device: 64-bit labels by default, the same labels as labeling it whole.
    image = random_image(shape, 0.5, 30 + connectivity)
    plane = int(np.prod(shape[1:]))
    options = {"connectivity": connectivity, "background": 0}
    want, n = ccl.label(image, device="cpu", return_num=True, **options)
    monkeypatch.setattr(ccl, "MAX_32BIT_ELEMENTS", 5 * plane)
    monkeypatch.setattr(ccl, "_GPU_SLAB_ELEMENTS", 5 * plane)
    labels, num = ccl.label(fake(image), return_num=True, **options)
    assert type(labels) is FakeCupyArray and labels.dtype == np.uint64 and num == n
    np.testing.assert_array_equal(np.asarray(labels), want)
    slabs = [call["shape"] for call in fake_cuda]
    assert slabs == [(5,) + shape[1:]] * (shape[0] // 5) + [(shape[0] % 5,) + shape[1:]], slabs
    # Any label dtype, into an output, with the filters.
    for dtype in (np.uint32, np.int64):
        output = fake(np.zeros(shape, dtype))
        assert ccl.label(fake(image), dtype=dtype, output=output, **options) is output
        np.testing.assert_array_equal(np.asarray(output), want)
    filtered = ccl.label(image, device="cpu", min_size=3, keep_largest=5, **options)
    np.testing.assert_array_equal(np.asarray(ccl.label(fake(image), min_size=3, keep_largest=5, **options)), filtered)
    # Through the host on another device: in slabs there.
    np.testing.assert_array_equal(ccl.label(fake(image), device="cpu", **options), want)
    with pytest.raises(ValueError, match="output must be a C-contiguous uint64"):
        ccl.label(fake(image), output=fake(np.zeros(shape, np.uint32)), dtype=np.uint64, **options)


# --- CuPy -----------------------------------------------------------------------------------


def _require(reason):
    if REQUIRE_CUDA:
        pytest.fail(f"CCL_REQUIRE_BACKENDS requires cuda: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def cp():
    try:
        import cupy
    except Exception as e:  # ImportError, or a CuPy without its CUDA libraries
        _require(f"cupy does not import ({e})")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        _require(f"no CUDA device for cupy ({e})")
    if count == 0:
        _require("no CUDA device for cupy")
    if not any(d[3] == "cuda" for d in ccl.devices()):
        _require("ccl finds no CUDA device (CUDA driver or NVRTC missing?)")
    return cupy


def assert_gpu_labels(cp, labels, like):
    assert isinstance(labels, cp.ndarray)
    assert labels.dtype == cp.uint32 and labels.shape == like.shape
    assert labels.device.id == like.device.id


@pytest.mark.parametrize("connectivity", [4, 8])
@pytest.mark.parametrize("density", [0.0, 0.1, 0.45, 0.9, 1.0])
def test_cupy_images_label_as_scipy_and_numpy(cp, connectivity, density):
    image = random_image((67, 131), density, int(density * 100) + connectivity)
    x = cp.asarray(image)
    labels, num = ccl.label(x, connectivity=connectivity, return_num=True)
    assert_gpu_labels(cp, labels, x)
    want, n = scipy_label(image, connectivity)
    assert num == n
    np.testing.assert_array_equal(cp.asnumpy(labels), want)
    np.testing.assert_array_equal(cp.asnumpy(labels), ccl.label(image, connectivity=connectivity))


@pytest.mark.parametrize("connectivity", [6, 18, 26])
def test_cupy_volumes_label_as_scipy(cp, connectivity):
    volume = random_image((9, 17, 23), 0.35, connectivity)
    labels, num = ccl.label(cp.asarray(volume), connectivity=connectivity, return_num=True)
    want, n = scipy_label(volume, connectivity)
    assert num == n
    np.testing.assert_array_equal(cp.asnumpy(labels), want)


@pytest.mark.parametrize("shape", [(6, 67, 131), (3, 9, 17, 23)])
def test_cupy_batches_stay_on_the_device_and_label_as_single_calls(cp, shape):
    batch = random_image(shape, 0.45, len(shape))
    x = cp.asarray(batch)
    labels, counts = ccl.label_batch(x)
    assert_gpu_labels(cp, labels, x)
    for i, item in enumerate(batch):
        want, n = ccl.label(item, return_num=True)
        np.testing.assert_array_equal(cp.asnumpy(labels[i]), want)
        assert counts[i] == n


@pytest.mark.parametrize("connectivity", [4, 8])
@pytest.mark.parametrize("shape", [(5, 64, 131), (4, 32, 300), (12, 96, 64)])
def test_cupy_image_batches_run_as_one_and_label_as_single_calls(cp, shape, connectivity):
    # Items of a multiple of 32 rows run as one image (one grid per pass), their borders kept
    # apart: full items, vertical stripes and checkerboards would join across them otherwise.
    n, h, w = shape
    y, x = np.mgrid[0:h, 0:w]
    patterns = [np.ones((h, w), bool), x % 3 == 0, (x + y) % 2 == 0]
    batch = random_image(shape, 0.45, connectivity)
    for i in range(min(n, len(patterns))):
        batch[i] = patterns[i]
    images = cp.asarray(batch)
    labels = cp.zeros(shape, dtype=cp.uint32)
    at = lambda a: a.__cuda_array_interface__["data"][0]
    counts = ccl._ccl._label_cuda_stacked(at(images.view(cp.uint8)), at(labels), list(shape), None, connectivity, None, "cuda:0")
    assert counts is not None, "labeled as one"
    labels, got = ccl.label_batch(images, connectivity=connectivity)
    for i, item in enumerate(batch):
        want, num = ccl.label(item, connectivity=connectivity, return_num=True)
        np.testing.assert_array_equal(cp.asnumpy(labels[i]), want, err_msg=f"item {i}")
        assert got[i] == num == counts[i]
    # Items of 40 rows are labeled one by one, the same way.
    uneven = random_image((3, 40, 50), 0.45, connectivity)
    assert ccl._ccl._label_cuda_stacked(at(cp.asarray(uneven)), at(cp.zeros((3, 40, 50), cp.uint32)), [3, 40, 50], None, connectivity, None, "cuda:0") is None
    labels, got = ccl.label_batch(cp.asarray(uneven), connectivity=connectivity)
    for i, item in enumerate(uneven):
        np.testing.assert_array_equal(cp.asnumpy(labels[i]), ccl.label(item, connectivity=connectivity))


def test_cupy_batches_with_stats_keep_the_tables_on_the_device(cp):
    batch = random_image((3, 40, 50), 0.45, 3)
    labels, counts, stats, centroids = ccl.label_batch(cp.asarray(batch), stats=True)
    for i, item in enumerate(batch):
        num, want, want_stats, want_centroids = ccl.label_with_stats(item)
        assert isinstance(stats[i], cp.ndarray) and counts[i] == num - 1
        np.testing.assert_array_equal(cp.asnumpy(labels[i]), want)
        np.testing.assert_array_equal(cp.asnumpy(stats[i]), want_stats)
        np.testing.assert_allclose(cp.asnumpy(centroids[i]), want_centroids)


def test_cupy_every_algorithm(cp):
    image = random_image((45, 77), 0.5, 3)
    want, _ = scipy_label(image, 8)
    x = cp.asarray(image)
    for algorithm in ccl.algorithms():
        np.testing.assert_array_equal(cp.asnumpy(ccl.label(x, algorithm=algorithm)), want, err_msg=algorithm)


@pytest.mark.parametrize(
    "dtype", ["bool", "uint8", "int8", "uint16", "int16", "int32", "uint32", "int64", "float16", "float32", "float64"]
)
def test_cupy_every_dtype(cp, dtype):
    values = random_image((31, 29), 0.5, 7).astype(np.int64) * 3  # 0 or 3: nonzero is foreground
    x = cp.asarray(values.astype(dtype))
    labels = ccl.label(x)
    assert_gpu_labels(cp, labels, x)
    np.testing.assert_array_equal(cp.asnumpy(labels), scipy_label(values != 0, 8)[0])


def test_cupy_background_filters_and_dtypes_as_numpy(cp):
    image = np.where(random_image((61, 83), 0.5, 9), 2, 5).astype(np.uint16)
    options = {"background": 5, "min_size": 4, "keep_largest": 12, "connectivity": 1}
    want, n = ccl.label(image, device="cpu", return_num=True, **options)
    for dtype in (None, np.int32, np.uint64, np.int64):
        labels, num = ccl.label(cp.asarray(image), dtype=dtype, return_num=True, **options)
        assert isinstance(labels, cp.ndarray) and labels.dtype == np.dtype(dtype or np.uint32) and num == n
        np.testing.assert_array_equal(cp.asnumpy(labels), want)
    _, labels, stats, _ = ccl.label_with_stats(cp.asarray(image), **options)
    np.testing.assert_array_equal(cp.asnumpy(stats), ccl.label_with_stats(image, device="cpu", **options)[2])


def test_cupy_strided_and_transposed_views(cp):
    base = cp.asarray(random_image((90, 120), 0.5, 11).astype(np.uint8))
    for view in [base[::2, ::3], base[5:70, 10:100], base.T, cp.asfortranarray(base), base[::-1, ::-1]]:
        host = cp.asnumpy(view)
        np.testing.assert_array_equal(cp.asnumpy(ccl.label(view)), scipy_label(host, 8)[0])
    # The input is left as it was.
    np.testing.assert_array_equal(cp.asnumpy(base), random_image((90, 120), 0.5, 11).astype(np.uint8))


@pytest.mark.parametrize("shape", [(73, 129), (1, 50), (9, 17, 23), (1, 17, 23)])
@pytest.mark.parametrize("density", [0.0, 0.4, 1.0])
def test_cupy_stats_equal_the_numpy_path(cp, shape, density):
    image = random_image(shape, density, len(shape)).astype(np.uint8)
    num, labels, stats, centroids = ccl.label_with_stats(cp.asarray(image))
    want_num, want_labels, want_stats, want_centroids = ccl.label_with_stats(image)
    # Everything stays on the GPU: labels, statistics and centroids are CuPy arrays there.
    assert isinstance(labels, cp.ndarray) and isinstance(stats, cp.ndarray) and isinstance(centroids, cp.ndarray)
    assert stats.dtype == cp.int64 and centroids.dtype == cp.float64 and stats.device.id == labels.device.id
    assert num == want_num
    np.testing.assert_array_equal(cp.asnumpy(labels), want_labels)
    np.testing.assert_array_equal(cp.asnumpy(stats), want_stats)
    np.testing.assert_array_equal(cp.asnumpy(centroids), want_centroids)


def test_cupy_through_the_host_on_another_device(cp):
    image = random_image((40, 50), 0.5, 5)
    for device in [d[0] for d in ccl.devices() if d[3] != "cuda"]:
        labels = ccl.label(cp.asarray(image), device=device)
        assert isinstance(labels, np.ndarray)
        np.testing.assert_array_equal(labels, scipy_label(image, 8)[0])
        num, labels, stats, _ = ccl.label_with_stats(cp.asarray(image), device=device)
        assert isinstance(labels, np.ndarray) and num == scipy_label(image, 8)[1] + 1


def test_cupy_output_is_device_memory_and_no_host_copy_is_made(cp):
    x = cp.asarray(random_image((4096, 4096), 0.5, 1))
    labels = ccl.label(x)
    attributes = cp.cuda.runtime.pointerGetAttributes(labels.data.ptr)
    memory_type = getattr(attributes, "type", getattr(attributes, "memoryType", None))  # older CuPy: memoryType
    assert memory_type == cp.cuda.runtime.memoryTypeDevice
    assert attributes.device == x.device.id
    stream = cp.cuda.get_current_stream()
    for _ in range(3):  # warm-up
        ccl.label(x)
    stream.synchronize()
    times = []
    for _ in range(9):
        start = time.perf_counter()
        ccl.label(x)
        stream.synchronize()
        times.append(time.perf_counter() - start)
    copies = []
    for _ in range(3):
        start = time.perf_counter()
        cp.asnumpy(labels)
        copies.append(time.perf_counter() - start)
    label_s, copy_s = statistics.median(times), min(copies)
    assert label_s < copy_s, f"ccl.label {label_s * 1e3:.2f} ms, one download of the labels {copy_s * 1e3:.2f} ms"


def test_cupy_output_arrays_receive_the_labels(cp):
    image = random_image((300, 257), 0.45, 4)
    want = ccl.label(image, device="cpu")
    x = cp.asarray(image)
    for dtype in (cp.uint32, cp.int32):
        output = cp.zeros(image.shape, dtype=dtype)
        labels = ccl.label(x, output=output)
        assert labels is output
        np.testing.assert_array_equal(output.get(), want)
    with pytest.raises(ValueError, match="output"):
        ccl.label(x, output=cp.zeros((300, 256), dtype=cp.uint32))
    with pytest.raises(ValueError, match="output"):
        ccl.label(x, output=np.zeros(image.shape, dtype=np.uint32))


def test_cupy_streams(cp):
    # The input is written on a stream of the caller's and labeled at once; the labels are used
    # on another stream at once.
    image = random_image((2048, 2048), 0.45, 3)
    want, n = scipy_label(image, 8)
    with cp.cuda.Stream(non_blocking=True):
        x = cp.asarray(image.astype(np.float32)) * 2.0
        labels, num = ccl.label(x, return_num=True)
    with cp.cuda.Stream(non_blocking=True):
        doubled = labels * 2
        got = cp.asnumpy(doubled)
    assert num == n
    np.testing.assert_array_equal(got, want * 2)


def test_cupy_wrong_device_and_empty_arrays_are_refused(cp):
    x = cp.asarray(random_image((20, 30), 0.5, 1))
    with pytest.raises(ValueError, match=f"on cuda:{x.device.id}"):
        ccl.label(x, device=f"cuda:{x.device.id + 1}")
    with pytest.raises(ValueError, match="empty"):
        ccl.label(cp.zeros((0, 5), dtype=cp.uint8))
    with pytest.raises(ValueError, match="dimensions"):
        ccl.label(cp.zeros(5, dtype=cp.uint8))
    with pytest.raises(ValueError, match="dtype"):
        ccl.label(cp.zeros((3, 3), dtype=cp.complex64))


def test_cupy_arrays_on_another_gpu(cp):
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("one CUDA device")
    image = random_image((50, 60), 0.5, 2)
    with cp.cuda.Device(1):
        x = cp.asarray(image)
    labels = ccl.label(x)  # current device 0, array on 1
    assert labels.device.id == 1
    np.testing.assert_array_equal(cp.asnumpy(labels), scipy_label(image, 8)[0])


def test_cupy_pages_binarize_as_numpy(cp):
    gray = (np.random.default_rng(6).random((300, 410)) * 255).astype(np.uint8)
    for kwargs in [dict(), dict(method="sauvola", window=31), dict(method="otsu"), dict(kernel="shared", window=9)]:
        ink = ccl.binarize(cp.asarray(gray), **kwargs)
        assert isinstance(ink, cp.ndarray) and ink.dtype == cp.bool_ and ink.device.id == 0
        np.testing.assert_array_equal(ink.get(), ccl.binarize(gray, device="cpu", **kwargs))
    rgb = np.dstack([gray, 255 - gray, gray // 2])
    for page in [rgb, gray.astype(np.uint16) * 257, gray.T]:
        np.testing.assert_array_equal(ccl.binarize(cp.asarray(page)).get(), ccl.binarize(page, device="cpu"))
    want = ccl.label(ccl.binarize(gray, device="cpu"), device="cpu")
    np.testing.assert_array_equal(ccl.label(ccl.binarize(cp.asarray(gray))).get(), want)
    labels = ccl.label(cp.asarray(gray), binarize="nick")
    assert isinstance(labels, cp.ndarray)
    np.testing.assert_array_equal(labels.get(), want)
    num, labels, stats, centroids = ccl.label_with_stats(cp.asarray(rgb), binarize={"method": "wolf"})
    expected = ccl.label_with_stats(rgb, device="cpu", binarize={"method": "wolf"})
    assert num == expected[0] and isinstance(stats, cp.ndarray)
    for got, wanted in zip((labels, stats, centroids), expected[1:]):
        np.testing.assert_array_equal(got.get(), wanted)
    with pytest.raises(ValueError, match="on cuda:"):
        ccl.binarize(cp.asarray(gray), device="cuda:7")
    assert isinstance(ccl.binarize(cp.asarray(gray), device="cpu"), np.ndarray)


def test_cupy_pages_are_binarized_on_the_gpu_on_the_callers_stream(cp):
    """The page is read after the work already queued on CuPy's current stream (a kernel that
    writes it), and nothing goes through the host: binarizing a 4096x4096 page takes less time
    than one download of it."""
    gray = (np.random.default_rng(9).random((4096, 4096)) * 255).astype(np.uint8)
    want = ccl.binarize(gray, device="cpu")
    with cp.cuda.Stream(non_blocking=True):
        page = cp.zeros(gray.shape, dtype=cp.uint8)
        page += cp.asarray(gray)  # queued on the stream; ccl must wait for it
        ink = ccl.binarize(page)
    np.testing.assert_array_equal(ink.get(), want)
    ccl.binarize(page)  # warm
    cp.cuda.Device().synchronize()
    import time

    start = time.perf_counter()
    for _ in range(5):
        ccl.binarize(page)
    per_call = (time.perf_counter() - start) / 5
    start = time.perf_counter()
    for _ in range(5):
        page.get()
    download = (time.perf_counter() - start) / 5
    assert per_call < download, f"binarize {per_call * 1e3:.2f} ms, a download {download * 1e3:.2f} ms"


def test_cupy_interface_objects_of_other_libraries(cp):
    # An object that only exposes the interface of a CuPy bool array: labeled into a CuPy array.
    image = random_image((33, 44), 0.5, 4)
    x = cp.asarray(image)

    class Exported:
        __cuda_array_interface__ = x.__cuda_array_interface__

    labels = ccl.label(Exported())
    assert isinstance(labels, cp.ndarray)
    np.testing.assert_array_equal(cp.asnumpy(labels), scipy_label(image, 8)[0])


@pytest.mark.parametrize("shape,connectivity", [((67, 131), 4), ((67, 131), 8), ((19, 17, 23), 6), ((19, 17, 23), 18), ((19, 17, 23), 26)])
def test_cupy_arrays_past_32_bit_labels_are_labeled_in_slabs_on_their_gpu(cp, monkeypatch, shape, connectivity):
    # 2^32 - 1 elements lowered to 4 planes: the same labels as SciPy's, in uint64 on the GPU.
    image = random_image(shape, 0.5, connectivity)
    want, n = scipy_label(image, connectivity)
    monkeypatch.setattr(ccl, "MAX_32BIT_ELEMENTS", 4 * int(np.prod(shape[1:])))
    monkeypatch.setattr(ccl, "_GPU_SLAB_ELEMENTS", 4 * int(np.prod(shape[1:])))
    x = cp.asarray(image)
    labels, num = ccl.label(x, connectivity, return_num=True)
    assert isinstance(labels, cp.ndarray) and labels.dtype == cp.uint64 and labels.device.id == x.device.id
    assert num == n
    np.testing.assert_array_equal(cp.asnumpy(labels), want)
    output = cp.zeros(shape, cp.int64)
    assert ccl.label(x, connectivity, output=output) is output
    np.testing.assert_array_equal(cp.asnumpy(output), want)
    filtered = ccl.label(image, connectivity, device="cpu", min_size=4, keep_largest=6)
    np.testing.assert_array_equal(cp.asnumpy(ccl.label(x, connectivity, min_size=4, keep_largest=6)), filtered)
    # Labels from a base past 2^32, and on a caller's stream.
    base = 2**32 + 5
    with cp.cuda.Stream(non_blocking=True):
        gpu = ccl._gpu_array(x)
        based, m = ccl._label_gpu_slabs(gpu, connectivity, None, None, None, np.uint64, base=base)
    assert m == n
    np.testing.assert_array_equal(cp.asnumpy(based), np.where(want > 0, want.astype(np.uint64) + base, 0))


# --- PyTorch --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def torch():
    try:
        import torch
    except Exception as e:
        pytest.skip(f"torch does not import ({e})")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    if not any(d[3] == "cuda" for d in ccl.devices()):
        _require("ccl finds no CUDA device (CUDA driver or NVRTC missing?)")
    return torch


@pytest.mark.parametrize("shape,connectivity", [((67, 131), 4), ((67, 131), 8), ((9, 17, 23), 26)])
def test_torch_labels_as_scipy(torch, shape, connectivity):
    image = random_image(shape, 0.45, 1)
    x = torch.as_tensor(image, device="cuda")
    labels, num = ccl.label(x, connectivity=connectivity, return_num=True)
    assert isinstance(labels, torch.Tensor) and labels.dtype == torch.int32 and labels.device == x.device
    want, n = scipy_label(image, connectivity)
    assert num == n
    np.testing.assert_array_equal(labels.cpu().numpy(), want)


def test_torch_dtypes_and_layouts(torch):
    values = random_image((31, 29), 0.5, 7).astype(np.int64) * 3
    want = scipy_label(values != 0, 8)[0]
    for dtype in [torch.bool, torch.uint8, torch.int16, torch.int64, torch.float16, torch.float32]:
        x = torch.as_tensor(values, device="cuda").to(dtype)
        np.testing.assert_array_equal(ccl.label(x).cpu().numpy(), want, err_msg=str(dtype))
    x = torch.as_tensor(values, device="cuda")
    np.testing.assert_array_equal(ccl.label(x.T).cpu().numpy(), scipy_label(values.T != 0, 8)[0])
    np.testing.assert_array_equal(ccl.label(x[::2, ::3]).cpu().numpy(), scipy_label(values[::2, ::3] != 0, 8)[0])


def test_torch_stats_equal_the_numpy_path(torch):
    image = random_image((73, 129), 0.4, 2).astype(np.uint8)
    num, labels, stats, centroids = ccl.label_with_stats(torch.as_tensor(image, device="cuda"))
    want_num, want_labels, want_stats, want_centroids = ccl.label_with_stats(image)
    assert num == want_num and isinstance(labels, torch.Tensor)
    assert isinstance(stats, torch.Tensor) and stats.is_cuda and stats.dtype == torch.int64
    assert isinstance(centroids, torch.Tensor) and centroids.dtype == torch.float64
    np.testing.assert_array_equal(labels.cpu().numpy(), want_labels.astype(np.int32))
    np.testing.assert_array_equal(stats.cpu().numpy(), want_stats)
    np.testing.assert_array_equal(centroids.cpu().numpy(), want_centroids)


def test_torch_pages_binarize_as_numpy(torch):
    gray = (np.random.default_rng(8).random((120, 170)) * 255).astype(np.uint8)
    ink = ccl.binarize(torch.as_tensor(gray, device="cuda"), window=15)
    assert isinstance(ink, torch.Tensor) and ink.is_cuda and ink.dtype == torch.bool
    np.testing.assert_array_equal(ink.cpu().numpy(), ccl.binarize(gray, window=15, device="cpu"))
    rgb = np.dstack([gray, 255 - gray, gray // 2])
    np.testing.assert_array_equal(
        ccl.binarize(torch.as_tensor(rgb, device="cuda")).cpu().numpy(), ccl.binarize(rgb, device="cpu")
    )
    if hasattr(torch, "uint16"):  # 16-bit samples: v / 257, rounded, on the GPU
        wide = torch.as_tensor(gray.astype(np.int32) * 257 + 100 * (gray < 255), device="cuda").to(torch.uint16)
        np.testing.assert_array_equal(ccl.binarize(wide).cpu().numpy(), ccl.binarize(gray, device="cpu"))
    with pytest.raises(ValueError, match="dtype"):
        ccl.binarize(torch.as_tensor(gray, device="cuda").float())
    labels = ccl.label(torch.as_tensor(gray, device="cuda"), binarize="sauvola")
    assert isinstance(labels, torch.Tensor) and labels.dtype == torch.int32
    want = ccl.label(ccl.binarize(gray, "sauvola", device="cpu"), device="cpu")
    np.testing.assert_array_equal(labels.cpu().numpy(), want.astype(np.int32))


def test_torch_errors_and_the_host_path(torch):
    x = torch.as_tensor(random_image((20, 30), 0.5, 1), device="cuda")
    wide = ccl.label(x, dtype=np.int64, min_size=2, background=0)
    assert wide.dtype == torch.int64
    np.testing.assert_array_equal(wide.cpu().numpy(), ccl.label(x.cpu().numpy(), device="cpu", min_size=2))
    with pytest.raises(ValueError, match="PyTorch"):
        ccl.label(x, dtype=np.uint32)
    with pytest.raises(ValueError, match="on cuda:"):
        ccl.label(x, device=f"cuda:{x.device.index + 1}")
    labels = ccl.label(x, device="cpu")
    assert isinstance(labels, np.ndarray)
    np.testing.assert_array_equal(labels, scipy_label(x.cpu().numpy(), 8)[0])


def test_torch_tensors_past_32_bit_labels_are_labeled_in_slabs_on_their_gpu(torch, monkeypatch):
    image = random_image((41, 9, 10), 0.5, 3)
    want, n = scipy_label(image, 26)
    monkeypatch.setattr(ccl, "MAX_32BIT_ELEMENTS", 3 * 90)
    monkeypatch.setattr(ccl, "_GPU_SLAB_ELEMENTS", 3 * 90)
    x = torch.as_tensor(image, device="cuda")
    labels, num = ccl.label(x, return_num=True)
    assert isinstance(labels, torch.Tensor) and labels.dtype == torch.int64 and labels.device == x.device
    assert num == n
    np.testing.assert_array_equal(labels.cpu().numpy(), want)
    with pytest.raises(ValueError, match="int32 or int64"):
        ccl.label(x, dtype=np.uint64)
