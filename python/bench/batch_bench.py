#!/usr/bin/env python3
"""Batches from Python against their floor and the peers (issue 51), host clock around each
call, median of RUNS runs after WARMUP, all in one run:

- NumPy batch (N, S, S) uint8, host in, host out: `ccl.label_batch`; a loop of `ccl.label`;
  `ccl.label_iter` over the images (chunks of 8);
  the floor: the batch copied to the GPU and N uint32 label arrays copied back, both through
  page-locked memory (CuPy); OpenCV's `connectedComponents` on a pool of THREADS threads.
- CuPy batch on the GPU, labels left there (the stream synchronized after each call):
  `ccl.label_batch`, a loop of `cupyx.scipy.ndimage.label`, N single-image `ccl.label` calls,
  and `ccl.label` of the batch as one tall image (its items joined: what labeling it as one grid
  costs without keeping the items apart).

    python3 python/bench/batch_bench.py OUT [--batch 64] [--size 2048] [--density 50]
        [--threads 16] [--runs 5] [--warmup 2] [--device cuda:0]

Writes OUT/batch.csv (one row per call: case, ms) and OUT/batch.md (medians). Peers that are
not installed are skipped and named.
"""

import argparse
import csv
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import ccl


def timed(runs, warmup, call, sync=lambda: None):
    for _ in range(warmup):
        call()
        sync()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--density", type=int, default=50)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--device", default=None)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    shape = (args.batch, args.size, args.size)
    batch = (np.random.default_rng(0).random(shape) < args.density / 100).view(np.uint8)
    rows, skipped = [], []

    def run(case, call, sync=lambda: None):
        for ms in timed(args.runs, args.warmup, call, sync):
            rows.append((case, ms))
        print(case, f"{statistics.median(ms for c, ms in rows if c == case):.2f} ms", flush=True)

    run("numpy: ccl.label_batch", lambda: ccl.label_batch(batch, device=args.device))
    run("numpy: loop of ccl.label", lambda: [ccl.label(image, device=args.device) for image in batch])
    run("numpy: ccl.label_iter, chunks of 8", lambda: list(ccl.label_iter(iter(batch), device=args.device)))
    try:
        import cv2

        pool = ThreadPoolExecutor(args.threads)
        run(
            f"numpy: cv2.connectedComponents, {args.threads} threads",
            lambda: list(pool.map(lambda image: cv2.connectedComponents(image, connectivity=8), batch)),
        )
    except ImportError:
        skipped.append("OpenCV")
    try:
        import cupy
        import cupyx
        from cupyx.scipy import ndimage

        sync = cupy.cuda.Stream.null.synchronize
        pinned_in = cupyx.empty_pinned(shape, np.uint8)
        pinned_in[...] = batch
        pinned_out = cupyx.empty_pinned(shape, np.uint32)
        on_gpu = cupy.empty(shape, cupy.uint8)
        labels_gpu = cupy.empty(shape, cupy.uint32)

        def floor():
            on_gpu.set(pinned_in)
            labels_gpu.get(out=pinned_out)

        run("floor: batch up + uint32 labels down, page-locked", floor, sync)
        x = cupy.asarray(batch)
        run("cupy: ccl.label_batch", lambda: ccl.label_batch(x), sync)
        tall = x.reshape(args.batch * args.size, args.size)
        run("cupy: ccl.label of the batch as one (N * H, W) image, items joined", lambda: ccl.label(tall), sync)
        run("cupy: N single-image ccl.label", lambda: [ccl.label(x[i]) for i in range(args.batch)], sync)
        structure = ndimage.generate_binary_structure(2, 2)
        run(
            "cupy: loop of cupyx.scipy.ndimage.label",
            lambda: [ndimage.label(x[i], structure=structure) for i in range(args.batch)],
            sync,
        )
    except ImportError:
        skipped.append("CuPy")
    with open(os.path.join(args.out, "batch.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["case", "ms"])
        writer.writerows(rows)
    with open(os.path.join(args.out, "batch.md"), "w") as f:
        f.write(f"Batch {shape} uint8 at {args.density} %, device {args.device or 'auto'}, median of {args.runs} runs\n\n")
        f.write("| case | median ms | per image ms |\n|---|---:|---:|\n")
        for case in dict.fromkeys(c for c, _ in rows):
            median = statistics.median(ms for c, ms in rows if c == case)
            f.write(f"| {case} | {median:.2f} | {median / args.batch:.3f} |\n")
        if skipped:
            f.write(f"\nSkipped (not installed): {', '.join(skipped)}\n")


if __name__ == "__main__":
    main()
