"""ccl.binarize against the libraries users compare it with, on every device ccl finds (POCL and
the CPU reference in CI): Nick's doxa formula equal to doxapy's NICK and its opencv formula equal
to OpenCV ximgproc's niBlackThreshold(..., BINARIZATION_NICK), pixel for pixel; every method and
kernel equal to the CPU reference; color and 16-bit pages converted as documented; errors."""

import importlib
import os

import numpy as np
import pytest

import ccl

from _devices import DEVICES
REQUIRE_PEERS = os.environ.get("CCL_REQUIRE_PEERS") == "1"


def peer(name):
    """The module `name`, or a skip (a failure when CCL_REQUIRE_PEERS=1, as in CI)."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        if REQUIRE_PEERS:
            pytest.fail(f"CCL_REQUIRE_PEERS=1 and {name} does not import ({e})")
        pytest.skip(f"{name} is not installed")


def page(height=120, width=170, seed=5):
    """A page-like gray image: a shaded background, strokes of several darknesses, noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    background = 150 + 60 * x / width + 30 * y / height
    strokes = ((x // 3 + y // 5) % 9 == 0) | ((x - 2 * y) % 23 < 2)
    gray = np.where(strokes, 40 + 80 * (y % 3), background) + rng.normal(0, 12, (height, width))
    return np.clip(gray, 0, 255).astype(np.uint8)


def dibco_crop():
    """A crop of a real DIBCO page where ../shared/data (or CCL_DATA_DIR) has one, else None."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    data = os.environ.get("CCL_DATA_DIR", os.path.join(root, "..", "shared", "data"))
    path = os.path.join(data, "dibco", "2009", "Originals", "2009-H01.png")
    if not os.path.isfile(path):
        return None
    cv2 = peer("cv2")
    return cv2.cvtColor(cv2.imread(path), cv2.COLOR_BGR2GRAY)[:300, :400].copy()


def pages():
    crop = dibco_crop()
    return [page()] + ([] if crop is None else [crop])


def doxapy_nick(gray, window, k):
    doxapy = peer("doxapy")
    out = np.empty(gray.shape, np.uint8)
    nick = doxapy.Binarization(doxapy.Binarization.Algorithms.NICK)
    nick.initialize(gray)
    nick.to_binary(out, {"window": window, "k": k})
    return out == 0  # doxapy: ink 0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("window", [1, 2, 3, 15, 45])
def test_nick_doxa_formula_equals_doxapy(device, window):
    for gray in pages():
        for k in (-0.1, -0.2):
            want = doxapy_nick(gray, window, k)
            ink = ccl.binarize(gray, window=window, k=k, formula="doxa", device=device)
            assert ink.dtype == np.bool_ and ink.shape == gray.shape
            if window >= 3:  # (a window of 1: T = p (1 + k) < p, ink only where p = 0)
                assert want.any() and not want.all()
            assert int((ink != want).sum()) == 0, f"W={window} k={k}"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("window", [3, 15, 45])
def test_nick_opencv_formula_equals_ximgproc(device, window):
    cv2 = peer("cv2")
    if not hasattr(cv2, "ximgproc"):
        if REQUIRE_PEERS:
            pytest.fail("CCL_REQUIRE_PEERS=1 and OpenCV has no ximgproc (opencv-contrib-python-headless)")
        pytest.skip("OpenCV without its contrib modules")
    for gray in pages():
        for k in (-0.1, -0.2):
            want = (
                cv2.ximgproc.niBlackThreshold(
                    gray, 255, cv2.THRESH_BINARY, window, k, binarizationMethod=cv2.ximgproc.BINARIZATION_NICK
                )
                == 0
            )
            ink = ccl.binarize(gray, window=window, k=k, formula="opencv", device=device)
            assert int((ink != want).sum()) == 0, f"W={window} k={k}"


METHODS = [
    dict(method="nick"),
    dict(method="nick", window=2, formula="doxa"),
    dict(method="nick", window=7, formula="opencv"),
    dict(method="sauvola", window=15, k=0.2, r=100),
    dict(method="niblack", window=9),
    dict(method="wolf"),
    dict(method="otsu"),
]


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "cpu"])
@pytest.mark.parametrize("kernel", ["fast", "global", "global-shared", "shared"])
@pytest.mark.parametrize("params", METHODS, ids=lambda p: "-".join(str(v) for v in p.values()))
def test_every_method_and_kernel_equals_the_cpu_reference(device, kernel, params):
    gray = page(61, 83, seed=len(params))
    want = ccl.binarize(gray, device="cpu", **params)
    np.testing.assert_array_equal(ccl.binarize(gray, kernel=kernel, device=device, **params), want)


def test_defaults_are_the_methods_usual_parameters():
    gray = page()
    np.testing.assert_array_equal(
        ccl.binarize(gray, device="cpu"), ccl.binarize(gray, "nick", 45, -0.1, formula="paper", device="cpu")
    )
    np.testing.assert_array_equal(
        ccl.binarize(gray, "sauvola", device="cpu"), ccl.binarize(gray, "sauvola", 15, 0.5, 128, device="cpu")
    )
    # Nick's paper formula and Doxa's differ (the paper's subtracts m^2 inside the root, which
    # shows in small windows).
    paper, doxa = (ccl.binarize(gray, window=3, formula=f, device="cpu") for f in ("paper", "doxa"))
    assert (paper != doxa).any()


def test_color_and_16_bit_pages_become_gray_as_documented():
    cv2 = peer("cv2")
    rng = np.random.default_rng(2)
    rgb = rng.integers(0, 256, (50, 70, 3), dtype=np.uint8)
    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)  # (4899 R + 9617 G + 1868 B + 8192) >> 14
    want = ccl.binarize(gray, window=9, device="cpu")
    np.testing.assert_array_equal(ccl.binarize(rgb, window=9, device="cpu"), want)
    rgba = np.dstack([rgb, rng.integers(0, 256, (50, 70), dtype=np.uint8)])
    np.testing.assert_array_equal(ccl.binarize(rgba, window=9, device="cpu"), want)
    np.testing.assert_array_equal(ccl.binarize(gray[:, :, None], window=9, device="cpu"), want)
    # 16-bit samples: v / 257, rounded (v = 257 g + 100 rounds to g, 257 g + 129 to g + 1).
    wide = gray.astype(np.uint16) * 257 + np.uint16(100) * (gray < 255)
    np.testing.assert_array_equal(ccl.binarize(wide, window=9, device="cpu"), want)


def test_strided_and_fortran_pages():
    gray = page(90, 130)
    for view in [gray[::2, ::3], gray.T, np.asfortranarray(gray), gray[10:50, 20:100]]:
        np.testing.assert_array_equal(
            ccl.binarize(view, window=15, device="cpu"), ccl.binarize(np.ascontiguousarray(view), window=15, device="cpu")
        )


@pytest.mark.parametrize("device", DEVICES)
def test_tiny_constant_and_black_pages(device):
    for shape in [(1, 1), (1, 37), (37, 1), (5, 3)]:
        gray = page(*shape, seed=shape[1])
        np.testing.assert_array_equal(
            ccl.binarize(gray, window=3, device=device), ccl.binarize(gray, window=3, device="cpu"), err_msg=str(shape)
        )
    # A constant gray page is background (with k < 0, T < p: the root is p sqrt((NP - 1) / NP)
    # with the paper's formula), an all-black one ink (T = p = 0).
    assert not ccl.binarize(np.full((20, 30), 128, np.uint8), device=device).any()
    assert ccl.binarize(np.zeros((20, 30), np.uint8), device=device).all()


@pytest.mark.parametrize("device", DEVICES)
def test_labeling_the_ink_equals_scipy(device):
    ndimage = peer("scipy.ndimage")
    gray = page(150, 210)
    ink = ccl.binarize(gray, device=device)
    labels, num = ccl.label(ink, device=device, return_num=True)
    want, n = ndimage.label(ink, structure=np.ones((3, 3)))
    assert num == n > 1
    np.testing.assert_array_equal(labels, want)


def test_bad_arguments_are_value_errors_naming_them():
    gray = page(20, 30)
    for kwargs, name in [
        (dict(window=0), "window"),
        (dict(window=-3), "window"),
        (dict(window=4096), "window"),
        (dict(k=float("nan")), "k"),
        (dict(k=float("inf")), "k"),
        (dict(method="sauvola", r=0), "r"),
        (dict(method="bernsen"), "method"),
        (dict(formula="skimage"), "formula"),
        (dict(kernel="texture"), "kernel"),
        (dict(formula="opencv", window=4), "window"),
    ]:
        with pytest.raises(ValueError, match=name):
            ccl.binarize(gray, device="cpu", **kwargs)
    with pytest.raises(TypeError):
        ccl.binarize(gray, window=4.5, device="cpu")
    for bad, what in [
        (np.zeros((4, 4), np.float32), "dtype"),
        (np.zeros((4, 4), bool), "dtype"),
        (np.zeros((2, 3, 4, 5), np.uint8), "shape"),
        (np.zeros((4, 4, 2), np.uint8), "shape"),
        (np.zeros(7, np.uint8), "shape"),
        (np.zeros((0, 5), np.uint8), "empty"),
    ]:
        with pytest.raises(ValueError, match=what):
            ccl.binarize(bad, device="cpu")
    with pytest.raises(ValueError, match="device"):
        ccl.binarize(gray, device="vulkan:0")


def test_doxas_golden_page():
    """Doxa's own NICK output of its test page (window 45, k -0.1, Doxa's gray), bit for bit."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    data = os.environ.get("CCL_DATA_DIR", os.path.join(root, "..", "shared", "data"))
    source, golden = os.path.join(data, "doxa", "2JohnC1V3.ppm"), os.path.join(data, "doxa", "2JohnC1V3-NICK.pbm")
    if not (os.path.isfile(source) and os.path.isfile(golden)):
        pytest.skip("Doxa's test page is not in ../shared/data (tests/binarize.rs checks it in Rust)")
    cv2 = peer("cv2")
    rgb = cv2.cvtColor(cv2.imread(source), cv2.COLOR_BGR2RGB).astype(np.uint32)
    gray = ((11 * rgb[..., 0] + 16 * rgb[..., 1] + 5 * rgb[..., 2]) // 32).astype(np.uint8)  # Doxa's gray
    want = cv2.imread(golden, cv2.IMREAD_GRAYSCALE) == 0
    for device in DEVICES:
        ink = ccl.binarize(gray, window=45, k=-0.1, formula="doxa", device=device)
        assert int((ink != want).sum()) == 0, device


FUSED = [
    ("nick", dict()),
    ({"method": "sauvola", "window": 31, "k": 0.2}, dict(method="sauvola", window=31, k=0.2)),
    ({"method": "nick", "window": 15, "formula": "doxa", "kernel": "shared"}, dict(window=15, formula="doxa")),
    ({"method": "otsu"}, dict(method="otsu")),
]


@pytest.mark.parametrize("device", DEVICES)
def test_label_with_binarize_labels_the_ink(device):
    gray = page(150, 210)
    for spec, kwargs in FUSED:
        ink = ccl.binarize(gray, device="cpu", **kwargs)
        want, n = ccl.label(ink, device="cpu", return_num=True)
        labels, num = ccl.label(gray, device=device, binarize=spec, return_num=True)
        assert num == n > 1, spec
        np.testing.assert_array_equal(labels, want, err_msg=str(spec))
        got = ccl.label_with_stats(gray, device=device, binarize=spec)
        expected = ccl.label_with_stats(ink, device="cpu")
        assert got[0] == expected[0]
        for a, b in zip(got[1:], expected[1:]):
            np.testing.assert_array_equal(a, b, err_msg=str(spec))
    # A color page, 4-connectivity, into an output array.
    out = np.empty(gray.shape, np.uint32)
    got = ccl.label(np.dstack([gray] * 3), connectivity=4, device=device, binarize="nick", output=out)
    assert got is out
    np.testing.assert_array_equal(out, ccl.label(ccl.binarize(gray, device="cpu"), connectivity=4, device="cpu"))


def test_label_with_binarize_errors():
    gray = page(20, 30)
    for spec in [3, ["nick"], {"windw": 15}]:
        with pytest.raises(TypeError, match="binarize"):
            ccl.label(gray, binarize=spec, device="cpu")
    for spec, name in [({"window": 0}, "window"), ("bernsen", "method"), ({"k": float("nan")}, "k")]:
        with pytest.raises(ValueError, match=name):
            ccl.label(gray, binarize=spec, device="cpu")
    with pytest.raises(ValueError, match="connectivity"):
        ccl.label(gray, connectivity=6, binarize="nick", device="cpu")
    with pytest.raises(ValueError, match="shape"):
        ccl.label(np.zeros((3, 4, 5), np.uint8), binarize="nick", device="cpu")
    with pytest.raises(ValueError, match="dtype"):
        ccl.label(gray > 100, binarize="nick", device="cpu")  # a mask is not a page
