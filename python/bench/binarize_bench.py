#!/usr/bin/env python3
"""Times binarization and binarize + label from Python, as a user calls them: the host clock
around each call (the GPU synchronized in it), median of RUNS runs after 3, on one gray page.

- NumPy page: `ccl.binarize`, `ccl.label(ccl.binarize(page))` (two round trips) and
  `ccl.label(page, binarize=...)` (one upload, labels back);
- CuPy page (CUDA): the same calls on the GPU array, and CuPy's own Nick (uniform_filter of p
  and p^2, as ../shared/GPU.md shows) with `cupyx.scipy.ndimage.label` of its ink.

Usage: python3 python/bench/binarize_bench.py OUT [--page PAGE.npy|png] [--windows 45,101]
[--rounds 2] [--runs 20] (a synthetic 2500x4000 page without --page): every window in turn, the
whole set `--rounds` times. Writes OUT/binarize-python.csv (a row per round, window and call).
"""
import argparse
import csv
import os
import statistics
import time

import numpy as np

import ccl


def synthetic_page(height=4000, width=2500):
    rng = np.random.default_rng(1)
    y, x = np.mgrid[0:height, 0:width]
    strokes = ((x // 3 + y // 5) % 9 == 0) | ((x - 2 * y) % 23 < 2)
    gray = np.where(strokes, 60, 150 + 60 * x / width + 30 * y / height) + rng.normal(0, 12, (height, width))
    return np.clip(gray, 0, 255).astype(np.uint8)


def load_page(path):
    if path is None:
        return synthetic_page()
    if path.endswith(".npy"):
        return np.load(path)
    import cv2

    return cv2.imread(path, cv2.IMREAD_GRAYSCALE)


def median_ms(call, runs, sync=lambda: None):
    for _ in range(3):
        call()
        sync()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--page")
    parser.add_argument("--windows", default="45,101")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    page = load_page(args.page)
    rows = []
    for round_ in range(1, args.rounds + 1):
        for w in (int(v) for v in args.windows.split(",")):
            time_window(page, w, args.runs, round_, rows)
    with open(os.path.join(args.out, "binarize-python.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def time_window(page, w, runs, round_, rows):
    """Appends the rows of window `w` (Nick, paper formula, k = -0.1) to `rows`."""
    k = -0.1
    spec = {"method": "nick", "window": w, "k": k}

    def add(arrays, what, ms):
        rows.append({"round": round_, "arrays": arrays, "what": what, "shape": f"{page.shape[1]}x{page.shape[0]}",
                     "window": w, "ms": f"{ms:.3f}"})
        print(f"round {round_} W={w:<4} {arrays:6} {what:52} {ms:8.3f} ms", flush=True)

    add("NumPy", "ccl.binarize", median_ms(lambda: ccl.binarize(page, window=w, k=k), runs))
    add("NumPy", "ccl.label(ccl.binarize(page))",
        median_ms(lambda: ccl.label(ccl.binarize(page, window=w, k=k)), runs))
    add("NumPy", "ccl.label(page, binarize=...)", median_ms(lambda: ccl.label(page, binarize=spec), runs))
    try:
        import cupy as cp
        import cupyx.scipy.ndimage as cnd
    except Exception as e:  # no CuPy or no CUDA: the NumPy rows only
        print(f"CuPy rows skipped: {e}")
        return
    sync = cp.cuda.Device().synchronize
    gpu_page = cp.asarray(page)
    add("CuPy", "ccl.binarize", median_ms(lambda: ccl.binarize(gpu_page, window=w, k=k), runs, sync))
    add("CuPy", "ccl.label(page, binarize=...)",
        median_ms(lambda: ccl.label(gpu_page, binarize=spec), runs, sync))

    def cupy_nick():
        p = gpu_page.astype(cp.float32)
        m = cnd.uniform_filter(p, w, mode="reflect")
        s2 = cnd.uniform_filter(p * p, w, mode="reflect")
        return p <= m + k * cp.sqrt(s2)

    add("CuPy", "CuPy Nick (uniform_filter, doxa formula, float32)", median_ms(cupy_nick, runs, sync))
    add("CuPy", "CuPy Nick + cupyx.scipy.ndimage.label",
        median_ms(lambda: cnd.label(cupy_nick(), structure=cp.ones((3, 3))), runs, sync))


if __name__ == "__main__":
    main()
