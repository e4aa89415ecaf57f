"""Labeling and statistics from Python, host arrays in and out, against the Python peers (issue
13's benchmark): ccl.label and ccl.label_with_stats on each device, OpenCV's
connectedComponentsWithStats (16 threads and 1), scikit-image's label + regionprops_table, and
CuPy's ndimage.label + per-label sums (host arrays in and out, copies included). Peers that are
not installed are skipped and named.

    python3 python/bench/bench.py OUT [--pages DIR] [--sizes 2048,8192] [--density 50]
        [--devices cuda:0,opencl:1] [--runs 10] [--warmup 3]

Writes OUT/results.csv (one row per run: library, device, input, operation, ms) and
OUT/summary.md (per input and library the median, host clock, ms).
"""

import argparse
import csv
import os
import statistics
import sys
import time

import numpy as np

import ccl


def inputs(args):
    rng = np.random.default_rng(0)
    for side in args.sizes:
        yield f"{side}x{side}-d{args.density}", rng.random((side, side)) < args.density / 100
    if args.pages:
        import cv2

        for name in sorted(os.listdir(args.pages)):
            page = cv2.imread(os.path.join(args.pages, name), cv2.IMREAD_GRAYSCALE)
            if page is not None:
                yield f"page-{os.path.splitext(name)[0]}", page <= 128  # ink is foreground


def peers(args):
    """(library, device, operation, function of a host bool image) for what is installed."""
    out = []
    for device in args.devices:
        out.append(("ccl", device, "label", lambda im, d=device: ccl.label(im, device=d)))
        out.append(("ccl", device, "label+stats", lambda im, d=device: ccl.label_with_stats(im, device=d)))
    try:
        import cv2

        def opencv(threads):
            def run(im):
                cv2.setNumThreads(threads)
                return cv2.connectedComponentsWithStats(im.view(np.uint8), connectivity=8)

            return run

        out.append(("OpenCV", f"{os.cpu_count()} threads", "label+stats", opencv(os.cpu_count())))
        out.append(("OpenCV", "1 thread", "label+stats", opencv(1)))
    except ImportError as e:
        print(f"OpenCV skipped: {e}", file=sys.stderr)
    try:
        from skimage import measure

        out.append(("scikit-image", "1 thread", "label", lambda im: measure.label(im, connectivity=2)))
        out.append(
            (
                "scikit-image",
                "1 thread",
                "label+stats",
                lambda im: measure.regionprops_table(
                    measure.label(im, connectivity=2), properties=("label", "bbox", "area", "centroid")
                ),
            )
        )
    except ImportError as e:
        print(f"scikit-image skipped: {e}", file=sys.stderr)
    try:
        import cupy as cp
        from cupyx.scipy import ndimage as cnd

        structure = cp.ones((3, 3), dtype=bool)

        def cupy_label(im):
            labels, n = cnd.label(cp.asarray(im), structure=structure)
            return labels.get(), n

        def cupy_stats(im):
            d = cp.asarray(im)
            labels, n = cnd.label(d, structure=structure)
            index = cp.arange(1, n + 1)
            ys, xs = cp.indices(d.shape)
            area = cnd.sum_labels(d, labels, index)
            cx = cnd.sum_labels(xs, labels, index) / area
            cy = cnd.sum_labels(ys, labels, index) / area
            left = cnd.minimum(xs, labels, index)
            right = cnd.maximum(xs, labels, index)
            top = cnd.minimum(ys, labels, index)
            bottom = cnd.maximum(ys, labels, index)
            return labels.get(), [a.get() for a in (area, cx, cy, left, right, top, bottom)]

        out.append(("CuPy", "cuda:0", "label", cupy_label))
        out.append(("CuPy", "cuda:0", "label+stats", cupy_stats))
    except ImportError as e:
        print(f"CuPy skipped: {e}", file=sys.stderr)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--pages", default=None, help="folder of page images (gray <= 128 is ink)")
    ap.add_argument("--sizes", default="2048,8192")
    ap.add_argument("--density", type=int, default=50)
    ap.add_argument("--devices", default=None, help="ccl devices (default: every one but the CPU reference)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    found = [d[0] for d in ccl.devices()]
    args.devices = args.devices.split(",") if args.devices else [d for d in found if d != "cpu"] or ["cpu"]
    os.makedirs(args.out, exist_ok=True)
    rows = []
    libraries = peers(args)
    for name, image in inputs(args):
        for library, device, operation, run in libraries:
            try:
                for _ in range(args.warmup):
                    run(image)
                for k in range(args.runs):
                    t0 = time.perf_counter()
                    run(image)
                    rows.append((library, device, name, operation, k, (time.perf_counter() - t0) * 1e3))
            except Exception as e:  # one library failing keeps the others' figures
                print(f"{library} {device} {operation} failed on {name}: {e}", file=sys.stderr)
                continue
            ms = [r[5] for r in rows if r[:4] == (library, device, name, operation)]
            print(f"{name:24s} {library:12s} {device:14s} {operation:12s} median {statistics.median(ms):9.3f} ms")
    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["library", "device", "input", "operation", "run", "ms"])
        w.writerows(rows)
    keys = sorted({(r[0], r[1], r[3]) for r in rows}, key=lambda k: (k[2], k[0] != "ccl", k))
    names = list(dict.fromkeys(r[2] for r in rows))
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(f"Host arrays in and out, host clock, median of {args.runs} runs after {args.warmup}, ms.\n\n")
        f.write("| library | device | operation | " + " | ".join(names) + " |\n")
        f.write("|---|---|---|" + "---:|" * len(names) + "\n")
        for key in keys:
            cells = []
            for name in names:
                ms = [r[5] for r in rows if (r[0], r[1], r[3]) == key and r[2] == name]
                cells.append(f"{statistics.median(ms):.3f}" if ms else "—")
            f.write(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(cells) + " |\n")
    print(f"wrote {args.out}/results.csv and summary.md")


if __name__ == "__main__":
    main()
