#!/usr/bin/env python3
"""Times the libraries users would otherwise pick, on exactly the images `ccl bench` used.

Reads the inputs written by `ccl bench MODE --save-images --out DIR` (DIR/images/inputs.csv and
the .npy files it lists) and writes DIR/peers.csv in the same columns as DIR/results.csv, so
`ccl bench plot --results DIR/results.csv,DIR/peers.csv --out DIR/with-peers` draws them side by
side. Peers (each skipped with a message when it cannot be loaded):

- NVIDIA NPP `nppiLabelMarkersUF_8u32u_C1R_Ctx` (4-way: nppiNormL1, 8-way: nppiNormInf), through
  ctypes on libnppif. Timed region: the call, with the input, output and scratch buffer already
  on the GPU (CUDA events). NPP also labels background regions (it joins equal values).
- CuPy `cupyx.scipy.ndimage.label` (4-way cross or 3x3 structure): the call, input on the GPU
  (CUDA events); it allocates its output inside and renumbers labels 1..N.
- OpenCV `connectedComponentsWithAlgorithm(..., CCL_SPAGHETTI)` on the CPU with all cores
  (host clock); the input is in host memory.

For every input: warm-up runs, then timed runs; like ccl, the minimum is what summaries use.
"""
import argparse
import csv
import ctypes
import os
import sys
import time

import numpy as np

COLUMNS = ["mode", "machine", "device_id", "device", "driver", "backend", "algorithm", "connectivity",
           "image", "width", "height", "density", "granularity", "run", "labeling_ms", "upload_ms",
           "download_ms", "iterations", "phases"]


def machine():
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    osname = sys.platform
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                osname = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return f"{cpu} x{os.cpu_count()}, {osname}"


def load_inputs(folder):
    with open(os.path.join(folder, "images", "inputs.csv")) as f:
        for row in csv.DictReader(f):
            image = np.load(os.path.join(folder, "images", row["file"]))
            yield row, np.ascontiguousarray(image.astype(np.uint8))


class NppiSize(ctypes.Structure):
    _fields_ = [("width", ctypes.c_int), ("height", ctypes.c_int)]


class NppStreamContext(ctypes.Structure):
    _fields_ = [("hStream", ctypes.c_void_p), ("nCudaDeviceId", ctypes.c_int),
                ("nMultiProcessorCount", ctypes.c_int), ("nMaxThreadsPerMultiProcessor", ctypes.c_int),
                ("nMaxThreadsPerBlock", ctypes.c_int), ("nSharedMemPerBlock", ctypes.c_size_t),
                ("nCudaDevAttrComputeCapabilityMajor", ctypes.c_int),
                ("nCudaDevAttrComputeCapabilityMinor", ctypes.c_int), ("nStreamFlags", ctypes.c_uint),
                ("nReserved0", ctypes.c_int)]


def gpu_timer(cp, fn, warmup, runs):
    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(runs):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return times


def make_npp(cp, connectivity):
    lib = ctypes.CDLL("libnppif.so.13")
    size_fn = lib.nppiLabelMarkersUFGetBufferSize_32u_C1R
    size_fn.argtypes = [NppiSize, ctypes.POINTER(ctypes.c_int)]
    label_fn = lib.nppiLabelMarkersUF_8u32u_C1R_Ctx
    label_fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, NppiSize, ctypes.c_int,
                         ctypes.c_void_p, NppStreamContext]
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    ctx = NppStreamContext(None, dev.id, props["multiProcessorCount"], props["maxThreadsPerMultiProcessor"],
                           props["maxThreadsPerBlock"], props["sharedMemPerBlock"], props["major"], props["minor"],
                           0, 0)
    norm = 0 if connectivity == 8 else 1  # nppiNormInf: 8-way, nppiNormL1: 4-way

    def prepare(image):
        h, w = image.shape
        roi = NppiSize(w, h)
        nbytes = ctypes.c_int(0)
        status = size_fn(roi, ctypes.byref(nbytes))
        if status != 0:
            raise RuntimeError(f"nppiLabelMarkersUFGetBufferSize_32u_C1R returned {status}")
        src = cp.asarray(image)
        dst = cp.empty((h, w), dtype=cp.uint32)
        scratch = cp.empty(max(nbytes.value, 1), dtype=cp.uint8)

        def run():
            status = label_fn(src.data.ptr, w, dst.data.ptr, w * 4, roi, norm, scratch.data.ptr, ctx)
            if status != 0:
                raise RuntimeError(f"nppiLabelMarkersUF_8u32u_C1R_Ctx returned {status}")
        return run
    return prepare


def make_cupy(cp, connectivity):
    import cupyx.scipy.ndimage as ndi
    structure = np.ones((3, 3), dtype=bool) if connectivity == 8 else None

    def prepare(image):
        src = cp.asarray(image)
        return lambda: ndi.label(src, structure=structure)
    return prepare


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", help="the --out folder of `ccl bench ... --save-images`")
    ap.add_argument("--mode", default=None, help="mode name for the records (default: folder name)")
    ap.add_argument("--connectivity", type=int, default=8, choices=[4, 8])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="OpenCV threads")
    ap.add_argument("--peers", default="npp,cupy,opencv")
    args = ap.parse_args()
    mode = args.mode or os.path.basename(os.path.normpath(args.folder))
    wanted = args.peers.split(",")
    host = machine()
    peers = []
    try:
        import cupy as cp
        gpu_name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        driver = cp.cuda.runtime.driverGetVersion()
        gpu_driver = f"CUDA driver {driver // 1000}.{driver % 1000 // 10}"
        if "npp" in wanted:
            try:
                peers.append(("npp", gpu_name, gpu_driver, "NPP_UF", make_npp(cp, args.connectivity), "gpu"))
            except Exception as e:  # library or symbol missing: the other peers still run
                print(f"NPP unavailable: {e}", file=sys.stderr)
        if "cupy" in wanted:
            peers.append(("cupy", gpu_name, f"CuPy {cp.__version__}, {gpu_driver}", "CuPy_label",
                          make_cupy(cp, args.connectivity), "gpu"))
    except Exception as e:
        cp = None
        print(f"CuPy unavailable: {e}", file=sys.stderr)
    if "opencv" in wanted:
        try:
            import cv2
            cv2.setNumThreads(args.threads)
            algo = cv2.CCL_SPAGHETTI

            def prepare_cv(image):
                return lambda: cv2.connectedComponentsWithAlgorithm(image, args.connectivity, cv2.CV_32S, algo)
            peers.append(("opencv", f"{host.split(' x')[0]} ({args.threads} threads)", f"OpenCV {cv2.__version__}",
                          "OpenCV_Spaghetti", prepare_cv, "cpu"))
        except Exception as e:
            print(f"OpenCV unavailable: {e}", file=sys.stderr)

    out_path = os.path.join(args.folder, "peers.csv")
    with open(out_path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(COLUMNS)
        for row, image in load_inputs(args.folder):
            for backend, device, driver, algorithm, prepare, where in peers:
                try:
                    run = prepare(image)
                    if where == "gpu":
                        times = gpu_timer(cp, run, args.warmup, args.runs)
                    else:
                        for _ in range(args.warmup):
                            run()
                        times = []
                        for _ in range(args.runs):
                            t0 = time.perf_counter()
                            run()
                            times.append((time.perf_counter() - t0) * 1e3)
                except Exception as e:  # a peer failing must not lose the others' figures
                    print(f"{algorithm} failed on {row['name']}: {e}", file=sys.stderr)
                    continue
                for k, ms in enumerate(times):
                    out.writerow([mode, host, backend, device, driver, backend, algorithm, args.connectivity,
                                  row["name"], row["width"], row["height"], row["density"], row["granularity"],
                                  k, f"{ms:.6f}", 0, 0, 0, ""])
                f.flush()
                print(f"{algorithm:18s} {row['name']:28s} min {min(times):.3f} ms", flush=True)
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main()
