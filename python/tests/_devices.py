"""The devices the tests run on: every device ccl finds in full mode (``CCL_TEST_FULL=1``, as
``scripts/test.sh --full`` sets it), else only the first one (``ccl.devices()`` lists GPUs
first, then OpenCL CPUs, then the CPU reference)."""

import os

import ccl

ALL_DEVICES = [d[0] for d in ccl.devices()]


def dibco_file(year: str, kind: str):
    """The path of the first DIBCO image of ``year`` in ``kind`` ("Originals" or "GT") where
    ../shared/data (or CCL_DATA_DIR) has one, else None."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    data = os.environ.get("CCL_DATA_DIR", os.path.join(root, "..", "shared", "data"))
    folder = os.path.join(data, "dibco", year, kind)
    if not os.path.isdir(folder):
        return None
    names = sorted(n for n in os.listdir(folder) if n.lower().endswith((".png", ".bmp", ".tif", ".tiff")))
    return os.path.join(folder, names[0]) if names else None
DEVICES = ALL_DEVICES if os.environ.get("CCL_TEST_FULL") == "1" else ALL_DEVICES[:1]
