"""One NumPy image from Python, as users call it (a fresh result each call): ccl.label on bool and
uint8 images, and into a reused page-locked output; host clock, 30 runs after 5, p10/median/p90."""
import statistics
import sys
import time

import numpy as np

import ccl


def timed(call, runs=30, warmup=5):
    for _ in range(warmup):
        call()
    xs = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        xs.append((time.perf_counter() - start) * 1e3)
    xs.sort()
    return f"p10 {xs[len(xs) // 10]:.2f} median {statistics.median(xs):.2f} p90 {xs[9 * len(xs) // 10]:.2f} ms"


device = sys.argv[1] if len(sys.argv) > 1 else None
for side in (2048, 8192):
    image = np.random.default_rng(side).random((side, side)) < 0.5
    pinned = ccl.host_array(image.shape, np.uint32, device=device)
    print(f"{device} {side}^2 ccl.label(bool)          ", timed(lambda: ccl.label(image, device=device)))
    print(f"{device} {side}^2 ccl.label(uint8)         ", timed(lambda: ccl.label(image.view(np.uint8), device=device)))
    print(f"{device} {side}^2 ccl.label(output=pinned) ", timed(lambda: ccl.label(image, device=device, output=pinned)))
