"""The table of scripts/bench-ab.sh: per device, algorithm, size and density, the labeling time
before and after (per image the minimum of its runs, then the mean over the images, in ms) of
each round, and after / before.

    python3 scripts/ab_table.py OUT
"""
import csv
import glob
import os
import re
import sys
from collections import defaultdict


def times(path):
    """{(device, algorithm, size, density): mean over images of the minimum over runs}."""
    per_image = defaultdict(list)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["device_id"], row["algorithm"], f'{row["width"]}x{row["height"]}', float(row["density"]))
            per_image[key + (row["image"],)].append(float(row["labeling_ms"]))
    point = defaultdict(list)
    for key, runs in per_image.items():
        point[key[:4]].append(min(runs))
    return {key: sum(v) / len(v) for key, v in point.items()}


def main(out):
    # rounds[round][side] = times
    rounds = defaultdict(dict)
    for path in glob.glob(os.path.join(out, "*-round*", "results.csv")):
        m = re.match(r"(before|after)-.*-round(\d+)$", os.path.basename(os.path.dirname(path)))
        if m:
            side, r = m.group(1), int(m.group(2))
            rounds[r].setdefault(side, {}).update(times(path))
    keys = sorted({k for r in rounds.values() for side in r.values() for k in side})
    order = sorted(rounds)
    head = ["device", "algorithm", "size", "density"]
    for r in order:
        head += [f"before r{r} (ms)", f"after r{r} (ms)", f"after/before r{r}"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key in keys:
        cells = [key[0], key[1], key[2], f"{key[3]:.0f} %"]
        for r in order:
            b, a = rounds[r].get("before", {}).get(key), rounds[r].get("after", {}).get(key)
            cells += [f"{b:.4f}" if b else "-", f"{a:.4f}" if a else "-", f"{a / b:.3f}" if a and b else "-"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
