"""Labeling and statistics from Python against the Python peers (issue 13's benchmark).

Host arrays in and out (copies included): ccl.label and ccl.label_with_stats on each device and
algorithm, OpenCV's connectedComponentsWithStats (all threads and 1), scikit-image's label +
regionprops_table, CuPy's ndimage.label + per-label statistics (ndimage.sum_labels, minimum,
maximum). CuPy arrays in and out (the input already on the GPU, the labels left there, the
stream synchronized after each call): ccl on cuda devices and CuPy. Peers that are not
installed are skipped and named.

    python3 python/bench/bench.py OUT [--pages DIR] [--sizes 2048,8192] [--density 50]
        [--devices cuda:0,opencl:1] [--algorithms UF,BKE_IC] [--runs 10] [--warmup 3]

Writes OUT/results.csv (one row per run: library, device, arrays, input, operation, ms) and
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
    """(library, device, arrays, operation, function of the input) for what is installed; arrays
    is "numpy" (the function takes a host bool image; "numpy, output reused": ccl writes the labels
    into one page-locked array per shape, ccl.host_array, as the Rust end-to-end benchmark does)
    or "cupy" (it takes that image on the GPU and its result stays there)."""
    out = []
    reused = {}

    def output_for(im, device):
        """A page-locked output array for images of im's shape, made once per shape and device
        (what a caller labeling many images does)."""
        key = (im.shape, device)
        if key not in reused:
            reused[key] = ccl.host_array(im.shape, np.uint32, device=device)
        return reused[key]

    for device in args.devices:
        for algorithm in args.algorithms:
            name = f"{device} {algorithm}"
            out.append(("ccl", name, "numpy", "label", lambda im, d=device, a=algorithm: ccl.label(im, algorithm=a, device=d)))
            out.append(
                (
                    "ccl",
                    name,
                    "numpy",
                    "label+stats",
                    lambda im, d=device, a=algorithm: ccl.label_with_stats(im, algorithm=a, device=d),
                )
            )
            out.append(
                (
                    "ccl",
                    name,
                    "numpy, output reused",
                    "label",
                    lambda im, d=device, a=algorithm: ccl.label(im, algorithm=a, device=d, output=output_for(im, d)),
                )
            )
    try:
        import cv2

        def opencv(threads):
            def run(im):
                cv2.setNumThreads(threads)
                return cv2.connectedComponentsWithStats(im.view(np.uint8), connectivity=8)

            return run

        out.append(("OpenCV", f"{os.cpu_count()} threads", "numpy", "label+stats", opencv(os.cpu_count())))
        out.append(("OpenCV", "1 thread", "numpy", "label+stats", opencv(1)))
    except ImportError as e:
        print(f"OpenCV skipped: {e}", file=sys.stderr)
    try:
        from skimage import measure

        out.append(("scikit-image", "1 thread", "numpy", "label", lambda im: measure.label(im, connectivity=2)))
        out.append(
            (
                "scikit-image",
                "1 thread",
                "numpy",
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

        def cupy_label(d):
            return cnd.label(d, structure=structure)

        import cupyx

        def cupy_stats(d):
            # What a CuPy user writes for OpenCV's statistics (ndimage.minimum/maximum take
            # seconds with a million labels): bincount for areas and coordinate sums, scatter
            # minima and maxima for the boxes, all on the GPU, where they stay (as ccl's do).
            labels, n = cnd.label(d, structure=structure)
            flat = labels.ravel()
            ys, xs = (c.ravel() for c in cp.indices(d.shape, dtype=cp.int32))
            area = cp.bincount(flat, minlength=n + 1)
            cx = cp.bincount(flat, weights=xs, minlength=n + 1) / area
            cy = cp.bincount(flat, weights=ys, minlength=n + 1) / area
            big = cp.iinfo(cp.int32).max
            left, top = cp.full(n + 1, big, cp.int32), cp.full(n + 1, big, cp.int32)
            right, bottom = cp.zeros(n + 1, cp.int32), cp.zeros(n + 1, cp.int32)
            cupyx.scatter_min(left, flat, xs)
            cupyx.scatter_min(top, flat, ys)
            cupyx.scatter_max(right, flat, xs)
            cupyx.scatter_max(bottom, flat, ys)
            return labels, [area, cx, cy, left, right, top, bottom]

        def on_host(run):
            def host(im):
                labels, rest = run(cp.asarray(im))
                return labels.get(), [a.get() for a in rest] if isinstance(rest, list) else rest

            return host

        out.append(("CuPy", "cuda:0", "numpy", "label", on_host(cupy_label)))
        out.append(("CuPy", "cuda:0", "numpy", "label+stats", on_host(cupy_stats)))
        out.append(("CuPy", "cuda:0", "cupy", "label", cupy_label))
        out.append(("CuPy", "cuda:0", "cupy", "label+stats", cupy_stats))
        for device in args.devices:
            if device.startswith("cuda:"):
                for algorithm in args.algorithms:
                    name = f"{device} {algorithm}"
                    out.append(("ccl", name, "cupy", "label", lambda d, a=algorithm: ccl.label(d, algorithm=a)))
                    out.append(
                        ("ccl", name, "cupy", "label+stats", lambda d, a=algorithm: ccl.label_with_stats(d, algorithm=a))
                    )
    except ImportError as e:
        print(f"CuPy skipped: {e}", file=sys.stderr)
    return out


def timed(run, image, arrays, args, slow=False):
    """Warm-up calls, then the host-clock ms of each timed call; CuPy inputs are copied to the GPU
    first (untimed) and the device is synchronized inside each timed call."""
    if arrays == "cupy":  # the input on the GPU first
        import cupy as cp

        image = cp.asarray(image)
        sync = cp.cuda.Device().synchronize
    else:
        sync = lambda: None  # noqa: E731
    runs, warmup = args.runs, args.warmup
    if slow:  # single-threaded CPU libraries: a few runs are enough (seconds each at 8192^2)
        runs, warmup = min(runs, 3), min(warmup, 1)
    for _ in range(warmup):
        run(image)
    sync()
    ms = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run(image)
        sync()
        ms.append((time.perf_counter() - t0) * 1e3)
    return ms


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--pages", default=None, help="folder of page images (gray <= 128 is ink)")
    ap.add_argument("--sizes", default="2048,8192")
    ap.add_argument("--density", type=int, default=50)
    ap.add_argument("--devices", default=None, help="ccl devices (default: every one but the CPU reference)")
    ap.add_argument("--algorithms", default="UF,BKE_IC", help="ccl algorithms")
    ap.add_argument("--libraries", default=None, help="only these libraries, e.g. ccl,CuPy,OpenCV (default: all)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    args.algorithms = [a for a in args.algorithms.split(",") if a]
    found = [d[0] for d in ccl.devices()]
    args.devices = args.devices.split(",") if args.devices else [d for d in found if d != "cpu"] or ["cpu"]
    os.makedirs(args.out, exist_ok=True)
    rows = []
    results = open(os.path.join(args.out, "results.csv"), "w", newline="")
    writer = csv.writer(results)  # one row per run, flushed per library: an interrupted run keeps them
    writer.writerow(["library", "device", "arrays", "input", "operation", "run", "ms"])
    libraries = peers(args)
    if args.libraries:
        wanted = set(args.libraries.split(","))
        libraries = [entry for entry in libraries if entry[0] in wanted]
    for name, image in inputs(args):
        for library, device, arrays, operation, run in libraries:
            try:
                ms = timed(run, image, arrays, args, slow=device == "1 thread")
            except Exception as e:  # one library failing keeps the others' figures
                print(f"{library} {device} {arrays} {operation} failed on {name}: {e}", file=sys.stderr)
                continue
            new = [(library, device, arrays, name, operation, k, t) for k, t in enumerate(ms)]
            rows.extend(new)
            writer.writerows(new)
            results.flush()
            print(f"{name:24s} {library:12s} {device:16s} {arrays:5s} {operation:12s} median {statistics.median(ms):9.3f} ms")
    results.close()
    keys = sorted({(r[2], r[4], r[0], r[1]) for r in rows}, key=lambda k: (k[0], k[1], k[2] != "ccl", k))
    names = list(dict.fromkeys(r[3] for r in rows))
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(f"Host clock, median of {args.runs} runs after {args.warmup} warm-up runs (single-threaded CPU libraries: 3 after 1), ms. ")
        f.write("numpy: host arrays in and out, copies included; cupy: arrays on the GPU in and out.\n\n")
        f.write("| arrays | operation | library | device | " + " | ".join(names) + " |\n")
        f.write("|---|---|---|---|" + "---:|" * len(names) + "\n")
        for key in keys:
            cells = []
            for name in names:
                ms = [r[6] for r in rows if (r[2], r[4], r[0], r[1]) == key and r[3] == name]
                cells.append(f"{statistics.median(ms):.3f}" if ms else "—")
            f.write(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | " + " | ".join(cells) + " |\n")
    print(f"wrote {args.out}/results.csv and summary.md")


if __name__ == "__main__":
    main()
