"""Large arrays (issue 52), on one machine, side by side; prints a table and writes JSON.

    python3 large_bench.py wide OUT.json [--device cuda:0]     # 65537 x 65536, 64-bit labels,
                                                               # checked against the CPU in slabs
    python3 large_bench.py wide-gpu OUT.json                  # the same image in CuPy: labeled in
                                                               # slabs on its GPU, uint64 there,
                                                               # checked against the host path
    python3 large_bench.py download OUT.json                  # ccl.label of 50000^2 into a new
                                                               # array, an existing one and a
                                                               # page-locked one; the bus and the
                                                               # host's page faults measured alone
    python3 large_bench.py volume OUT.json [--side 1700] [--cap-gib 16]
                                                               # a volume past 2^32 voxels, capped
                                                               # device memory against uncapped
    python3 large_bench.py dask OUT.json [--side 1024] [--chunk 256] [--workers 16] [--variants gpu:16,host:16]
                                                               # ccl.dask (one GPU worker) against
                                                               # dask_image.ndmeasure.label (CPU
                                                               # workers) and scipy

Inputs are MT-free random bits (NumPy's PCG64, seed 0) at 50 %. Times are wall clocks of the
whole call (host in, host out), the median of ``--runs``.
"""

import argparse
import importlib.metadata
import json
import statistics
import sys
import time

import numpy as np

import ccl


def random_bits(shape, seed=0):
    """Random 0/1 bytes of ``shape`` at 50 %."""
    n = int(np.prod(shape))
    bits = np.frombuffer(np.random.default_rng(seed).bytes(n), np.uint8) & 1
    return bits.reshape(shape)


def timed(call, runs):
    times, result = [], None
    for _ in range(runs):
        result = None
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, result


def wide(args):
    shape = (65536, 65537)  # (H, W): 4,295,032,832 pixels, past 2^32 - 1
    image = random_bits(shape)
    print(f"image {shape[1]}x{shape[0]} = {image.size} px, 50 %", flush=True)
    gpu_s, gpu_all, (labels, n) = timed(
        lambda: ccl.label(image, 8, device=args.device, return_num=True, dtype=np.uint64), args.runs
    )
    print(f"{args.device}: {gpu_s:.2f} s ({', '.join(f'{t:.2f}' for t in gpu_all)}), {n} components", flush=True)
    start = time.perf_counter()
    cpu, m = ccl.label(image, 8, device="cpu", return_num=True, dtype=np.uint64, max_device_bytes=2**34)
    cpu_s = time.perf_counter() - start
    equal = bool(m == n and np.array_equal(cpu, labels))
    print(f"cpu reference in slabs: {cpu_s:.1f} s, {m} components; equal bit for bit: {equal}", flush=True)
    return {"shape": shape, "components": int(n), "gpu_s": gpu_s, "gpu_runs": gpu_all, "cpu_s": cpu_s,
            "max_label": int(labels.max()), "dtype": str(labels.dtype), "equal_to_cpu": equal}


def wide_gpu(args):
    import cupy

    shape = (65536, 65537)
    image = random_bits(shape)
    x = cupy.asarray(image)
    print(f"CuPy image {shape[1]}x{shape[0]} = {image.size} px, 50 %, on {args.device}", flush=True)

    def call():
        labels, n = ccl.label(x, 8, return_num=True)
        return labels, n

    gpu_s, gpu_all, (labels, n) = timed(call, args.runs)
    pool = cupy.get_default_memory_pool()
    print(f"on the GPU in slabs: {gpu_s:.2f} s ({', '.join(f'{t:.2f}' for t in gpu_all)}), {n} components, "
          f"{labels.dtype}, CuPy pool {pool.total_bytes() / 2**30:.1f} GiB", flush=True)
    got = labels.get()
    labels = None
    start = time.perf_counter()
    host, m = ccl.label(image, 8, device=args.device, return_num=True, dtype=np.uint64)
    host_s = time.perf_counter() - start
    equal = bool(m == n and np.array_equal(got, host))
    print(f"host array in slabs on {args.device}: {host_s:.2f} s, {m} components; equal bit for bit: {equal}",
          flush=True)
    return {"shape": shape, "components": int(n), "gpu_s": gpu_s, "gpu_runs": gpu_all, "host_s": host_s,
            "max_label": int(got.max()), "dtype": str(got.dtype), "equal_to_host_path": equal,
            "pool_gib": pool.total_bytes() / 2**30}


def download(args):
    """Where the labels' download of ``ccl.label(image)`` (50000^2, 10 GB of labels) spends its
    time: the call into a new array, into an existing (touched) one and into a page-locked one
    (``ccl.host_array``, which the device writes by DMA), side by side; the bus alone (CuPy's
    copy of the same labels into page-locked memory); and the host alone (faulting in 10 GB of
    new pages, and copying 10 GB between touched arrays, on every core)."""
    from concurrent.futures import ThreadPoolExecutor

    import cupy

    shape = (50000, 50000)
    image = random_bits(shape)
    nbytes = image.size * 4
    threads = ThreadPoolExecutor(16)

    def on_cores(work, *arrays):
        pieces = [np.array_split(a.reshape(-1), 64) for a in arrays]
        list(threads.map(lambda k: work(*(p[k] for p in pieces)), range(64)))

    ccl.label(image[:1024])  # the device opened and kernels built before the clocks
    row = {"shape": shape, "label_bytes": nbytes}
    row["new_s"], row["new_runs"], _ = timed(lambda: ccl.label(image) is None, args.runs)
    touched = np.ones(shape, np.uint32)
    row["existing_s"], row["existing_runs"], _ = timed(lambda: ccl.label(image, output=touched) is None, args.runs)
    pinned = ccl.host_array(shape, np.uint32)
    row["pinned_s"], row["pinned_runs"], _ = timed(lambda: ccl.label(image, output=pinned) is None, args.runs)
    equal = bool(np.array_equal(touched, pinned))
    labels = cupy.asarray(pinned)
    row["bus_s"], _, _ = timed(lambda: (labels.get(out=pinned), cupy.cuda.Device().synchronize()), args.runs)
    labels = None

    def fault():
        fresh = np.empty(shape, np.uint32)
        on_cores(lambda p: p.fill(0), fresh)

    row["fault_s"], row["fault_runs"], _ = timed(fault, args.runs)
    row["copy_s"], _, _ = timed(lambda: on_cores(np.copyto, pinned, touched), args.runs)
    bus = row["bus_s"]
    for name in ("new", "existing"):  # the call's extra time over DMA, plus the bus's own
        row[f"{name}_download_gb_s"] = nbytes / (bus + row[f"{name}_s"] - row["pinned_s"]) / 1e9
    print(f"ccl.label 50000^2 (10 GB of labels), median of {args.runs}: into a new array {row['new_s']:.3f} s, "
          f"an existing one {row['existing_s']:.3f} s, a page-locked one {row['pinned_s']:.3f} s (equal: {equal})",
          flush=True)
    print(f"bus alone {nbytes / bus / 1e9:.1f} GB/s; the host alone on 16 threads: new pages "
          f"{nbytes / row['fault_s'] / 1e9:.1f} GB/s, copies {nbytes / row['copy_s'] / 1e9:.1f} GB/s", flush=True)
    print(f"download: into a new array {row['new_download_gb_s']:.1f} GB/s, an existing one "
          f"{row['existing_download_gb_s']:.1f} GB/s", flush=True)
    row["equal"] = equal
    return row


def volume(args):
    shape = (args.side,) * 3
    image = random_bits(shape)
    print(f"volume {args.side}^3 = {image.size} voxels, 50 %, 26-connectivity", flush=True)
    cap = int(args.cap_gib * 2**30)
    free_s, free_all, (free, n) = timed(
        lambda: ccl.label(image, 26, device=args.device, return_num=True, dtype=np.uint64), args.runs
    )
    print(f"uncapped (slabs of 32-bit labels only): {free_s:.2f} s {free_all}, {n} components", flush=True)
    capped_s, capped_all, (capped, m) = timed(
        lambda: ccl.label(image, 26, device=args.device, return_num=True, dtype=np.uint64, max_device_bytes=cap),
        args.runs,
    )
    equal = bool(m == n and np.array_equal(capped, free))
    print(f"capped at {args.cap_gib} GiB: {capped_s:.2f} s {capped_all}; equal: {equal}; "
          f"{capped_s / free_s:.2f}x uncapped", flush=True)
    return {"shape": shape, "components": int(n), "uncapped_s": free_s, "capped_s": capped_s,
            "cap_bytes": cap, "equal": equal}


def same_partition(want, k, got, n):
    """Whether labels ``got`` (1..n) split the foreground as ``want`` (1..k) does, in linear time:
    the same foreground, and a one-to-one map from each label of ``got`` to one of ``want``."""
    fg = want > 0
    if k != n or not np.array_equal(fg, got > 0):
        return False
    a, b = got[fg], want[fg]
    image = np.zeros(n + 1, np.int64)
    image[a] = b
    return bool(np.array_equal(image[a], b) and np.unique(image[1:]).size == n)


_STEPS = ("_upload", "_label_array", "_planes", "_download", "_pairs", "_merge", "_device_room")


def instrument():
    """On a worker: wraps the steps of ccl.dask's tasks (``_STEPS``) to sum their seconds."""
    import threading

    module = importlib.import_module("ccl.dask")
    totals, lock = {}, threading.Lock()
    module._bench_totals = totals
    for name in _STEPS:
        step = getattr(module, name)

        def timed_step(*args, _step=step, _name=name, **kwargs):
            start = time.perf_counter()
            try:
                return _step(*args, **kwargs)
            finally:
                with lock:
                    totals[_name] = totals.get(_name, 0.0) + time.perf_counter() - start

        setattr(module, name, timed_step)


def collect():
    """On a worker: the seconds :func:`instrument` summed, and the steps unwrapped."""
    module = importlib.import_module("ccl.dask")
    for name in _STEPS:
        setattr(module, name, getattr(module, name).__kwdefaults__["_step"])
    return dict(module._bench_totals)


def computed(stream):
    """(kind of task, start, stop) of each compute in a ``get_task_stream`` record; the kind is
    the key's name up to its first "-" (its step for ccl.dask's keys, "ccl-dask-STEP-token")."""
    for task in stream.data:
        parts = str(task["key"]).strip("('").split("-")
        prefix = parts[2] if parts[:2] == ["ccl", "dask"] else parts[0]
        for part in task["startstops"]:
            if part["action"] == "compute":
                yield prefix, part["start"], part["stop"]


def run_dask(args):
    import dask
    import dask.array as da
    import dask_image.ndmeasure
    import scipy.ndimage as ndi
    from distributed import Client, LocalCluster, get_task_stream, wait

    shape, chunks = (args.side,) * 3, (args.chunk,) * 3
    structure = ndi.generate_binary_structure(3, 3)
    make = lambda: da.random.RandomState(0).random_sample(shape, chunks=chunks) < 0.5  # noqa: E731
    row = {"shape": shape, "chunks": chunks, "dask": dask.__version__, "dask_image": importlib.metadata.version("dask-image")}

    def persisted(label, image):
        def call():
            labels, num = label(image)
            labels, num = dask.persist(labels, num)
            wait([labels, num])
            return labels, int(num.compute())
        return call

    # The input is made and held on the cluster's workers first: only the labeling is timed.
    # One worker process holds the GPU; its threads share it. Variants: "gpu" (ccl.dask as it
    # is: NumPy chunks keep their labels on the GPU until renumbered), "host" (every chunk's
    # labels back in host memory at once, as where the GPU has no room) and any other NAME
    # where the worker can import a ccl.dask_NAME module (an earlier ccl.dask, for an A/B).
    ccl_rows, checks = {}, []
    for spec in args.variants:
        variant, threads, *interval = spec.split(":")
        threads = int(threads)
        with LocalCluster(n_workers=1, threads_per_worker=threads, dashboard_address=None) as cluster, Client(
            cluster
        ) as client:
            module = importlib.import_module("ccl.dask" if variant in ("gpu", "host") else f"ccl.dask_{variant}")
            if variant == "host":
                client.run(lambda: setattr(importlib.import_module("ccl.dask"), "_DEVICE_RESERVE", 1 << 62))
            if interval:  # the worker's GIL switch interval (Python's default: 5 ms)
                client.run(sys.setswitchinterval, float(interval[0]))
            image = make().persist()
            wait(image)
            ours = persisted(lambda image: module.label(image, connectivity=26, device=args.device), image)
            with get_task_stream() as stream:
                ccl_s, ccl_all, (labels, n) = timed(ours, args.runs)
            busy = {}
            for prefix, start, stop in computed(stream):
                busy[prefix] = busy.get(prefix, 0.0) + stop - start
            checks.append((spec, labels.compute(), n))
            del labels  # else the next run finds its chunks' labels already there
            if variant in ("gpu", "host"):
                client.run(instrument)
            with get_task_stream() as stream:  # one more run: when each kind of task ran
                ours()
            steps = next(iter(client.run(collect).values())) if variant in ("gpu", "host") else {}
            spans = {}
            for prefix, start, stop in computed(stream):
                first, last = spans.get(prefix, (start, stop))
                spans[prefix] = (min(first, start), max(last, stop))
            origin = min(first for first, _ in spans.values())
            spans = {k: (round(a - origin, 3), round(b - origin, 3)) for k, (a, b) in spans.items()}
            image = image.compute()
        key = f"{variant}, {threads} threads" + (f", switch interval {interval[0]} s" if interval else "")
        ccl_rows[key] = {"s": ccl_s, "runs": ccl_all, "task_seconds": busy, "task_spans": spans, "step_seconds": steps}
        print(f"ccl.dask ({key}), one worker on {args.device}: {ccl_s:.2f} s {ccl_all}, "
              f"{n} components; task seconds over the runs: "
              + ", ".join(f"{k} {v:.2f}" for k, v in sorted(busy.items(), key=lambda kv: -kv[1]))
              + "; one more run, each kind of task from its first start to its last stop (s): "
              + ", ".join(f"{k} {a}-{b}" for k, (a, b) in sorted(spans.items(), key=lambda kv: kv[1]))
              + "; its steps' seconds summed over the threads: "
              + ", ".join(f"{k} {v:.3f}" for k, v in sorted(steps.items(), key=lambda kv: -kv[1])), flush=True)
    ccl_s = min(r["s"] for r in ccl_rows.values())
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster):
        held = make().persist()
        wait(held)
        theirs = persisted(lambda image: dask_image.ndmeasure.label(image, structure), held)
        di_s, di_all, (_, m) = timed(theirs, args.dask_image_runs)
        del held
    print(f"dask_image.ndmeasure.label, {args.workers} CPU workers: {di_s:.2f} s {di_all}, {m} components", flush=True)
    start = time.perf_counter()
    want, k = ndi.label(image, structure)
    sp_s = time.perf_counter() - start
    same = {name: same_partition(want, k, labels, n) for name, labels, n in checks}
    print(f"scipy.ndimage.label: {sp_s:.1f} s, {k} components; ccl.dask the same partition: {same}", flush=True)
    same = all(same.values())
    print(f"ccl.dask is {di_s / ccl_s:.1f}x dask_image", flush=True)
    row.update(ccl_s=ccl_s, ccl_by_threads=ccl_rows, dask_image_s=di_s, dask_image_runs=di_all, scipy_s=sp_s,
               components=int(n), same_as_scipy=same, speedup=di_s / ccl_s)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["wide", "wide-gpu", "download", "volume", "dask"])
    parser.add_argument("out")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--side", type=int, default=None)
    parser.add_argument("--chunk", type=int, default=256)
    parser.add_argument("--cap-gib", type=float, default=16)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--dask-image-runs", type=int, default=1)
    parser.add_argument("--variants", type=lambda t: t.split(","), default=["gpu:1", "gpu:16"],
                        help="VARIANT:THREADS[:SWITCH_INTERVAL], comma-separated (gpu, host, or NAME for a "
                        "ccl.dask_NAME module; the worker's GIL switch interval in seconds)")
    args = parser.parse_args()
    if args.what == "dask":
        import ccl.dask  # noqa: F401

        args.side = args.side or 1024
        result = run_dask(args)
    elif args.what == "volume":
        args.side = args.side or 1700
        result = volume(args)
    elif args.what == "wide-gpu":
        result = wide_gpu(args)
    elif args.what == "download":
        result = download(args)
    else:
        result = wide(args)
    result["command"] = " ".join(sys.argv)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
