#!/usr/bin/env python3
"""Times the libraries users would otherwise pick, on exactly the images `ccl bench` used.

Reads the inputs written by `ccl bench MODE --save-images --out DIR` (DIR/images/inputs.csv and
the .npy files it lists) and writes DIR/peers.csv (or --out) in the same columns as
DIR/results.csv, so `ccl bench plot --results DIR/results.csv,DIR/peers.csv --out DIR/with-peers`
draws them side by side. Each peer is skipped with a message when its library cannot be loaded;
a peer failing on an image loses only its own figures for that image (rows are flushed one by one).

Device-resident (the default; mode: the folder name or --mode). Input already on the GPU, labels
left there, like ccl's labeling_ms:

- NVIDIA NPP `nppiLabelMarkersUF_8u32u_C1R_Ctx` (4-way: nppiNormL1, 8-way: nppiNormInf), through
  ctypes on libnppif. Timed region: the call, with the input, output and scratch buffer already
  on the GPU (CUDA events). NPP also labels background regions (it joins equal values).
- CuPy `cupyx.scipy.ndimage.label` (4-way cross or 3x3 structure): the call, input on the GPU
  (CUDA events); it allocates its output inside and renumbers labels 1..N.
- OpenCV `connectedComponentsWithAlgorithm(..., CCL_SPAGHETTI)` on the CPU with all cores
  (host clock); the input is in host memory.

Volumes (inputs of shape (D, H, W), from `ccl bench ... --size WxHxD` or `--hilbert`; connectivity
6, 18 or 26, default 26), the same columns with the depth:

- CuPy `cupyx.scipy.ndimage.label` with the 3D structure of the connectivity (as
  `generate_binary_structure(3, 1 / 2 / 3)`), input on the GPU, CUDA events.
- device_id `cc3d`, algorithm `cc3d`: `cc3d.connected_components(volume, connectivity=C)` (pip
  `connected-components-3d`), CPU, host clock.
- device_id `scipy`, algorithm `SciPy_label`: `scipy.ndimage.label(volume, structure)`, CPU, host
  clock.

With --end-to-end the same three run host to host (CuPy with its copies, as for images; cc3d
and SciPy already label host memory).

End-to-end (--end-to-end; mode `end-to-end` unless --mode), what `ccl bench end-to-end` measures:
a host (numpy) 0/1 image in, consecutive labels in host memory out, host clock
(time.perf_counter) around one whole run, every copy and allocation included. labeling_ms is that
total; upload_ms and download_ms its host-to-device and device-to-host parts (0 where there are
none); phases `upload=ms;label=ms;download=ms` (empty for OpenCV). The parts of one run are
separated by device synchronisations, as ccl's upload / label / download are; the total includes
them. Device memory comes from CuPy's memory pools (kept between runs, as in a user's program).

- device_id `opencv`, algorithm `OpenCV_Spaghetti`: connectedComponentsWithAlgorithm(img,
  connectivity, CV_32S, CCL_SPAGHETTI) with --threads threads; its labels are already
  consecutive, 1..N with background 0. device_id `opencv-1t`, algorithm
  `OpenCV_Spaghetti_1thread`: the same after cv2.setNumThreads(1). Both restore the thread count.
- device_id `cupy`, algorithm `CuPy_label`: `d = cp.asarray(img)` (upload, synchronised),
  `labels, n = cupyx.scipy.ndimage.label(d, structure)` (label, synchronised),
  `labels.get()` (download); upload and download are recorded separately.
- device_id `npp`, algorithm `NPP_UF_compress`: cp.asarray(img) (upload, synchronised); the two
  buffer-size queries, the device allocations (output, scratch buffers),
  nppiLabelMarkersUF_8u32u_C1R_Ctx and nppiCompressMarkerLabelsUF_32u_C1IR_Ctx (which removes
  the gaps between labels and returns their number N to the host), synchronised (label);
  `.get()` of the labels (download). NPP also labels background regions (it joins equal
  values), so its N counts background regions too.

None of the peers promises ccl's numbering (raster order of first appearance); all give
consecutive labels. The first call on every input (a warm-up one when --warmup > 0) is checked
(shape, label count); a mismatch is reported on stderr.

For every input: warm-up runs, then timed runs; like ccl, the minimum is what summaries use.
Column `timing` (as ccl's): `idle` for the GPU peers' device-resident runs (CUDA events around the
call, the device idle before it), `host` for host clocks (the CPU peers, every end-to-end run).
"""
import argparse
import contextlib
import csv
import ctypes
import os
import sys
import time

import numpy as np

COLUMNS = ["mode", "machine", "device_id", "device", "driver", "backend", "algorithm", "connectivity",
           "image", "width", "height", "depth", "density", "granularity", "run", "labeling_ms", "upload_ms",
           "download_ms", "iterations", "phases", "timing"]
# Peers of images, and of volumes (inputs of shape (D, H, W)).
IMAGE_PEERS = ["npp", "cupy", "opencv", "opencv-1t"]
VOLUME_PEERS = ["cupy", "cc3d", "scipy"]

# NPP 13 first (what the device-resident measurements were taken with), then NPP 12.
NPP_LIBRARIES = ["libnppif.so.13", "libnppif.so.12"]
END_TO_END = "end-to-end"


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
            row.setdefault("depth", "1")  # manifests written before volumes have no depth
            yield row, np.ascontiguousarray(image.astype(np.uint8))


def inputs_are_volumes(folder):
    """Whether the saved inputs are volumes: the first .npy has three axes (D, H, W)."""
    with open(os.path.join(folder, "images", "inputs.csv")) as f:
        first = next(csv.DictReader(f), None)
    if first is None:
        return False
    return np.load(os.path.join(folder, "images", first["file"]), mmap_mode="r").ndim == 3


def structure(ndim, connectivity):
    """The ndimage structuring element of a connectivity: the offsets of at most 1 (4, 6), 2 (8,
    18) or 3 (26) nonzero unit steps, as scipy's generate_binary_structure(ndim, rank)."""
    rank = {4: 1, 6: 1, 8: 2, 18: 2, 26: 3}[connectivity]
    offsets = np.indices((3,) * ndim) - 1
    return np.abs(offsets).sum(axis=0) <= rank


def volume_peer(name, connectivity):
    """A CPU volume peer: (device, driver, algorithm, label function) for `cc3d` or `scipy`."""
    if name == "cc3d":
        import cc3d
        from importlib.metadata import version
        return (f"{machine().split(' x')[0]} (1 thread)", f"cc3d {version('connected-components-3d')}", "cc3d",
                lambda image: cc3d.connected_components(image, connectivity=connectivity))
    import scipy
    from scipy import ndimage
    element = structure(3, connectivity)
    return (f"{machine().split(' x')[0]} (1 thread)", f"SciPy {scipy.__version__}", "SciPy_label",
            lambda image: ndimage.label(image, structure=element))


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


class Npp:
    """libnppif's labeling functions (NPP 12/13 signatures) and a stream context on CuPy's device."""

    def __init__(self, cp, connectivity):
        errors = []
        for name in NPP_LIBRARIES:
            try:
                lib = ctypes.CDLL(name)
                break
            except OSError as e:
                errors.append(str(e))
        else:
            raise OSError("; ".join(errors))
        # NppStatus nppiLabelMarkersUFGetBufferSize_32u_C1R(NppiSize oSizeROI, int *hpBufferSize)
        self.label_size = lib.nppiLabelMarkersUFGetBufferSize_32u_C1R
        self.label_size.argtypes = [NppiSize, ctypes.POINTER(ctypes.c_int)]
        self.label_size.restype = ctypes.c_int
        # NppStatus nppiLabelMarkersUF_8u32u_C1R_Ctx(Npp8u *pSrc, int nSrcStep, Npp32u *pDst,
        #     int nDstStep, NppiSize oSizeROI, NppiNorm eNorm, Npp8u *pBuffer, NppStreamContext ctx)
        self.label = lib.nppiLabelMarkersUF_8u32u_C1R_Ctx
        self.label.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, NppiSize, ctypes.c_int,
                               ctypes.c_void_p, NppStreamContext]
        self.label.restype = ctypes.c_int
        self.lib = lib
        dev = cp.cuda.Device()
        props = cp.cuda.runtime.getDeviceProperties(dev.id)
        self.ctx = NppStreamContext(None, dev.id, props["multiProcessorCount"], props["maxThreadsPerMultiProcessor"],
                                    props["maxThreadsPerBlock"], props["sharedMemPerBlock"], props["major"],
                                    props["minor"], 0, 0)
        self.norm = 0 if connectivity == 8 else 1  # nppiNormInf: 8-way, nppiNormL1: 4-way

    def compress_functions(self):
        """The label compression (consecutive labels) and its buffer-size query."""
        # NppStatus nppiCompressMarkerLabelsGetBufferSize_32u_C1R(int nStartingNumber, int *hpBufferSize)
        size_fn = self.lib.nppiCompressMarkerLabelsGetBufferSize_32u_C1R
        size_fn.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
        size_fn.restype = ctypes.c_int
        # NppStatus nppiCompressMarkerLabelsUF_32u_C1IR_Ctx(Npp32u *pSrcDst, int nSrcDstStep,
        #     NppiSize oSizeROI, int nStartingNumber, int *pNewNumber (host), Npp8u *pBuffer,
        #     NppStreamContext ctx)
        compress_fn = self.lib.nppiCompressMarkerLabelsUF_32u_C1IR_Ctx
        compress_fn.argtypes = [ctypes.c_void_p, ctypes.c_int, NppiSize, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                ctypes.c_void_p, NppStreamContext]
        compress_fn.restype = ctypes.c_int
        return size_fn, compress_fn


def npp_check(name, status):
    if status != 0:
        raise RuntimeError(f"{name} returned {status}")


def make_npp(cp, connectivity):
    npp = Npp(cp, connectivity)
    size_fn, label_fn, ctx, norm = npp.label_size, npp.label, npp.ctx, npp.norm

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

    def prepare(image):
        src = cp.asarray(image)
        element = structure(image.ndim, connectivity)
        return lambda: ndi.label(src, structure=element)
    return prepare


# End-to-end peers: run(image) -> (marks, labels, count, background_labeled), where marks are
# [(start, None), (t, "phase"), ...] host clock readings, labels the host label image and count
# the number of labels the library reported.

def e2e_npp(cp, connectivity):
    npp = Npp(cp, connectivity)
    compress_size, compress = npp.compress_functions()
    label_size, label, ctx, norm = npp.label_size, npp.label, npp.ctx, npp.norm
    sync = cp.cuda.Device().synchronize

    def run(image):
        h, w = image.shape
        if w * h > 2**31 - 1:
            raise ValueError(f"{w}x{h}: NPP's label count is an int")
        t0 = time.perf_counter()
        src = cp.asarray(image)
        sync()
        t1 = time.perf_counter()
        roi = NppiSize(w, h)
        label_bytes, compress_bytes, count = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int(0)
        npp_check("nppiLabelMarkersUFGetBufferSize_32u_C1R", label_size(roi, ctypes.byref(label_bytes)))
        # For UF labels, nStartingNumber is ROI width * ROI height (NPP documentation).
        npp_check("nppiCompressMarkerLabelsGetBufferSize_32u_C1R", compress_size(w * h, ctypes.byref(compress_bytes)))
        dst = cp.empty((h, w), dtype=cp.uint32)  # pitch must be width * 4 (no cudaMallocPitch)
        label_scratch = cp.empty(max(label_bytes.value, 1), dtype=cp.uint8)
        compress_scratch = cp.empty(max(compress_bytes.value, 1), dtype=cp.uint8)
        npp_check("nppiLabelMarkersUF_8u32u_C1R_Ctx",
                  label(src.data.ptr, w, dst.data.ptr, w * 4, roi, norm, label_scratch.data.ptr, ctx))
        npp_check("nppiCompressMarkerLabelsUF_32u_C1IR_Ctx",
                  compress(dst.data.ptr, w * 4, roi, w * h, ctypes.byref(count), compress_scratch.data.ptr, ctx))
        sync()
        t2 = time.perf_counter()
        labels = dst.get()
        t3 = time.perf_counter()
        return [(t0, None), (t1, "upload"), (t2, "label"), (t3, "download")], labels, count.value, True
    return run


def e2e_cupy(cp, connectivity):
    import cupyx.scipy.ndimage as ndi
    sync = cp.cuda.Device().synchronize

    def run(image):
        element = structure(image.ndim, connectivity)
        t0 = time.perf_counter()
        src = cp.asarray(image)
        sync()
        t1 = time.perf_counter()
        labels, n = ndi.label(src, structure=element)
        sync()
        t2 = time.perf_counter()
        host = labels.get()
        t3 = time.perf_counter()
        return [(t0, None), (t1, "upload"), (t2, "label"), (t3, "download")], host, int(n), False
    return run


def e2e_volume(label):
    """A CPU volume peer end to end: the labels are already in host memory."""
    def run(image):
        t0 = time.perf_counter()
        out = label(image)
        t1 = time.perf_counter()
        labels, n = out if isinstance(out, tuple) else (out, int(out.max()) if out.size else 0)
        return [(t0, None), (t1, None)], labels, int(n), False
    return run


def e2e_opencv(cv2, connectivity):
    def run(image):
        t0 = time.perf_counter()
        n, labels = cv2.connectedComponentsWithAlgorithm(image, connectivity, cv2.CV_32S, cv2.CCL_SPAGHETTI)
        t1 = time.perf_counter()
        return [(t0, None), (t1, None)], labels, n - 1, False  # n counts the background label 0
    return run


@contextlib.contextmanager
def cv_threads(cv2, threads):
    before = cv2.getNumThreads()
    cv2.setNumThreads(threads)
    try:
        yield
    finally:
        cv2.setNumThreads(before)


def check_labels(image, labels, count, background_labeled):
    """Why this output is not a labeling of image into count consecutive labels, or None."""
    if labels.shape != image.shape:
        return f"labels {labels.shape} for an image {image.shape}"
    top = int(labels.max()) if labels.size else 0
    if top != count:
        return f"largest label {top}, reported count {count}"
    if not background_labeled and labels.size:
        if np.any(labels[image == 0] != 0) or np.any(labels[image != 0] == 0):
            return "background and foreground do not match the image"
    return None


def split(marks):
    """(total ms, upload ms, download ms, phases) from [(t0, None), (t1, name), ...]."""
    total = (marks[-1][0] - marks[0][0]) * 1e3
    phases = [(name, (t - prev) * 1e3) for (prev, _), (t, name) in zip(marks, marks[1:]) if name]
    upload = sum(ms for name, ms in phases if name == "upload")
    download = sum(ms for name, ms in phases if name == "download")
    return total, upload, download, ";".join(f"{name}={ms:.6f}" for name, ms in phases)


class Rows:
    """The output CSV: header at once, every row flushed as it is written."""

    def __init__(self, path):
        self.file = open(path, "w", newline="")
        self.out = csv.writer(self.file)
        self.write(COLUMNS)

    def write(self, values):
        self.out.writerow(values)
        self.file.flush()

    def close(self):
        self.file.close()


def device_resident(args, mode, host, wanted, rows):
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

    for name in ("cc3d", "scipy"):
        if name in wanted:
            try:
                device, driver, algorithm, label = volume_peer(name, args.connectivity)
                peers.append((name, device, driver, algorithm, lambda image, label=label: lambda: label(image), "cpu"))
            except Exception as e:  # library missing: the other peers still run
                print(f"{name} unavailable: {e}", file=sys.stderr)

    for row, image in load_inputs(args.folder):
        for backend, device, driver, algorithm, prepare, where in peers:
            try:
                run = prepare(image)
                if where == "gpu":
                    times = gpu_timer(cp, run, args.warmup, args.runs)
                else:
                    cpu_runs = args.cpu_runs or args.runs
                    for _ in range(args.warmup if args.cpu_runs is None else 0):
                        run()
                    times = []
                    for _ in range(cpu_runs):
                        t0 = time.perf_counter()
                        run()
                        times.append((time.perf_counter() - t0) * 1e3)
            except Exception as e:  # a peer failing must not lose the others' figures
                print(f"{algorithm} failed on {row['name']}: {e}", file=sys.stderr)
                continue
            for k, ms in enumerate(times):
                rows.write([mode, host, backend, device, driver, backend, algorithm, args.connectivity,
                            row["name"], row["width"], row["height"], row["depth"], row["density"],
                            row["granularity"], k, f"{ms:.6f}", 0, 0, 0, "",
                            "idle" if where == "gpu" else "host"])
            if times:
                print(f"{algorithm:18s} {row['name']:28s} min {min(times):.3f} ms", flush=True)


def end_to_end(args, mode, host, wanted, rows):
    # (device_id, device, driver, backend, algorithm, run, scope)
    peers = []
    if "npp" in wanted or "cupy" in wanted:
        try:
            import cupy as cp
            gpu_name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
            driver = cp.cuda.runtime.driverGetVersion()
            gpu_driver = f"CUDA driver {driver // 1000}.{driver % 1000 // 10}"
            if "npp" in wanted:
                try:
                    peers.append(("npp", gpu_name, gpu_driver, "npp", "NPP_UF_compress",
                                  e2e_npp(cp, args.connectivity), contextlib.nullcontext))
                except Exception as e:  # library or symbol missing: the other peers still run
                    print(f"NPP unavailable: {e}", file=sys.stderr)
            if "cupy" in wanted:
                try:
                    peers.append(("cupy", gpu_name, f"CuPy {cp.__version__}, {gpu_driver}", "cupy", "CuPy_label",
                                  e2e_cupy(cp, args.connectivity), contextlib.nullcontext))
                except Exception as e:
                    print(f"CuPy's ndimage unavailable: {e}", file=sys.stderr)
        except Exception as e:
            print(f"CuPy unavailable (NPP needs it too): {e}", file=sys.stderr)
    if "opencv" in wanted or "opencv-1t" in wanted:
        try:
            import cv2
            run = e2e_opencv(cv2, args.connectivity)
            cpu = host.split(" x")[0]
            if "opencv" in wanted:
                peers.append(("opencv", f"{cpu} ({args.threads} threads)", f"OpenCV {cv2.__version__}", "opencv",
                              "OpenCV_Spaghetti", run, lambda: cv_threads(cv2, args.threads)))
            if "opencv-1t" in wanted:
                peers.append(("opencv-1t", f"{cpu} (1 thread)", f"OpenCV {cv2.__version__}", "opencv",
                              "OpenCV_Spaghetti_1thread", run, lambda: cv_threads(cv2, 1)))
        except Exception as e:
            print(f"OpenCV unavailable: {e}", file=sys.stderr)
    for name in ("cc3d", "scipy"):
        if name in wanted:
            try:
                device, driver, algorithm, label = volume_peer(name, args.connectivity)
                peers.append((name, device, driver, name, algorithm, e2e_volume(label), contextlib.nullcontext))
            except Exception as e:  # library missing: the other peers still run
                print(f"{name} unavailable: {e}", file=sys.stderr)

    for row, image in load_inputs(args.folder):
        for device_id, device, driver, backend, algorithm, run, scope in peers:
            times = []
            try:
                with scope():
                    for k in range(args.warmup + args.runs):
                        marks, labels, count, background_labeled = run(image)
                        if k == 0:
                            problem = check_labels(image, labels, count, background_labeled)
                            if problem:
                                print(f"{algorithm} on {row['name']}: unexpected output: {problem}", file=sys.stderr)
                        if k < args.warmup:
                            continue
                        total, upload, download, phases = split(marks)
                        rows.write([mode, host, device_id, device, driver, backend, algorithm, args.connectivity,
                                    row["name"], row["width"], row["height"], row["depth"], row["density"],
                                    row["granularity"], k - args.warmup, f"{total:.6f}", f"{upload:.6f}",
                                    f"{download:.6f}", 0, phases, "host"])
                        times.append(total)
            except Exception as e:  # rows already written stay; the other peers still run
                print(f"{algorithm} failed on {row['name']}: {e}", file=sys.stderr)
            if times:
                print(f"{algorithm:24s} {row['name']:28s} min {min(times):.3f} ms", flush=True)


BINARIZE_COLUMNS = ["machine", "device_id", "device", "setting", "window", "kernel", "image", "width", "height",
                    "runs", "min_ms", "median_ms"]


def binarize_peers(args):
    """Nick (T = m + k sqrt(S2 / NP), k = -0.1) on FOLDER/images/page.npy (written by `ccl bench
    binarize --save-images`), for each --windows, in the columns of ccl's binarize results.csv:

    - device_id `cupy` (GPU, CUDA events around the whole computation, page already on the GPU):
      m = uniform_filter(p), S2/NP = uniform_filter(p^2) in float32 (mode 'reflect', CuPy's
      default), T = m + k sqrt(S2/NP), ink = p <= T; what a CuPy user writes.
    - device_id `opencv` (CPU, all threads, host clock): cv2.ximgproc.niBlackThreshold(...,
      BINARIZATION_NICK) when opencv-contrib is installed (odd windows only).
    - device_id `doxapy` (CPU, host clock): doxapy.Binarization(NICK) with window and k, when
      doxapy is installed.
    """
    page = np.load(os.path.join(args.folder, "images", "page.npy"))
    h, w = page.shape
    windows = [int(x) for x in args.windows.split(",")]
    k = -0.1
    out_path = args.out or os.path.join(args.folder, "peers.csv")
    name = f"tiled-{w}x{h}"
    with open(out_path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(BINARIZE_COLUMNS)

        def emit(device_id, device, window, times):
            times = sorted(times)
            writer.writerow([machine(), device_id, device, f"nick window={window} k={k} formula=doxa", window,
                             device_id, name, w, h, len(times), f"{times[0]:.6f}", f"{times[len(times) // 2]:.6f}"])
            f.flush()
            print(f"{device_id} W={window}: median {times[len(times) // 2]:.4f} ms")

        try:
            import cupy as cp
            from cupyx.scipy import ndimage as cnd
            d = cp.asarray(page)
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            for window in windows:
                times = []
                for run in range(args.warmup + args.runs):
                    start.record()
                    p = d.astype(cp.float32)
                    m = cnd.uniform_filter(p, window)
                    s2 = cnd.uniform_filter(p * p, window)
                    ink = d <= m + k * cp.sqrt(s2)
                    stop.record()
                    stop.synchronize()
                    if run >= args.warmup:
                        times.append(cp.cuda.get_elapsed_time(start, stop))
                del ink
                emit("cupy", cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), window, times)
        except ImportError as e:
            print(f"cupy: skipped ({e})", file=sys.stderr)
        try:
            import cv2
            nick = cv2.ximgproc.niBlackThreshold
            for window in windows:
                if window % 2 == 0 or window < 3:
                    continue
                times = []
                for run in range(args.warmup + args.runs):
                    t0 = time.perf_counter()
                    nick(page, 255, cv2.THRESH_BINARY, window, k, binarizationMethod=cv2.ximgproc.BINARIZATION_NICK)
                    if run >= args.warmup:
                        times.append((time.perf_counter() - t0) * 1e3)
                emit("opencv", f"OpenCV {cv2.__version__} CPU", window, times)
        except (ImportError, AttributeError) as e:
            print(f"opencv ximgproc: skipped ({e})", file=sys.stderr)
        try:
            import doxapy
            for window in windows:
                times = []
                out = np.empty(page.shape, np.uint8)
                for run in range(args.warmup + args.runs):
                    t0 = time.perf_counter()
                    b = doxapy.Binarization(doxapy.Binarization.Algorithms.NICK)
                    b.initialize(page)
                    b.to_binary(out, {"window": window, "k": k})
                    if run >= args.warmup:
                        times.append((time.perf_counter() - t0) * 1e3)
                emit("doxapy", "doxapy CPU", window, times)
        except ImportError as e:
            print(f"doxapy: skipped ({e})", file=sys.stderr)
    print(f"wrote {out_path}")


def main():
    if "--binarize" in sys.argv:
        ap = argparse.ArgumentParser(description=binarize_peers.__doc__)
        ap.add_argument("folder", help="the --out folder of `ccl bench binarize --save-images`")
        ap.add_argument("--binarize", action="store_true")
        ap.add_argument("--windows", default="9,15,33,45,101,201")
        ap.add_argument("--runs", type=int, default=10)
        ap.add_argument("--warmup", type=int, default=2)
        ap.add_argument("--out", default=None, help="CSV to write (default: FOLDER/peers.csv)")
        binarize_peers(ap.parse_args())
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", help="the --out folder of `ccl bench ... --save-images`")
    ap.add_argument("--end-to-end", action="store_true",
                    help="host image in, consecutive labels in host memory out, host clock (see above)")
    ap.add_argument("--mode", default=None,
                    help="mode name for the records (default: the folder name; end-to-end with --end-to-end)")
    ap.add_argument("--connectivity", type=int, default=None, choices=[4, 8, 6, 18, 26],
                    help="4 or 8 for images (default 8), 6, 18 or 26 for volumes (default 26)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--cpu-runs", type=int, default=None,
                    help="timed runs of the CPU peers of device-resident modes, without warm-up (default: "
                         "--runs after --warmup); the single-threaded volume peers take seconds per volume")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="OpenCV threads (opencv)")
    ap.add_argument("--peers", default=None,
                    help="comma-separated; images: npp, cupy, opencv, opencv-1t (end-to-end only) "
                         "(default: npp,cupy,opencv; with --end-to-end npp,cupy,opencv,opencv-1t); "
                         "volumes: cupy, cc3d, scipy (default: all three)")
    ap.add_argument("--out", default=None, help="CSV to write (default: FOLDER/peers.csv)")
    args = ap.parse_args()
    if args.runs < 1 or args.warmup < 0 or (args.cpu_runs is not None and args.cpu_runs < 1):
        ap.error("--runs must be at least 1 and --warmup at least 0")
    volumes = inputs_are_volumes(args.folder)
    if args.connectivity is None:
        args.connectivity = 26 if volumes else 8
    if volumes != (args.connectivity in (6, 18, 26)):
        ap.error(f"--connectivity {args.connectivity} does not fit the inputs, which are "
                 + ("volumes (6, 18 or 26)" if volumes else "images (4 or 8)"))
    known = VOLUME_PEERS if volumes else IMAGE_PEERS
    default = known if args.end_to_end or volumes else known[:3]
    wanted = args.peers.split(",") if args.peers else default
    for name in wanted:
        if name not in known:
            print(f"peer {name!r} does not run on these inputs (known: {', '.join(known)})", file=sys.stderr)
    wanted = [name for name in wanted if name in known]
    if not args.end_to_end and "opencv-1t" in wanted:
        print("opencv-1t is measured with --end-to-end only", file=sys.stderr)
    mode = args.mode or (END_TO_END if args.end_to_end else os.path.basename(os.path.normpath(args.folder)))
    out_path = args.out or os.path.join(args.folder, "peers.csv")
    rows = Rows(out_path)
    try:
        (end_to_end if args.end_to_end else device_resident)(args, mode, machine(), wanted, rows)
    finally:
        rows.close()
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main()
