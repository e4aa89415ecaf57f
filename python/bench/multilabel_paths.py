"""Where multi-label labeling's time goes through CuPy (issue 53): the same 2048^2 inputs as
``multilabel_bench.py`` (a page's 8 gray bands, random classes in 4 x 4 cells) labeled
multi-label (TUF, the default, and KE_IC) and their binary foreground with each algorithm, through
``ccl.label`` and through the native call alone; then 256^3 volumes (random classes in 4^3
cells, a smooth field in 8 bands) at 6-connectivity by algorithm, and host to host: the bus's
floor under a NumPy call (its copies alone), the NumPy calls and cc3d; medians of 30 wall
clocks (cc3d: of 5), the stream synchronized, ms. Prints a row per input.

    python3 multilabel_paths.py PAGE.png
"""

import statistics
import sys
import time

import cupy
import numpy as np

import ccl
from multilabel_bench import page_classes, random_classes


def median_ms(call, runs=30):
    call()
    stream, times = cupy.cuda.get_current_stream(), []
    for _ in range(runs):
        stream.synchronize()
        start = time.perf_counter()
        call()
        stream.synchronize()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1e3, 4)


def main():
    page = sys.argv[1] if len(sys.argv) > 1 else None
    for name, classes in [("page", page_classes(2048, page)), ("random g4", random_classes(2048))]:
        values, fg = cupy.asarray(classes), cupy.asarray((classes != 0).astype(np.uint8))
        out, stream = cupy.empty(classes.shape, cupy.uint32), cupy.cuda.get_current_stream()
        row = {"input": name, "multi default": median_ms(lambda: ccl.label(values, multilabel=True))}
        row["multi KE_IC"] = median_ms(lambda: ccl.label(values, multilabel=True, algorithm="KE_IC"))
        row["binary default"] = median_ms(lambda: ccl.label(fg))
        for algorithm in ("KE_IC", "KE", "BKE_IC", "TUF"):
            row[f"binary {algorithm}"] = median_ms(lambda: ccl.label(fg, algorithm=algorithm))
        shape, at = [2048, 2048], stream.ptr or 1
        native = ccl._ccl._label_cuda
        for algorithm in ("TUF", "KE_IC"):
            row[f"native multi {algorithm}"] = median_ms(
                lambda: native(values.data.ptr, out.data.ptr, shape, at, 8, algorithm, "cuda:0", *[None] * 4, (1, 0))
            )
        for algorithm in ("TUF", "KE_IC"):
            row[f"native binary {algorithm}"] = median_ms(
                lambda: native(fg.data.ptr, out.data.ptr, shape, at, 8, algorithm, "cuda:0")
            )
        print(row, flush=True)
    # Host to host: the bus's floor under a NumPy call (the 4 MB input up from pageable memory,
    # the 16 MB of labels down into page-locked memory), the NumPy calls, and cc3d.
    import cupyx

    for name, classes in [("page", page_classes(2048, page)), ("random g4", random_classes(2048))]:
        up, down = cupy.empty(classes.shape, cupy.uint8), cupy.zeros(classes.shape, cupy.uint32)
        pinned, host_out = cupyx.empty_pinned(classes.shape, np.uint32), ccl.host_array(classes.shape, np.uint32)
        row = {"input": name, "up 4 MB pageable": median_ms(lambda: up.set(classes))}
        row["down 16 MB page-locked"] = median_ms(lambda: down.get(out=pinned))
        row["numpy multi"] = median_ms(lambda: ccl.label(classes, multilabel=True))
        row["numpy multi, output="] = median_ms(lambda: ccl.label(classes, multilabel=True, output=host_out))
        try:
            import cc3d

            row["cc3d"] = median_ms(lambda: cc3d.connected_components(classes, connectivity=8), runs=5)
        except ImportError:
            pass
        print(row, flush=True)
    # 6-connected volumes: 256^3, 8 random classes in 4^3 cells, and a smooth field in 8 bands.
    rng = np.random.default_rng(0)
    cells = rng.integers(0, 8, (64, 64, 64), dtype=np.uint8)
    z, y, x = np.mgrid[0:256, 0:256, 0:256].astype(np.float32) / 20
    bands = ((np.sin(x) * np.cos(y / 1.3) + np.sin(z / 1.7 + x / 2.3) + 2) * 2).astype(np.uint8)
    for name, classes in [("volume g4", cells.repeat(4, 0).repeat(4, 1).repeat(4, 2)), ("volume bands", bands)]:
        values, fg = cupy.asarray(classes), cupy.asarray((classes != 0).astype(np.uint8))
        row = {"input": name}
        for algorithm in ("TUF", "KE_IC", "KE", "UF"):
            row[f"multi {algorithm}"] = median_ms(lambda: ccl.label(values, 6, multilabel=True, algorithm=algorithm))
        for algorithm in ("TUF", "KE_IC"):
            row[f"binary {algorithm}"] = median_ms(lambda: ccl.label(fg, 6, algorithm=algorithm))
        print(row, flush=True)


if __name__ == "__main__":
    main()
