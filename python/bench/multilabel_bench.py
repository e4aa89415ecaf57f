"""Multi-label labeling (issue 53), side by side on one machine; prints a table and writes JSON.

    python3 multilabel_bench.py OUT.json [--side 2048] [--runs 30] [--page DIBCO.png]

Inputs, 8 classes (0 the background), 8-connectivity:
- ``random g4``: random classes in 4 x 4 cells (NumPy's PCG64, seed 0);
- ``page``: a real page (a DIBCO original where one is given, else the built-in sample) turned
  into 8 classes by its gray levels (bands of 32), tiled to ``side`` x ``side``: a segmentation
  with the shapes of real ink, paper and stains.

For each: ccl multi-label (the default, and each algorithm that can on the GPU) and ccl binary
labeling of the same foreground (``classes != 0``), on
CuPy arrays (labels written on the GPU when the call returns: the device's time and the call's)
and on NumPy arrays (host in, host out); cc3d ``connected_components`` (multi-label, CPU) and
scikit-image ``label`` where installed. Medians of ``--runs`` wall clocks (cc3d and scikit-image:
of 3), after one warm-up. The labels are checked: ccl's multi-label equals the CPU reference's
(and scikit-image's, where installed), and has cc3d's partition.
"""

import argparse
import importlib.metadata
import json
import statistics
import sys
import time

import numpy as np

import ccl


#: The algorithms that label multi-label images, each timed on the GPU.
MULTILABEL_ALGORITHMS = ("LE", "OLE", "UF", "UF_IC", "KE", "KE_IC", "TUF")


def timed(call, runs):
    call()  # warm-up: kernels built, memory pooled
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3, [round(t * 1e3, 4) for t in times]


def random_classes(side, seed=0):
    rng = np.random.default_rng(seed)
    cells = rng.integers(0, 8, (side // 4, side // 4), dtype=np.uint8)
    return np.ascontiguousarray(cells.repeat(4, 0).repeat(4, 1))


def page_classes(side, path):
    """The page at ``path`` (gray) in 8 classes of 32 gray levels each, tiled to side x side;
    without a page, a smooth random field (sums of a few sines) instead."""
    if path:
        import cv2

        gray = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
    else:
        y, x = np.mgrid[0:700, 0:900] / 40.0
        gray = (127 + 60 * np.sin(x) * np.cos(y / 1.7) + 60 * np.sin(x / 3.1 + y / 2.3)).astype(np.uint8)
    reps = (-(-side // gray.shape[0]), -(-side // gray.shape[1]))
    return np.ascontiguousarray(np.tile(gray, reps)[:side, :side] // 32)


def same_partition(a, b):
    if not np.array_equal(a == 0, b == 0):
        return False
    pairs = np.unique(np.stack([a[a != 0].astype(np.int64), b[b != 0].astype(np.int64)]), axis=1)
    return len(np.unique(pairs[0])) == pairs.shape[1] == len(np.unique(pairs[1]))


def measure(name, classes, runs, cupy):
    row = {"input": name, "shape": list(classes.shape), "classes": int(classes.max()) + 1}
    binary = (classes != 0).view(np.uint8)
    labels, n = ccl.label(classes, multilabel=True, return_num=True)
    row["components"], row["binary_components"] = int(n), int(ccl.label(binary).max())
    want = ccl.label(classes, multilabel=True, device="cpu")
    row["equal_to_cpu_reference"] = bool(np.array_equal(labels, want))
    try:
        from skimage.measure import label as sk_label

        row["equal_to_scikit_image"] = bool(np.array_equal(labels, sk_label(classes, background=0, connectivity=2)))
        row["scikit_image_ms"] = timed(lambda: sk_label(classes, background=0, connectivity=2), 3)[0]
    except ImportError:
        pass
    try:
        import cc3d

        row["cc3d_version"] = importlib.metadata.version("connected-components-3d")
        row["same_partition_as_cc3d"] = bool(same_partition(labels, cc3d.connected_components(classes, connectivity=8)))
        row["cc3d_ms"], row["cc3d_runs"] = timed(lambda: cc3d.connected_components(classes, connectivity=8), 3)
    except ImportError:
        pass
    row["numpy_multilabel_ms"], _ = timed(lambda: ccl.label(classes, multilabel=True), runs)
    row["numpy_binary_ms"], _ = timed(lambda: ccl.label(binary), runs)
    if cupy is not None:
        gpu_classes, gpu_binary = cupy.asarray(classes), cupy.asarray(binary)
        out = cupy.empty(classes.shape, cupy.uint32)
        row["cupy_multilabel_ms"], row["cupy_multilabel_runs"] = timed(
            lambda: ccl.label(gpu_classes, multilabel=True, output=out), runs
        )
        for algorithm in MULTILABEL_ALGORITHMS:
            row[f"cupy_multilabel_{algorithm}_ms"], _ = timed(
                lambda: ccl.label(gpu_classes, multilabel=True, output=out, algorithm=algorithm), runs
            )
        row["cupy_binary_ms"], row["cupy_binary_runs"] = timed(lambda: ccl.label(gpu_binary, output=out), runs)
        row["cupy_multilabel_equal"] = bool(np.array_equal(cupy.asnumpy(ccl.label(gpu_classes, multilabel=True)), want))
        row["cupy_multilabel_over_binary"] = row["cupy_multilabel_ms"] / row["cupy_binary_ms"]
        if "cc3d_ms" in row:
            row["cc3d_over_cupy_multilabel"] = row["cc3d_ms"] / row["cupy_multilabel_ms"]
    row["numpy_multilabel_over_binary"] = row["numpy_multilabel_ms"] / row["numpy_binary_ms"]
    if "cc3d_ms" in row:
        row["cc3d_over_numpy_multilabel"] = row["cc3d_ms"] / row["numpy_multilabel_ms"]
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--side", type=int, default=2048)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--page", default=None)
    args = parser.parse_args()
    try:
        import cupy
    except ImportError:
        cupy = None
    rows = [
        measure("random g4", random_classes(args.side), args.runs, cupy),
        measure("page" if args.page else "synthetic page", page_classes(args.side, args.page), args.runs, cupy),
    ]
    result = {"devices": ccl.devices()[:1], "command": " ".join(sys.argv), "rows": rows}
    for row in rows:
        print(json.dumps(row))
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
