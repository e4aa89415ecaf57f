#!/usr/bin/env python3
"""The headline tables (README, docs/performance.md), from the suite's results files (see bench-suite.sh).

For every input the minimum over its runs, then the mean over the inputs of a row: real pages,
and random images at the small and big size with densities 10, 50, 90 %. Columns: BKE_IC on each
GPU device and each peer. A second table, when the end-to-end experiments ran: host image in,
consecutive labels in host memory out, BKE_IC and the fastest ccl algorithm per device, and the
peers' host-to-host times. A third, when the 3D experiments ran: Hilbert volumes and random
cubes at 6-, 18- and 26-connectivity, the fastest ccl algorithm per device and the volume peers.
Standard library only.
"""
import csv
import os
import sys
from collections import defaultdict


def load(*paths):
    rows = []
    for p in paths:
        if os.path.exists(p):
            with open(p) as f:
                rows.extend(csv.DictReader(f))
    return rows


def best(rows):
    b = {}
    for r in rows:
        k = (r["device_id"], r["algorithm"], r["image"])
        if k not in b or float(r["labeling_ms"]) < float(b[k]["labeling_ms"]):
            b[k] = r
    return list(b.values())


def end_to_end(out):
    groups = []
    for folder, label in (("end-to-end-pages", "real pages"), ):
        rows = best(load(f"{out}/{folder}/results.csv", f"{out}/{folder}/peers.csv"))
        if rows:
            groups.append((f"{label} ({len({r['image'] for r in rows})} DIBCO)", rows))
    for folder in sorted(f for f in os.listdir(out) if f.startswith("end-to-end-") and f[11:12].isdigit()):
        rows = best(load(f"{out}/{folder}/results.csv", f"{out}/{folder}/peers.csv"))
        if rows:
            groups.append((f"{rows[0]['width']}x{rows[0]['height']}, {float(rows[0]['density']):.0f} %", rows))
    groups.sort(key=lambda g: int(g[1][0]["width"]) * int(g[1][0]["height"]) if "pages" not in g[0] else 0)
    if not groups:
        return
    series = []
    seen = set()
    for _, rows in groups:
        for r in rows:
            if r["device_id"] in seen:
                continue
            seen.add(r["device_id"])
            if r["backend"] in ("cuda", "opencl"):
                series.append((f"BKE_IC `{r['device_id']}`", r["device_id"], "BKE_IC"))
                series.append((f"fastest `{r['device_id']}`", r["device_id"], None))
            elif r["backend"] not in ("cpu",):
                series.append((f"{r['algorithm']}", r["device_id"], r["algorithm"]))
    print("\nEnd to end: host image in, consecutive labels in host memory out (ms per image, host clock):\n")
    print("| input | " + " | ".join(s[0] for s in series) + " |")
    print("|---|" + "---:|" * len(series))
    for label, rows in groups:
        cells = [cell(rows, dev, algo) for _, dev, algo in series]
        print(f"| {label} | " + " | ".join(cells) + " |")


def cell(rows, dev, algo):
    """Mean ms of `algo` on `dev` over rows, or with algo None the fastest algorithm's (named)."""
    by_algo = defaultdict(list)
    for r in rows:
        if r["device_id"] == dev:
            by_algo[r["algorithm"]].append(float(r["labeling_ms"]))
    if algo is None:
        means = {a: sum(t) / len(t) for a, t in by_algo.items()}
        if not means:
            return "—"
        a = min(means, key=means.get)
        return f"{means[a]:.3f} ({a})"
    t = by_algo.get(algo, [])
    return f"{sum(t) / len(t):.3f}" if t else "—"


def volumes(out):
    """The 3D table (bench-suite.sh's volume experiments): per connectivity, the Hilbert volumes
    and the random cubes at 10, 50, 90 % (granularity 1); the fastest ccl algorithm per device
    and each peer."""
    groups = []
    for c in (6, 18, 26):
        rows = best(load(f"{out}/hilbert-c{c}/results.csv", f"{out}/hilbert-c{c}/peers.csv"))
        if rows:
            n = len({r["image"] for r in rows})
            groups.append((f"Hilbert {rows[0]['width']}^3 ({n} orders), {c}-conn.", rows))
        rows = [r for r in best(load(f"{out}/density-3d-c{c}/results.csv", f"{out}/density-3d-c{c}/peers.csv"))
                if r["granularity"] == "1"]
        for d in ("10", "50", "90"):
            sel = [r for r in rows if float(r["density"]) == float(d)]
            if sel:
                groups.append((f"{sel[0]['width']}x{sel[0]['height']}x{sel[0]['depth']}, {d} %, {c}-conn.", sel))
    if not groups:
        return
    series = []
    seen = set()
    for _, rows in groups:
        for r in rows:
            if (r["device_id"], r["algorithm"]) in seen:
                continue
            seen.add((r["device_id"], r["algorithm"]))
            if r["backend"] in ("cuda", "opencl"):
                if (r["device_id"], None) not in seen:
                    seen.add((r["device_id"], None))
                    series.append((f"fastest `{r['device_id']}`", r["device_id"], None))
            elif r["backend"] != "cpu":
                series.append((r["algorithm"], r["device_id"], r["algorithm"]))
    print("\nVolumes (ms per volume, input already on the device for ccl and CuPy):\n")
    print("| input | " + " | ".join(s[0] for s in series) + " |")
    print("|---|" + "---:|" * len(series))
    for label, rows in groups:
        print(f"| {label} | " + " | ".join(cell(rows, dev, algo) for _, dev, algo in series) + " |")


def main(out):
    groups = []  # (label, rows)
    pages = best(load(f"{out}/pages/results.csv", f"{out}/pages/peers.csv"))
    if pages:
        groups.append((f"real pages ({len({r['image'] for r in pages})} DIBCO)", pages))
    for folder in ("density", "big"):
        rows = [r for r in best(load(f"{out}/{folder}/results.csv", f"{out}/{folder}/peers.csv"))
                if r["granularity"] in ("1", "0")]
        for d in ("10", "50", "90"):
            sel = [r for r in rows if float(r["density"]) == float(d)]
            if sel:
                groups.append((f"{sel[0]['width']}x{sel[0]['height']}, {d} %", sel))
    series = []  # (column title, device_id, algorithm or None for 'best other')
    seen = set()
    for _, rows in groups:
        for r in rows:
            key = (r["device_id"], r["backend"])
            if key in seen:
                continue
            seen.add(key)
            if r["backend"] in ("cuda", "opencl") and r["algorithm"] != "reference":
                series.append((f"BKE_IC `{r['device_id']}`", r["device_id"], "BKE_IC"))
            elif r["backend"] not in ("cuda", "opencl", "cpu"):
                series.append((f"{r['algorithm']}", r["device_id"], r["algorithm"]))
    if not groups:
        end_to_end(out)
        volumes(out)
        return
    print("| input | " + " | ".join(s[0] for s in series) + " |")
    print("|---|" + "---:|" * len(series))
    for label, rows in groups:
        cells = []
        for _, dev, algo in series:
            t = [float(r["labeling_ms"]) for r in rows if r["device_id"] == dev and r["algorithm"] == algo]
            cells.append(f"{sum(t) / len(t):.3f}" if t else "—")
        print(f"| {label} | " + " | ".join(cells) + " |")
    devices = defaultdict(str)
    for _, rows in groups:
        for r in rows:
            devices[r["device_id"]] = f"{r['device']} ({r['driver']})"
    print()
    for d, desc in devices.items():
        print(f"- `{d}`: {desc}")
    print("\nms; per input the minimum over the runs, then the mean over the inputs of the row.")
    end_to_end(out)
    volumes(out)


if __name__ == "__main__":
    main(sys.argv[1])
