"""Issue 13's NumPy target, measured in one session: ccl.label on NumPy arrays (host clock, the
labels written into a reused page-locked array from ccl.host_array) against the Rust end-to-end
path on the same machine (`ccl bench end-to-end`: host image in, consecutive labels in a reused
page-locked array out, host clock), same device, algorithm, size and density.

    python3 python/bench/numpy_vs_rust.py OUT --ccl target/release/ccl [--device cuda:0]
        [--algorithm BKE_IC] [--sizes 2048,8192] [--density 50] [--runs 30] [--warmup 5]

Writes OUT/results.csv (one row per timed call: path, size, ms), OUT/rust-SIZE/ (the Rust
benchmark's own files) and OUT/summary.md (minimum and median per path and size, and the NumPy
path's minimum over the Rust path's).
"""

import argparse
import csv
import os
import statistics
import subprocess

import numpy as np

import ccl
from bench import timed  # python/bench/bench.py: warm-up calls, then host-clock ms per call


def rust_times(args, side):
    """The Rust end-to-end benchmark's host-clock times, ms, one per timed run."""
    folder = os.path.join(args.out, f"rust-{side}")
    command = [args.ccl, "bench", "end-to-end", "--size", f"{side}x{side}", "--density", str(args.density)]
    command += ["--images", "1", "--devices", args.device, "--algos", args.algorithm]
    command += ["--runs", str(args.runs), "--warmup", str(args.warmup), "--out", folder]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(folder, "results.csv"), newline="") as f:
        return [float(r["labeling_ms"]) for r in csv.DictReader(f)]


def numpy_times(args, side):
    """ccl.label's host-clock times, ms, on a NumPy bool image of the same density."""
    image = np.random.default_rng(side).random((side, side)) < args.density / 100
    out = ccl.host_array(image.shape, np.uint32, device=args.device)
    label = lambda im: ccl.label(im, algorithm=args.algorithm, device=args.device, output=out)  # noqa: E731
    return timed(label, image, "numpy", args)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--ccl", required=True, help="the ccl binary")
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--algorithm", default="BKE_IC")
    ap.add_argument("--sizes", default="2048,8192")
    ap.add_argument("--density", type=int, default=50)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows, lines = [], []
    lines.append(f"ccl.label (NumPy, output reused) against `ccl bench end-to-end`, {args.device}, {args.algorithm}, ")
    lines.append(f"{args.density} % density, {args.runs} timed runs after {args.warmup} warm-up ones, host clock, ms.\n")
    lines.append("| size | Rust min | Rust median | NumPy min | NumPy median | NumPy min / Rust min |")
    lines.append("|---|---:|---:|---:|---:|---:|")
    for side in [int(s) for s in args.sizes.split(",")]:
        rust, numpy = rust_times(args, side), numpy_times(args, side)
        rows += [("rust", side, ms) for ms in rust] + [("numpy", side, ms) for ms in numpy]
        ratio = min(numpy) / min(rust)
        lines.append(
            f"| {side}x{side} | {min(rust):.3f} | {statistics.median(rust):.3f} | {min(numpy):.3f} | "
            f"{statistics.median(numpy):.3f} | {ratio:.2f} |"
        )
    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["path", "size", "ms"])
        writer.writerows(rows)
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
