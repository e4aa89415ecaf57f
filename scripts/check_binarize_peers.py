#!/usr/bin/env python3
"""Checks `ccl binarize` against the libraries users compare it with, pixel for pixel:

- `--formula opencv` against OpenCV ximgproc `niBlackThreshold(..., BINARIZATION_NICK)`
  (opencv-contrib-python-headless), odd windows;
- `--formula doxa` against doxapy's NICK (the Doxa library), any window;

on real pages (DIBCO crops from ../shared/data, or a synthetic page without them), on the CPU
reference and, where one is present, the first OpenCL device: with --full three pages, windows
3 to 101 and k = -0.1 and -0.2; without, the first page, windows 3 and 45 and k = -0.2.
Exits 1 on any difference, 2 when a library is missing (unless not required: without
CCL_REQUIRE_PEERS=1 a missing library is a note and the exit status 0).

Usage: python3 scripts/check_binarize_peers.py [CCL_BINARY] [--full]
"""
import os
import subprocess
import sys
import tempfile

import numpy as np


def pages(root):
    data = os.environ.get("CCL_DATA_DIR", os.path.join(root, "..", "shared", "data"))
    found = []
    for name in ("dibco/2009/Originals/2009-H01.png", "dibco/2009/Originals/2009-P01.png", "dibco/2016/Originals/2016-1.png"):
        path = os.path.join(data, name)
        if os.path.isfile(path):
            found.append(path)
    return found


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args = [a for a in sys.argv[1:] if a != "--full"]
    full = "--full" in sys.argv[1:]
    ccl = args[0] if args else os.path.join(root, "target", "release", "ccl")
    windows, ks = ((3, 15, 45, 101), (-0.1, -0.2)) if full else ((3, 45), (-0.2,))
    required = os.environ.get("CCL_REQUIRE_PEERS") == "1"
    try:
        import cv2
        import doxapy
        cv2.ximgproc.niBlackThreshold
    except (ImportError, AttributeError) as e:
        print(f"{'error' if required else 'note'}: binarization peers not checked ({e})", file=sys.stderr)
        return 2 if required else 0
    devices = ["cpu"]
    listing = subprocess.run([ccl, "devices"], capture_output=True, text=True).stdout
    devices += [line.split()[0] for line in listing.splitlines() if line.startswith("opencl:")][:1]
    failures, checks = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        inputs = []
        for i, path in enumerate(pages(root)[: None if full else 1]):
            gray = cv2.cvtColor(cv2.imread(path), cv2.COLOR_BGR2GRAY)[:400, :600].copy()
            inputs.append((os.path.basename(path), gray))
        if not inputs:
            y, x = np.mgrid[0:300, 0:400]
            synthetic = np.where((x // 3 + y // 5) % 7 == 0, 60, 170 + x * 40 // 400 + y * 30 // 300)
            inputs.append(("synthetic", synthetic.astype(np.uint8)))
        for name, gray in inputs:
            page = os.path.join(tmp, "page.png")
            cv2.imwrite(page, gray)
            for window in windows:
                for k in ks:
                    cv_ink = cv2.ximgproc.niBlackThreshold(gray, 255, cv2.THRESH_BINARY, window, k,
                                                           binarizationMethod=cv2.ximgproc.BINARIZATION_NICK) == 0
                    out = np.empty(gray.shape, np.uint8)
                    nick = doxapy.Binarization(doxapy.Binarization.Algorithms.NICK)
                    nick.initialize(gray)
                    nick.to_binary(out, {"window": window, "k": k})
                    doxa_ink = out == 0
                    for device in devices:
                        for formula, expected in (("opencv", cv_ink), ("doxa", doxa_ink)):
                            target = os.path.join(tmp, "ink.npy")
                            run = subprocess.run([ccl, "binarize", page, "-o", target, "--method", "nick",
                                                  "--formula", formula, "--window", str(window), "--k", str(k),
                                                  "--device", device], capture_output=True, text=True)
                            if run.returncode != 0:
                                failures.append(f"{name} {formula} W={window} k={k} {device}: {run.stderr.strip()}")
                                continue
                            ours = np.load(target) == 0
                            differ = int((ours != expected).sum())
                            checks += 1
                            if differ:
                                failures.append(f"{name} {formula} W={window} k={k} {device}: {differ} pixels differ")
    for f in failures:
        print(f"FAILED {f}", file=sys.stderr)
    print(f"binarization peers: {checks} comparisons with OpenCV ximgproc and doxapy, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
