"""Region properties (issue 53): ``ccl.regionprops_table`` against scikit-image's (and cuCIM's
where installed), side by side on one machine; prints a row per input and writes JSON.

    python3 regionprops_bench.py OUT.json [--runs 10] [--page DIBCO.png]

Inputs (labels at full connectivity, an intensity image of random float32 values):
- ``page``: a real page (a DIBCO original where one is given, binarized with ccl's Nick, window
  45, k = -0.1, its ink tiled to 2048 x 2048: DIBCO 2014 H06 gives 10467 components);
- ``blobs 2D``: random blobs in 2048 x 2048 (cells of 16 pixels, 30 %, a pixel in 300 flipped:
  about 10^4 components);
- ``volume sparse`` and ``volume dense``: random blobs in 256^3 (cells of 4 voxels, 5 % and 20 %,
  a voxel in 5000 flipped: about 9000 components, and fewer, one of them spanning the volume).

Properties: the issue's list (area, bbox, centroid, perimeter, euler_number, moments_central,
moments_normalized, orientation, eccentricity, axis_major_length, axis_minor_length,
intensity_mean, intensity_min, intensity_max; volumes without the 2D-only ones). Timed: the
call from NumPy (host in, host table out) and from CuPy (labels and intensity on the GPU, table
of CuPy arrays back; the call returns when it is there), medians of ``--runs`` wall clocks after a
warm-up; scikit-image (and cuCIM) medians of 3. The tables are compared: integer columns
equal, the others within 1e-9 of each column's scale (moments: area x extent^order), as
python/tests/test_regionprops.py checks them.
"""

import argparse
import importlib.metadata
import json
import statistics
import sys
import time

import numpy as np

import ccl

PROPERTIES_2D = (
    "label", "area", "bbox", "centroid", "perimeter", "euler_number", "moments_central", "moments_normalized",
    "orientation", "eccentricity", "axis_major_length", "axis_minor_length", "intensity_mean", "intensity_min",
    "intensity_max",
)
PROPERTIES_3D = tuple(p for p in PROPERTIES_2D if p not in ("perimeter", "orientation", "eccentricity"))


def timed(call, runs):
    call()  # warm-up: kernels built, memory pooled
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3, [round(t * 1e3, 3) for t in times]


def blobs(shape, cell, density, flip, seed):
    """Random cells of ``cell`` elements a side (``density`` of them foreground), a fraction
    ``flip`` of the elements flipped (holes, and specks of one element)."""
    rng = np.random.default_rng(seed)
    cells = rng.random(tuple(-(-s // cell) for s in shape)) < density
    for axis in range(len(shape)):
        cells = cells.repeat(cell, axis=axis)
    cells = cells[tuple(slice(0, s) for s in shape)]
    return cells ^ (rng.random(shape) < flip)


def page_ink(path, side):
    import cv2

    gray = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
    ink = ccl.binarize(gray, window=45, k=-0.1)
    reps = (-(-side // ink.shape[0]), -(-side // ink.shape[1]))
    return np.ascontiguousarray(np.tile(ink, reps)[:side, :side])


def compare(got, want, ndim):
    """Whether the tables agree (see the module's notes), and the largest scaled difference."""
    if list(got) != list(want):
        return False, None
    area = np.asarray(want["area"], float)
    extent = np.max([np.asarray(want[f"bbox-{ndim + a}"]) - np.asarray(want[f"bbox-{a}"]) for a in range(ndim)], axis=0)
    worst = 0.0
    for name in want:
        w, g = np.asarray(want[name], float), np.asarray(got[name], float)
        if name.split("-")[0] in ("label", "bbox", "euler_number"):
            if not np.array_equal(w, g):
                return False, name
            continue
        if name.startswith(("axis_", "eccentricity")):
            w, g = w**2, g**2
        finite = ~np.isnan(w)
        if not np.array_equal(finite, ~np.isnan(g)):
            return False, name
        scale = np.full(w.shape, np.max(np.abs(w[finite])) if finite.any() else 1.0) + 1.0
        if name.startswith("moments_central"):
            scale = np.maximum(scale, area * np.maximum(extent, 1.0) ** sum(int(i) for i in name.split("-")[1:]))
        if name.startswith("orientation"):
            continue  # undefined where the inertia tensor is isotropic (the tests compare the others)
        if name.startswith("intensity_mean"):
            scale = scale * 1e3  # scikit-image sums float32 intensities in float32
        diff = np.abs(g - w)[finite] / scale[finite]
        worst = max(worst, float(diff.max()) if diff.size else 0.0)
    return worst <= 1e-9, worst


def measure(name, mask, runs, cupy):
    from skimage.measure import label as sk_label, regionprops_table

    ndim = mask.ndim
    labels = sk_label(mask, connectivity=ndim).astype(np.int32)
    intensity = np.random.default_rng(1).random(mask.shape, dtype=np.float32)
    properties = PROPERTIES_2D if ndim == 2 else PROPERTIES_3D
    row = {"input": name, "shape": list(mask.shape), "components": int(labels.max()), "properties": list(properties)}
    # scikit-image: the first call (its result the reference), then two more where it is quick.
    seconds = []
    for _ in range(3):
        start = time.perf_counter()
        want = regionprops_table(labels, intensity, properties=properties)
        seconds.append(time.perf_counter() - start)
        if seconds[0] > 30:
            break
    row["scikit_image_version"] = importlib.metadata.version("scikit-image")
    row["scikit_image_ms"] = statistics.median(seconds) * 1e3
    row["scikit_image_runs"] = [round(t * 1e3, 3) for t in seconds]
    host = lambda: ccl.regionprops_table(labels, intensity, properties=properties)  # noqa: E731
    row["numpy_ms"], row["numpy_runs"] = timed(host, runs)
    row["numpy_equal"], row["numpy_worst"] = compare(host(), want, ndim)
    row["scikit_image_over_numpy"] = row["scikit_image_ms"] / row["numpy_ms"]
    if cupy is not None:
        gpu_labels, gpu_intensity = cupy.asarray(labels), cupy.asarray(intensity)
        cupy.cuda.get_current_stream().synchronize()

        def on_gpu():
            table = ccl.regionprops_table(gpu_labels, gpu_intensity, properties=properties)
            cupy.cuda.get_current_stream().synchronize()
            return table

        row["cupy_ms"], row["cupy_runs"] = timed(on_gpu, runs)
        table = {k: cupy.asnumpy(v) for k, v in on_gpu().items()}
        row["cupy_equal"], row["cupy_worst"] = compare(table, want, ndim)
        row["scikit_image_over_cupy"] = row["scikit_image_ms"] / row["cupy_ms"]
        try:
            from cucim.skimage.measure import regionprops_table as cucim_table

            row["cucim_version"] = importlib.metadata.version("cucim")
            row["cucim_ms"], row["cucim_runs"] = timed(
                lambda: cucim_table(gpu_labels, gpu_intensity, properties=properties), 2
            )
        except Exception as e:  # absent, or a property it lacks
            row["cucim"] = f"not measured: {type(e).__name__}: {e}"[:200]
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--page", default=None)
    parser.add_argument("--side", type=int, default=2048)
    parser.add_argument("--volume", type=int, default=256)
    args = parser.parse_args()
    try:
        import cupy
    except ImportError:
        cupy = None
    side = args.side
    inputs = []
    if args.page:
        inputs.append(("page", page_ink(args.page, side)))
    inputs.append(("blobs 2D", blobs((side, side), 16, 0.3, 1 / 300, 0)))
    inputs.append(("volume sparse", blobs((args.volume,) * 3, 4, 0.05, 1 / 5000, 0)))
    inputs.append(("volume dense", blobs((args.volume,) * 3, 4, 0.2, 1 / 5000, 0)))
    rows = []
    for name, mask in inputs:
        row = measure(name, mask, args.runs, cupy)
        print(json.dumps(row), flush=True)
        rows.append(row)
    result = {"devices": ccl.devices()[:1], "command": " ".join(sys.argv), "rows": rows}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
