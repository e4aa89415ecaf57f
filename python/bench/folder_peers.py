#!/usr/bin/env python3
"""The peers of `ccl bench folder` on the same folder: a pool of THREADS threads each reading a
page with OpenCV, labeling it (`cv2.connectedComponents`, 8-connectivity, int32 labels) and
saving the labels with `np.save`; and the codecs alone (reading and saving the page widened to
uint32, no labeling). Foreground is gray > 127. Outputs are not synced (NumPy does not), as
`ccl --no-sync` writes. Wall clock of each pass, ROUNDS rounds after one untimed round.

    python3 python/bench/folder_peers.py DIR [--threads 16] [--rounds 3] [--scratch /tmp/peers-out]

Prints one line per pass and a markdown table of the medians (to compare with `ccl --no-sync
bench folder DIR`'s summary.md).
"""

import argparse
import os
import shutil
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".pgm", ".pbm", ".ppm", ".webp")


def one(mode, src, dst, name):
    page = cv2.imread(os.path.join(src, name), cv2.IMREAD_GRAYSCALE)
    if mode == "opencv":
        _, labels = cv2.connectedComponents((page > 127).view(np.uint8), connectivity=8, ltype=cv2.CV_32S)
    else:
        labels = (page > 127).astype(np.uint32)
    np.save(os.path.join(dst, os.path.splitext(name)[0] + ".npy"), labels)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scratch", default="/tmp/peers-out")
    args = parser.parse_args()
    names = sorted(n for n in os.listdir(args.folder) if n.lower().endswith(IMAGE_EXTENSIONS))
    times = {"opencv": [], "codecs": []}
    with ThreadPoolExecutor(args.threads) as pool:
        for round_ in range(args.rounds + 1):
            for mode in times:
                shutil.rmtree(args.scratch, ignore_errors=True)
                os.makedirs(args.scratch)
                start = time.perf_counter()
                list(pool.map(lambda name: one(mode, args.folder, args.scratch, name), names))
                seconds = time.perf_counter() - start
                print(f"round {round_} {mode}: {seconds:.3f} s", flush=True)
                if round_ > 0:
                    times[mode].append(seconds)
    shutil.rmtree(args.scratch, ignore_errors=True)
    print(f"\n{len(names)} images of {args.folder}, {args.threads} threads, median of {args.rounds} rounds\n")
    print("| peer | median s | images/s |\n|---|---:|---:|")
    for mode, label in (("opencv", "OpenCV read + connectedComponents + np.save"), ("codecs", "OpenCV read + np.save")):
        median = statistics.median(times[mode])
        print(f"| {label} | {median:.3f} | {len(names) / median:.1f} |")


if __name__ == "__main__":
    main()
