#!/usr/bin/env python3
"""Wall time of the `ccl` command line as a user runs it: `ccl devices` and `ccl label PAGE` on
each device, with an empty kernel cache (cold: the first call compiles) and a warm one (later
calls load the compiled kernels), median of several calls.

    python3 scripts/cli_timing.py OUT PAGE [--devices cuda:0,opencl:1] [--runs 5] [--bin PATH]...

Writes OUT/cli-timing.csv (one row per call) and OUT/cli-timing.md (the medians). Every `--bin`
is timed the same way (e.g. an older build beside the current one); the cache folder is a fresh
temporary one per binary and device, given with CCL_CACHE_DIR.
"""
import argparse
import csv
import os
import statistics
import subprocess
import tempfile
import time


def timed(cmd, env):
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ms = (time.perf_counter() - start) * 1e3
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr.decode(errors='replace')}")
    return ms


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("page", help="an image to label (e.g. a DIBCO page)")
    ap.add_argument("--devices", default="cuda:0,opencl:1")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--bin", action="append", help="ccl binaries to time (default: target/release/ccl)")
    args = ap.parse_args()
    bins = args.bin or [os.environ.get("CCL_BIN", "target/release/ccl")]
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for binary in bins:
        for device in args.devices.split(","):
            with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as work:
                env = dict(os.environ, CCL_CACHE_DIR=cache)
                label = [binary, "label", args.page, "--device", device, "--threshold", "128", "--invert",
                         "-o", os.path.join(work, "labels.npy")]
                rows.append((binary, device, "label", "cold", timed(label, env)))
                for _ in range(args.runs):
                    rows.append((binary, device, "label", "warm", timed(label, env)))
        env = dict(os.environ)
        for _ in range(args.runs):
            rows.append((binary, "all", "devices", "-", timed([binary, "devices"], env)))
    with open(os.path.join(args.out, "cli-timing.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["binary", "device", "command", "cache", "wall_ms"])
        w.writerows(rows)
    lines = ["| binary | command | device | cache | wall time ms (median) | calls |", "|---|---|---|---|---:|---:|"]
    keys = []
    for r in rows:
        if r[:4] not in keys:
            keys.append(r[:4])
    for key in keys:
        values = [r[4] for r in rows if r[:4] == key]
        lines.append(f"| `{key[0]}` | {key[2]} | {key[1]} | {key[3]} | {statistics.median(values):.0f} | {len(values)} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "cli-timing.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
