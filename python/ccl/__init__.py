"""GPU connected-components labeling and component statistics.

``ccl`` labels the connected components of binary images (2D) and volumes (3D) on any GPU
(CUDA or OpenCL: NVIDIA, AMD, Intel) or on the CPU, with the algorithms of Allegretti et al.
(IPAS 2018, TPDS 2020). Kernels are compiled at run time, so no CUDA toolkit is needed.

NumPy in, NumPy out: any integer, bool or float array of 2 (H, W) or 3 (D, H, W) dimensions, in
any memory order (strided and Fortran-ordered arrays are copied into C order first); nonzero is
foreground. The device works with the GIL released, and calls from several threads run at
once, each on a labeler of its own (one is made when every kept one is busy, and kept).

GPU arrays in, GPU arrays out: a CuPy array, a PyTorch CUDA tensor, or any object with
``__cuda_array_interface__`` is labeled where it lies, on the CUDA device that holds it
(``cuda:N``), and the labels come back on that device as the same kind of array (CuPy:
``uint32``; PyTorch: ``int32``, as PyTorch has no ``uint32`` arithmetic; past 2^32 - 1
elements, labeled in slabs there, ``uint64`` and ``int64``), with nothing copied through the
host. Streams: ccl waits for the array's current stream (CuPy's or PyTorch's
current stream on its device) before it reads the input and writes the output, runs on a stream
of its own, and returns only once the labels are written, so the result may be used on any
stream at once. With an explicit OpenCL or CPU ``device``, a GPU array goes through the host
instead (binarized on its GPU, copied to NumPy) and the result is NumPy.

Binarization: :func:`binarize` thresholds gray pages (Nick, Sauvola, Niblack, Wolf, Otsu) on the
device, into the ink masks :func:`label` takes.

Functions: :func:`label`, :func:`label_batch`, :func:`label_iter`, :func:`label_with_stats`, :func:`regionprops_table`, :func:`component_values`, :func:`binarize`, :func:`host_array`,
:func:`devices`, :func:`algorithms`.
"""

from __future__ import annotations

import contextlib
import itertools
import operator
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import _ccl

__all__ = [
    "MAX_32BIT_ELEMENTS",
    "DEVICE_BYTES_PER_ELEMENT",
    "label",
    "label_batch",
    "label_iter",
    "label_with_stats",
    "regionprops_table",
    "component_values",
    "binarize",
    "host_array",
    "devices",
    "algorithms",
]

def _check_ndim(ndim: int) -> None:
    if ndim not in (2, 3):
        raise ValueError(f"image has {ndim} dimensions; an image has 2 (H, W), a volume 3 (D, H, W)")


def _check_kind(kind: str, dtype) -> None:
    if kind not in "biuf":
        raise ValueError(f"image of dtype {dtype}; expected bool, integer or float values")


def _background_value(dtype, background):
    """``background`` checked as a value of ``dtype`` (None: 0); returns it, or None for 0, the
    value whose test the fast paths make."""
    if background is None:
        return None
    kind = np.dtype(dtype).kind
    if isinstance(background, (bool, np.bool_)) or kind == "b":
        if background not in (0, 1):
            raise ValueError(f"background={background!r} is not a value of a {dtype} image (False or True)")
        return None if not background else True
    if kind in "iu":
        info = np.iinfo(dtype)
        if not float(background).is_integer() or not info.min <= int(background) <= info.max:
            raise ValueError(
                f"background={background!r} is not a value of a {dtype} image (integers {info.min}..{info.max})"
            )
        return None if int(background) == 0 else int(background)
    value = float(background)
    return None if value == 0 else value


def _foreground(array, background, xp=np):
    """``array != background`` as C-contiguous uint8 0 and 1 (``xp``: NumPy or CuPy)."""
    value = _background_value(array.dtype, background)
    if value is None and array.dtype.itemsize == 1:
        # uint8, int8 and bool: nonzero is foreground already; a view where it is contiguous.
        return xp.ascontiguousarray(array).view(xp.uint8)
    return xp.ascontiguousarray(array != (0 if value is None else value)).view(xp.uint8)


def _binary(image, background=None) -> np.ndarray:
    """``image`` as a C-contiguous uint8 array of 0 and 1 (1 where it differs from
    ``background``, by default 0), checking its dimensions."""
    if hasattr(image, "__dlpack_device__"):
        kind = image.__dlpack_device__()[0]
        if kind != 1:  # not kDLCPU (arrays with __cuda_array_interface__ do not come here)
            raise ValueError(
                f"arrays on DLPack device type {kind} are not accepted: pass a NumPy array, or a CUDA array "
                "with __cuda_array_interface__ (a CuPy array or a PyTorch CUDA tensor, e.g. cupy.from_dlpack(x))"
            )
    array = np.asarray(image)
    _check_ndim(array.ndim)
    _check_kind(array.dtype.kind, array.dtype)
    return _foreground(array, background)


#: Neighbour counts by hops (scikit-image's ``connectivity``, SciPy's
#: ``generate_binary_structure(ndim, hops)``): how many axes a step to a neighbour may cross.
_BY_HOPS = {2: (4, 8), 3: (6, 18, 26)}


def _check_values(dtype) -> None:
    if np.dtype(dtype).kind not in "biu":
        raise ValueError(
            f"a multi-label image of dtype {dtype}: its values are classes or labels, integers or bool "
            "(compare floats first, e.g. np.round(x).astype(np.int32))"
        )


def _multilabel_args(dtype, background) -> tuple:
    """A multi-label image's (bytes per value, the background's bits), as the native calls take
    them, for values of ``dtype`` (bool as uint8) and ``background`` (None: 0)."""
    dtype = np.dtype(dtype)
    _check_values(dtype)
    value = _background_value(dtype, background)
    unsigned = np.dtype(f"u{dtype.itemsize}")
    bits = np.array(0 if value is None else value, dtype=dtype).reshape(1).view(unsigned)[0]
    return dtype.itemsize, int(bits)


def _host_values(image) -> tuple:
    """A multi-label ``image`` on the host as the native call takes it: its C-ordered values
    (bool as uint8, native byte order) as bytes, a last axis per value, and their dtype."""
    array = np.asarray(image)
    _check_ndim(array.ndim)
    _check_values(array.dtype)
    if array.dtype == np.bool_:
        array = array.view(np.uint8)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    array = np.ascontiguousarray(array)
    return array.view(np.uint8).reshape(array.shape + (array.dtype.itemsize,)), array.dtype


def _connectivity(ndim: int, connectivity) -> int:
    """The neighbour count (4, 8, 6, 18, 26) ``connectivity`` names for an array of ``ndim``
    dimensions: a neighbour count, or scikit-image's hops 1..ndim; None: all hops (8, 26)."""
    allowed = _BY_HOPS.get(ndim, (8, 26))
    if connectivity is None:
        return allowed[-1]
    if isinstance(connectivity, (bool, np.bool_)) or not float(connectivity).is_integer():
        raise ValueError(f"connectivity={connectivity!r}: a neighbour count or a number of hops")
    connectivity = int(connectivity)
    if 1 <= connectivity <= len(allowed):
        return allowed[connectivity - 1]
    if connectivity not in allowed:
        kind = "an image" if ndim == 2 else "a volume"
        raise ValueError(
            f"connectivity {connectivity} is not for {kind}; use one of {allowed} (or hops 1..{len(allowed)})"
        )
    return connectivity


def _structure_connectivity(structure, ndim: int, connectivity):
    """The neighbour count of SciPy's ``structure`` for an array of ``ndim`` dimensions (one of
    ``generate_binary_structure(ndim, hops)``), checked against ``connectivity`` where both are
    given; ``connectivity`` itself without a structure."""
    if structure is None:
        return connectivity
    mask = np.asarray(structure).astype(bool)
    for hops in range(1, ndim + 1):
        grid = np.indices((3,) * ndim) - 1
        if mask.shape == (3,) * ndim and np.array_equal(mask, np.abs(grid).sum(axis=0) <= hops):
            found = _BY_HOPS[ndim][hops - 1]
            if connectivity is not None and _connectivity(ndim, connectivity) != found:
                raise ValueError(f"structure is {found}-connectivity, connectivity={connectivity!r} says otherwise")
            return found
    raise ValueError(
        f"structure of shape {mask.shape} for {ndim} dimensions: only the standard structuring elements, "
        f"scipy.ndimage.generate_binary_structure({ndim}, hops) for hops 1..{ndim}, are labeled"
    )


# --- Arrays in CUDA memory -------------------------------------------------------------------


def _c_strides(shape, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def _cupy_opencv(cupy, n: int, ndim: int):
    """OpenCV's ``stats`` and ``centroids`` for n components of an array of ``ndim`` dimensions,
    as empty CuPy arrays (the device fills them)."""
    return cupy.empty((n + 1, 2 * ndim + 1), dtype=cupy.int64), cupy.empty((n + 1, ndim), dtype=cupy.float64)


class _CupyArray:
    """A CuPy array: binarized and labeled with CuPy, on its device, CuPy's current stream."""

    def __init__(self, array):
        import cupy

        self.cupy, self.array = cupy, array

    def device(self):
        return self.array.device

    def binary(self, background=None):
        x, cupy = self.array, self.cupy
        _check_ndim(x.ndim)
        _check_kind(x.dtype.kind, x.dtype)
        return _foreground(x, background, cupy)

    def empty_labels(self, shape):
        return self.cupy.empty(shape, dtype=self.cupy.uint32)

    def empty_opencv(self, n: int, ndim: int):
        return _cupy_opencv(self.cupy, n, ndim)

    def stream(self):
        return self.cupy.cuda.get_current_stream().ptr or 1  # 0: the legacy default stream


    def values(self):
        x, cupy = self.array, self.cupy
        _check_ndim(x.ndim)
        _check_values(x.dtype)
        return cupy.ascontiguousarray(x.view(cupy.uint8) if x.dtype == cupy.bool_ else x)

    def values_dtype(self, values):
        return np.dtype(values.dtype)

    def host_values(self) -> np.ndarray:
        return self.values().get()

    def host_binary(self, background=None) -> np.ndarray:
        with self.device():
            return self.binary(background).get()

    def host(self) -> np.ndarray:
        with self.device():
            return self.array.get()

    def gray(self):
        return _gray(self.array, self.cupy)

    def empty_ink(self, shape):
        return self.cupy.empty(shape, dtype=self.cupy.bool_)



def _torch_numpy_dtype(tensor):
    """The NumPy dtype whose values a PyTorch tensor's dtype holds (float32 for the float types
    NumPy lacks, such as bfloat16)."""
    try:
        return np.dtype(str(tensor.dtype).removeprefix("torch."))
    except TypeError:
        return np.dtype(np.float32)


class _TorchArray:
    """A PyTorch CUDA tensor: binarized with PyTorch, labels int32, PyTorch's current stream."""

    def __init__(self, array):
        import torch

        self.torch, self.array = torch, array

    def device(self):
        return self.torch.cuda.device(self.array.device)

    def binary(self, background=None):
        x, torch = self.array, self.torch
        _check_ndim(x.dim())
        if x.is_complex():
            raise ValueError(f"image of dtype {x.dtype}; expected bool, integer or float values")
        x = x.detach()
        value = _background_value(_torch_numpy_dtype(x), background)
        if value is not None:
            return (x != value).to(torch.uint8).contiguous()
        if x.is_contiguous() and x.dtype == torch.uint8:
            return x
        if x.is_contiguous() and x.dtype == torch.bool:
            try:
                return x.view(torch.uint8)  # no copy
            except RuntimeError:  # a PyTorch without dtype views
                pass
        return (x != 0).to(torch.uint8).contiguous()

    def empty_labels(self, shape):
        return self.torch.empty(tuple(shape), dtype=self.torch.int32, device=self.array.device)

    def empty_opencv(self, n: int, ndim: int):
        torch, device = self.torch, self.array.device
        return (
            torch.empty((n + 1, 2 * ndim + 1), dtype=torch.int64, device=device),
            torch.empty((n + 1, ndim), dtype=torch.float64, device=device),
        )

    def stream(self):
        return self.torch.cuda.current_stream(self.array.device).cuda_stream or 1


    def values(self):
        x, torch = self.array.detach(), self.torch
        _check_ndim(x.dim())
        _check_values(_torch_numpy_dtype(x))
        return (x.to(torch.uint8) if x.dtype == torch.bool else x).contiguous()

    def values_dtype(self, values):
        return _torch_numpy_dtype(values)

    def host_values(self) -> np.ndarray:
        return self.values().cpu().numpy()

    def host_binary(self, background=None) -> np.ndarray:
        with self.device():
            return self.binary(background).cpu().numpy()

    def host(self) -> np.ndarray:
        return self.array.detach().cpu().numpy()

    def gray(self):
        torch, x = self.torch, self.array.detach()
        if x.dtype not in (torch.uint8, getattr(torch, "uint16", torch.uint8)):
            raise ValueError(f"a page of dtype {x.dtype}; expected uint8 or uint16 gray levels")
        if x.dtype != torch.uint8:
            x = torch.div(x.to(torch.int32) + 128, 257, rounding_mode="floor").to(torch.uint8)
        if x.dim() == 3 and x.shape[2] in (1, 3, 4):
            if x.shape[2] == 1:
                x = x[:, :, 0]
            else:
                rgb = x[:, :, :3].to(torch.int32)
                x = ((4899 * rgb[..., 0] + 9617 * rgb[..., 1] + 1868 * rgb[..., 2] + 8192) >> 14).to(torch.uint8)
        elif x.dim() != 2:
            raise ValueError(f"a page of shape {tuple(x.shape)}; expected (H, W) gray, or (H, W, 3) / (H, W, 4) RGB / RGBA")
        return x.contiguous()

    def empty_ink(self, shape):
        return self.torch.empty(tuple(shape), dtype=self.torch.bool, device=self.array.device)



class _InterfaceArray:
    """Another object with ``__cuda_array_interface__``: uint8 or bool in C order only, labeled
    into a CuPy array (CuPy is needed to allocate it)."""

    def __init__(self, array, interface):
        self.array, self.interface = array, interface
        shape = tuple(interface["shape"])
        typestr = interface["typestr"]
        if typestr not in ("|u1", "|b1"):
            raise ValueError(
                f"a CUDA array of typestr {typestr!r}: arrays other than CuPy arrays and PyTorch tensors are "
                "accepted as uint8 ('|u1') or bool ('|b1') only; convert it, e.g. with cupy.asarray(x) != 0"
            )
        strides = interface.get("strides")
        if strides is not None and tuple(strides) != _c_strides(shape, 1):
            raise ValueError(
                "a CUDA array that is not C-contiguous: arrays other than CuPy arrays and PyTorch tensors must "
                "be dense in C order; copy it, e.g. with cupy.ascontiguousarray(cupy.asarray(x))"
            )
        self.shape = shape

    def _cupy(self):
        try:
            import cupy
        except ImportError:
            raise ValueError(
                "the labels of a CUDA array that is neither a CuPy array nor a PyTorch tensor are returned as a "
                "CuPy array, and CuPy is not installed: install it, or pass a CuPy array or a PyTorch tensor"
            ) from None
        return cupy

    def device(self):
        if len(self.shape) in (2, 3) and 0 not in self.shape:
            return self._cupy().cuda.Device(_ccl._cuda_device_of(self.interface["data"][0]))
        return contextlib.nullcontext()

    def binary(self, background=None):
        _check_ndim(len(self.shape))
        dtype = np.uint8 if self.interface["typestr"] == "|u1" else np.bool_
        if _background_value(dtype, background) is None:
            return self.array
        cupy = self._cupy()
        return _foreground(cupy.asarray(self.array), background, cupy)

    def empty_labels(self, shape):
        cupy = self._cupy()
        labels = cupy.empty(shape, dtype=cupy.uint32)
        # ccl waits for the input's stream only: the memory may have been in use on CuPy's.
        cupy.cuda.get_current_stream().synchronize()
        return labels

    def empty_opencv(self, n: int, ndim: int):
        return _cupy_opencv(self._cupy(), n, ndim)

    def stream(self):
        return self.interface.get("stream")  # None: nothing to wait for (interface v3)


    def values(self):
        _check_ndim(len(self.shape))
        return self.array

    def values_dtype(self, values):
        return np.dtype(np.uint8)

    def host_values(self) -> np.ndarray:
        return self.host_binary()  # refused: ccl cannot copy it

    def host_binary(self, background=None) -> np.ndarray:
        raise ValueError(
            "a CUDA array that is neither a CuPy array nor a PyTorch tensor cannot be copied to the host by "
            "ccl: label it on its CUDA device (device=None or 'cuda:N'), or pass a NumPy array"
        )

    def host(self) -> np.ndarray:
        raise ValueError(
            "a CUDA array that is neither a CuPy array nor a PyTorch tensor cannot be copied to the host by "
            "ccl: binarize it on its CUDA device (device=None or 'cuda:N'), or pass a NumPy array"
        )

    def gray(self):
        if self.interface["typestr"] != "|u1" or len(self.shape) != 2:
            raise ValueError(
                "a page in CUDA memory other than a CuPy array or a PyTorch tensor must be uint8 of shape (H, W) "
                f"(typestr {self.interface['typestr']!r}, shape {self.shape})"
            )
        return self.array

    def empty_ink(self, shape):
        cupy = self._cupy()
        ink = cupy.empty(shape, dtype=cupy.bool_)
        cupy.cuda.get_current_stream().synchronize()  # as empty_labels
        return ink


def _gpu_array(image):
    """The adapter of an array in CUDA memory, or None for anything else (NumPy's path)."""
    module = type(image).__module__ or ""
    if module.startswith("cupy") and hasattr(type(image), "__cuda_array_interface__"):
        return _CupyArray(image)
    if module.startswith("torch"):
        return _TorchArray(image) if getattr(image, "is_cuda", False) else None
    try:
        interface = image.__cuda_array_interface__
    except AttributeError:
        return None
    return _InterfaceArray(image, interface)


def _interface_of(array) -> tuple[int, tuple]:
    """The device address and shape of an array with ``__cuda_array_interface__``."""
    interface = array.__cuda_array_interface__
    return interface["data"][0], tuple(interface["shape"])


def _on_host(device) -> bool:
    """Whether ``device`` names a device other than a CUDA one (a GPU array goes through the host)."""
    return device is not None and str(device).strip().lower().partition(":")[0] != "cuda"


def _cuda_device(device, ordinal: int) -> str:
    """``cuda:N`` for an array on CUDA device ``ordinal``; an explicit ``device`` must name it."""
    if device is None:
        return f"cuda:{ordinal}"
    index = str(device).strip().lower().partition(":")[2]
    try:
        wanted = int(index) if index else 0
    except ValueError:
        raise ValueError(f"unknown device '{device}': expected cpu, opencl:N or cuda:N") from None
    if wanted != ordinal:
        raise ValueError(
            f"the array is on cuda:{ordinal}, not on {device}: pass device='cuda:{ordinal}' (or None), or move "
            "the array"
        )
    return f"cuda:{wanted}"


def _output_error(output, shape, where: str) -> ValueError:
    return ValueError(
        f"output must be a C-contiguous uint32 or int32 array {where} of shape {tuple(shape)}; got "
        f"{type(output).__name__} of shape {tuple(getattr(output, 'shape', ()))}"
    )


def _host_output(output, shape):
    """``output`` (a NumPy uint32 or int32 array of ``shape``, C-contiguous, writeable) as the
    uint32 array the labels are written into."""
    if (
        not isinstance(output, np.ndarray)
        or output.dtype not in (np.uint32, np.int32)
        or output.shape != tuple(shape)
        or not output.flags.c_contiguous
        or not output.flags.writeable
    ):
        raise _output_error(output, shape, "in host memory (NumPy)")
    return output.view(np.uint32)


def _gpu_output(output, shape, ordinal: int):
    """``output`` checked as a CUDA array of 4-byte integers of ``shape``, C-contiguous, on CUDA
    device ``ordinal``; returns its device address."""
    interface = getattr(output, "__cuda_array_interface__", None)
    where = f"on cuda:{ordinal} (CuPy, PyTorch)"
    if interface is None or interface.get("typestr") not in ("<u4", "<i4"):
        raise _output_error(output, shape, where)
    out_shape, strides = tuple(interface["shape"]), interface.get("strides")
    if out_shape != tuple(shape) or (strides is not None and tuple(strides) != _c_strides(out_shape, 4)):
        raise _output_error(output, shape, where)
    address = interface["data"][0]
    if _ccl._cuda_device_of(address) != ordinal:
        raise _output_error(output, shape, where)
    return address


def _label_gpu(
    gpu,
    connectivity,
    algorithm,
    device,
    stats: bool,
    output=None,
    binarize=None,
    background=None,
    filters=(None, None),
    multilabel=False,
):
    """Labels an array in CUDA memory on its device, into ``output`` when given; returns
    (labels, N, and with ``stats`` OpenCV's stats and centroids, built on the device). With
    ``binarize`` (native binarization arguments) the array is a gray page, binarized there and
    its ink labeled; else its elements other than ``background`` are (with ``multilabel``, its
    connected sets of equal values). ``filters``: the (min_size, keep_largest) applied there.
    Runs with the array's device current."""
    values = None
    if multilabel:
        binary = gpu.values()
        values = _multilabel_args(gpu.values_dtype(binary), background)
    else:
        binary = gpu.binary(background) if binarize is None else gpu.gray()
    image_at, shape = _interface_of(binary)
    if 0 in shape:
        raise ValueError(f"invalid input: the image is empty (shape {shape})")
    conn = _connectivity(len(shape), connectivity)
    ordinal = _ccl._cuda_device_of(image_at)
    device = _cuda_device(device, ordinal)
    if output is None:
        labels = gpu.empty_labels(shape)
        labels_at, _ = _interface_of(labels)
    else:
        labels, labels_at = output, _gpu_output(output, shape, ordinal)
    tables = []

    def allocate(n: int):
        """OpenCV's tables for n components, made by the array's library on its device."""
        tables.append(gpu.empty_opencv(n, len(shape)))
        return tuple(_interface_of(table)[0] for table in tables[-1])

    num = _ccl._label_cuda(
        image_at,
        labels_at,
        list(shape),
        gpu.stream(),
        conn,
        algorithm,
        device,
        allocate if stats else None,
        binarize,
        *filters,
        values,
    )
    return labels, num, tables[-1] if stats else None


_BINARIZE_KEYS = ("method", "window", "k", "r", "formula", "kernel")


def _binarize_args(binarize) -> tuple:
    """``binarize`` (a method name, or a dict of :func:`binarize`'s keyword arguments) as the
    native calls take it: (method, window, k, r, formula, kernel)."""
    if isinstance(binarize, str):
        binarize = {"method": binarize}
    if not isinstance(binarize, dict):
        raise TypeError(f"binarize={binarize!r}: a method name (e.g. 'nick') or a dict of ccl.binarize's arguments")
    unknown = sorted(set(binarize) - set(_BINARIZE_KEYS))
    if unknown:
        raise TypeError(f"binarize: unknown arguments {unknown} (it takes {', '.join(_BINARIZE_KEYS)})")
    window, k, r = (binarize.get(key) for key in ("window", "k", "r"))
    return (
        str(binarize.get("method", "nick")),
        None if window is None else operator.index(window),
        None if k is None else float(k),
        None if r is None else float(r),
        binarize.get("formula"),
        binarize.get("kernel"),
    )


def _label_host(array, shape, connectivity, algorithm, device, stats: bool, output, args, filters, values=None):
    """The native host call on ``array`` (prepared as ``_ccl._label`` takes it) whose labels have
    ``shape``: into ``output`` when given; returns (labels, N, and with ``stats`` OpenCV's tables)."""
    conn = _connectivity(len(shape), connectivity)
    target = None if output is None else _host_output(output, shape)
    labels, num, table = _ccl._label(array, conn, algorithm, device, stats, target, args, *filters, values)
    return (labels if output is None else output), num, table if stats else None


def _label_any(
    image, connectivity, algorithm, device, stats: bool, output=None, binarize=None, background=None, filters=(None, None)
):
    """Labels ``image`` (NumPy, or in CUDA memory) as :func:`label` says; returns (labels, N,
    and with ``stats`` OpenCV's ``stats`` and ``centroids``)."""
    gpu = _gpu_array(image)
    if binarize is not None:
        if background is not None:
            raise ValueError("background applies to images labeled as they are, not with binarize (its ink is labeled)")
        args = _binarize_args(binarize)
        if gpu is not None and not _on_host(device):
            with gpu.device():
                return _label_gpu(gpu, connectivity, algorithm, device, stats, output, args, None, filters)
        page = _gray(image if gpu is None else gpu.host())
        return _label_host(page, page.shape, connectivity, algorithm, device, stats, output, args, filters)
    if gpu is not None and not _on_host(device):
        with gpu.device():
            labels, num, table = _label_gpu(
                gpu, connectivity, algorithm, device, stats, output, None, background, filters
            )
            tables = table if stats else None
        return labels, num, tables
    array = _binary(image, background) if gpu is None else gpu.host_binary(background)
    _check_ndim(array.ndim)
    return _label_host(array, array.shape, connectivity, algorithm, device, stats, output, None, filters)


def _label_values(image, connectivity, algorithm, device, stats: bool, output, background, filters):
    """Labels the multi-label ``image`` (NumPy, or in CUDA memory): the connected sets of equal
    values, ``background`` excepted, with the fastest algorithm that can (TUF for images and at
    6, KE at 18 and 26) unless ``algorithm`` names another; returns as :func:`_label_any`."""
    gpu = _gpu_array(image)
    if gpu is not None and not _on_host(device):
        with gpu.device():
            labels, num, table = _label_gpu(
                gpu, connectivity, algorithm, device, stats, output, None, background, filters, multilabel=True
            )
        return labels, num, table if stats else None
    if gpu is not None:
        with gpu.device():
            image = gpu.host_values()
    raw, dtype = _host_values(image)
    values = _multilabel_args(dtype, background)
    shape = raw.shape[:-1]  # (the values' bytes are the last axis)
    return _label_host(raw, shape, connectivity, algorithm, device, stats, output, None, filters, values)


# --- Arrays past one device or 32-bit labels ----------------------------------------------------

#: Most elements 32-bit labels number (0 is background); larger arrays get 64-bit labels.
MAX_32BIT_ELEMENTS: int = _ccl.MAX_32BIT_ELEMENTS
#: Device bytes an element of a slab takes, at most: ``max_device_bytes`` over this (and over a
#: plane's elements) gives the planes a slab holds.
DEVICE_BYTES_PER_ELEMENT: int = _ccl.DEVICE_BYTES_PER_ELEMENT


#: The dtypes labels come in: 32-bit where they number every element, else 64-bit.
_LABEL_DTYPES = tuple(np.dtype(t) for t in (np.uint32, np.int32, np.uint64, np.int64))


def _label_dtype(dtype, size: int):
    """The labels' dtype: ``dtype`` (one of uint32, int32, uint64, int64), by default uint32
    where 32-bit labels number ``size`` elements, else uint64."""
    if dtype is None:
        return np.dtype(np.uint64 if size > MAX_32BIT_ELEMENTS else np.uint32)
    dtype = np.dtype(dtype)
    if dtype not in _LABEL_DTYPES:
        raise ValueError(f"labels of dtype {dtype}: uint32, int32, uint64 or int64")
    return dtype


def _filters(min_size, keep_largest) -> tuple:
    """``min_size`` and ``keep_largest`` checked (None, or a count of 0 or more), as the native
    calls take them."""

    def count(name, value):
        if value is None:
            return None
        if isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name}={value!r}: a number of elements or components, not a bool")
        try:
            value = operator.index(value)
        except TypeError:
            raise ValueError(f"{name}={value!r}: a whole number") from None
        if value < 0:
            raise ValueError(f"{name}={value}: 0 or more")
        return value

    return count("min_size", min_size), count("keep_largest", keep_largest)


def _with_dtype(labels, dtype, num: int):
    """``labels`` (uint32 from NumPy or CuPy, int32 from PyTorch, uint64 from slabs) as
    ``dtype``: a view for the other type of the same width (never a copy of gigabytes of
    labels), a cast (on the labels' device) from 32 to 64 bits."""
    if dtype is None:
        return labels
    if dtype == np.int32 and num > np.iinfo(np.int32).max:
        raise ValueError(f"{num} components do not fit labels of dtype int32: use uint32 or int64")
    if type(labels).__module__.startswith("torch"):
        import torch

        if dtype.kind == "u":
            raise ValueError(f"labels of a PyTorch tensor are int32 or int64 (PyTorch has no {dtype} arithmetic)")
        return labels if dtype == np.int32 else labels.to(torch.int64)
    if dtype.itemsize == labels.dtype.itemsize:
        return labels.view(dtype)
    return labels.astype(dtype)


def _wants_slabs(size: int, dtype, max_device_bytes) -> bool:
    """Whether a host array is labeled in slabs: a cap on device memory (the argument or
    ``CCL_MAX_DEVICE_BYTES``), 64-bit labels, or more elements than 32-bit labels number."""
    capped = max_device_bytes is not None or os.environ.get("CCL_MAX_DEVICE_BYTES", "").strip() != ""
    return capped or size > MAX_32BIT_ELEMENTS or (dtype is not None and np.dtype(dtype).itemsize == 8)


def _label_slabs(
    image, connectivity, algorithm, device, output, dtype, max_device_bytes, background=None, filters=(None, None)
):
    """:func:`label` of a host array in slabs along its first axis (``ccl::slabs``); returns the
    labels and N."""
    array = _binary(image, background)
    conn = _connectivity(array.ndim, connectivity)
    if output is not None and dtype is None and isinstance(output, np.ndarray):
        dtype = output.dtype if output.dtype in _LABEL_DTYPES else None
    dtype = _label_dtype(dtype, array.size)
    if max_device_bytes is not None and (int(max_device_bytes) != max_device_bytes or max_device_bytes <= 0):
        raise ValueError(f"max_device_bytes={max_device_bytes!r}: a positive number of bytes")
    cap = None if max_device_bytes is None else int(max_device_bytes)
    bits = dtype.itemsize * 8
    if output is not None and (
        not isinstance(output, np.ndarray)
        or output.shape != array.shape
        or output.dtype != dtype
        or not output.flags.c_contiguous
        or not output.flags.writeable
    ):
        raise ValueError(
            f"output must be a C-contiguous, writeable NumPy {dtype} array of shape {array.shape} for labels in "
            f"slabs; got {type(output).__name__} {getattr(output, 'dtype', '')} of shape "
            f"{tuple(getattr(output, 'shape', ()))}"
        )
    # The labels go straight into the output (as unsigned integers of its width), but for int32,
    # whose count is known only after: its output is written once the labels fit it.
    target = None if output is None or dtype == np.int32 else output.view(np.dtype(f"u{dtype.itemsize}"))
    labels, num, _ = _ccl._label_slabs(array, conn, algorithm, device, cap, bits, 0, *filters, target)
    if target is not None:
        return output, num
    labels = _with_dtype(labels, dtype, num)
    if output is not None:
        output[...] = labels
        labels = output
    return labels, num


#: Elements a slab of a GPU array holds at most: an array in CUDA memory of more elements is
#: labeled in slabs (tests lower it, to label small arrays so).
_GPU_SLAB_ELEMENTS: int = MAX_32BIT_ELEMENTS


def _label_gpu_slabs(gpu, connectivity, algorithm, device, output, dtype, background=None, filters=(None, None), base=0):
    """:func:`label` of an array in CUDA memory of more than ``_GPU_SLAB_ELEMENTS`` elements (past
    32-bit labels): in slabs along its first axis on its device (:mod:`ccl._slabs`), the same
    labels as labeling it whole; 64-bit by default (int64 for a PyTorch tensor). CuPy makes the
    buffers and gathers (a tensor's memory is used in place, its labels come back as a tensor).
    ``base`` (tests) is added to every label. Returns the labels and N."""
    try:
        import cupy
    except ImportError:
        raise ValueError(
            "an array in CUDA memory of more than 2^32 - 1 elements is labeled in slabs, with CuPy: install cupy"
        ) from None
    from . import _slabs

    torch = isinstance(gpu, _TorchArray)
    with gpu.device():
        binary = cupy.asarray(gpu.binary(background))  # (a tensor's memory, not a copy)
        if binary.size == 0:
            raise ValueError(f"invalid input: the image is empty (shape {binary.shape})")
        out = None if output is None else cupy.asarray(output)
        if dtype is None and out is not None and out.dtype in _LABEL_DTYPES:
            dtype = out.dtype
        if dtype is None and torch:
            dtype = np.int64 if binary.size + base > MAX_32BIT_ELEMENTS else np.int32
        dtype = _label_dtype(dtype, binary.size + base)
        if torch and dtype.kind == "u":
            raise ValueError(f"labels of a PyTorch tensor are int32 or int64 (PyTorch has no {dtype} arithmetic)")
        ordinal = binary.device.id
        if out is not None and (
            out.shape != binary.shape or out.dtype != dtype or not out.flags.c_contiguous or out.device.id != ordinal
        ):
            raise ValueError(
                f"output must be a C-contiguous {dtype} array on cuda:{ordinal} of shape {binary.shape} for labels "
                f"in slabs; got {type(output).__name__} {getattr(output, 'dtype', '')} of shape "
                f"{tuple(getattr(output, 'shape', ()))}"
            )
        name = _cuda_device(device, ordinal)
        conn = _connectivity(binary.ndim, connectivity)
        stream = gpu.stream()

        def label_slab(slab, labels) -> int:
            slab_at, shape = _interface_of(slab)
            return _ccl._label_cuda(slab_at, _interface_of(labels)[0], list(shape), stream, conn, algorithm, name)

        labels, num = _slabs.label(binary, conn, label_slab, cupy, dtype, _GPU_SLAB_ELEMENTS, out, filters, base)
        cupy.cuda.get_current_stream().synchronize()  # the labels are written when label returns
    if output is not None:
        return output, num
    return (gpu.torch.as_tensor(labels, device=gpu.array.device) if torch else labels), num


def _shape_of(image) -> tuple:
    """The shape of ``image`` (a NumPy, CuPy or PyTorch array, or a CUDA array interface)."""
    shape = getattr(image, "shape", None)
    if shape is None and hasattr(image, "__cuda_array_interface__"):
        shape = image.__cuda_array_interface__["shape"]
    return tuple(np.shape(image) if shape is None else shape)


def _ndim_of(image) -> int:
    """The dimensions of ``image`` (a NumPy, CuPy or PyTorch array, or a CUDA array interface)."""
    return len(_shape_of(image))


def label(
    image,
    connectivity=None,
    algorithm=None,
    device=None,
    return_num=False,
    output=None,
    binarize=None,
    dtype=None,
    max_device_bytes=None,
    background=None,
    min_size=None,
    keep_largest=None,
    structure=None,
    multilabel=False,
):
    """Label the connected components of a binary or multi-label image or volume.

    Parameters
    ----------
    image : array_like or CUDA array
        2D (H, W) image or 3D (D, H, W) volume; every element other than ``background``
        (nonzero by default) is foreground, all of it one class. Any integer, bool or
        float dtype, any memory layout. A CuPy array, a PyTorch CUDA tensor or another object
        with ``__cuda_array_interface__`` (uint8 or bool in C order) is labeled on its GPU.
    connectivity : int, optional
        4 or 8 for images (default 8), 6, 18 or 26 for volumes (default 26): pixels that share
        an edge (4, 6), also a corner (8) or, in 3D, an edge (18) or a corner (26). Also
        scikit-image's hops: 1 to ``ndim`` axes a step may cross (1 is 4 or 6, 2 is 8 or 18, 3
        is 26).
    algorithm : str, optional
        One of :func:`algorithms` (default ``"TUF"`` for images and 6-connected volumes, ``"KE"``
        for 18- and ``"BKE"`` for 26-connected volumes, the fastest measured); every algorithm
        gives the same labels.
    device : str, optional
        ``"cuda:0"``, ``"opencl:1"``, ``"cpu"`` (see :func:`devices`); by default CUDA, else an
        OpenCL GPU, else any OpenCL device, else the CPU reference. For a GPU array, by default
        the CUDA device that holds it (``"cuda:N"`` must name that one); an OpenCL or CPU
        device takes it through the host (binarized on its GPU, copied to NumPy).
    return_num : bool, optional
        Also return the number of components.
    output : ndarray or CUDA array, optional
        Where to write the labels (as ``scipy.ndimage.label``'s ``output``): a C-contiguous
        ``uint32`` or ``int32`` array of the image's shape, NumPy for a NumPy image, on the
        same GPU for a GPU array. It is returned as ``labels``. Reusing one output over many
        calls saves its allocation; one from :func:`host_array` is copied into by DMA.
    binarize : str or dict, optional
        Label the ink of a gray page: ``image`` is a page as :func:`binarize` takes it, and
        ``binarize`` its method (``"nick"``) or a dict of its keyword arguments (``{"method":
        "sauvola", "window": 31}``). The page is copied to the device once, binarized and
        labeled there, and only the labels come back (a page on a GPU is binarized and labeled
        on that GPU).
    dtype : {uint32, int32, uint64, int64}, optional
        The labels' type: uint32 by default (uint64 past 2^32 - 1 elements); int64 is
        scikit-image's. 64-bit labels of a NumPy image are made in slabs (exactly the same
        labels); on a GPU array the 32-bit labels are cast there, and a GPU array past 2^32 - 1
        elements is labeled in slabs on its device (with CuPy), into 64-bit labels there.
        PyTorch: int32 (the default) or int64 (the default past 2^32 - 1 elements).
    max_device_bytes : int, optional
        Label a NumPy image in slabs along its first axis that each fit this much device
        memory (also ``CCL_MAX_DEVICE_BYTES``): the same labels as labeling it whole.
    background : scalar, optional
        The value of background elements (scikit-image's ``background``; default 0): every
        other value is foreground. A value of the image's dtype; not with ``binarize``.
    min_size : int, optional
        Drop the components of fewer elements (cc3d's ``dust(threshold=min_size)``), on the
        device; the others are renumbered 1..N in the same order, and N counts them.
    keep_largest : int, optional
        Keep only the ``keep_largest`` largest components (cc3d's ``largest_k``; ties go to the
        lower label), after ``min_size``; renumbered 1..N in raster order.
    structure : array_like, optional
        SciPy's structuring element, instead of ``connectivity``: one of
        ``scipy.ndimage.generate_binary_structure(ndim, hops)`` (other shapes are refused).
    multilabel : bool, optional
        Label a multi-label image (classes, a segmentation: integer or bool values of 8 to 64
        bits), as cc3d and scikit-image do: the components are the connected sets of equal
        values, ``background`` excepted, so two classes that touch stay apart. By default (as
        SciPy) every value but the background is one foreground. Labeled on the device, whole
        (not with ``max_device_bytes``), by TUF and the pixel algorithms (by default TUF for
        images and 6-connected volumes, KE at 18 and 26; LE, OLE, UF, UF_IC, KE, KE_IC too; the
        block algorithms refuse).

    Returns
    -------
    labels : ndarray of uint32 (or as ``dtype`` says), or an array on the input's GPU
        The same shape as ``image``: 0 for background, components numbered 1..N in raster
        order of their first pixel (as ``scipy.ndimage.label`` and ``skimage.measure.label``).
        For a GPU array labeled on its device: a CuPy ``uint32`` array, or a PyTorch ``int32``
        tensor, on that device, written when ``label`` returns (usable on any stream).
    num : int
        The number of components N (only with ``return_num=True``).

    Raises
    ------
    ValueError
        A bad argument or input (dimensions, connectivity, algorithm, device name, a GPU array
        on another device than ``device``).
    RuntimeError
        A device or driver failure.

    Examples
    --------
    >>> import numpy as np, ccl
    >>> ccl.label(np.array([[1, 0, 1], [0, 0, 1]]), connectivity=4, device="cpu")
    array([[1, 0, 2],
           [0, 0, 2]], dtype=uint32)

    On a GPU, without a copy through the host (CuPy in, CuPy out)::

        import cupy
        labels, n = ccl.label(cupy.random.random((4096, 4096)) < 0.5, return_num=True)
    """
    if dtype is not None:
        dtype = _label_dtype(dtype, 0)
    filters = _filters(min_size, keep_largest)
    connectivity = _structure_connectivity(structure, 2 if binarize is not None else _ndim_of(image), connectivity)
    on_host = _gpu_array(image) is None
    if max_device_bytes is not None and (binarize is not None or not on_host or multilabel):
        raise ValueError("max_device_bytes applies to binary host (NumPy) images without binarize")
    if multilabel:
        if binarize is not None:
            raise ValueError("multilabel labels an image's values and binarize a gray page's ink: pass one")
        if output is not None and dtype is not None and dtype.itemsize != 4:
            raise ValueError(f"output is 32-bit, dtype {dtype} is not: leave one out")
        labels, num, _ = _label_values(image, connectivity, algorithm, device, False, output, background, filters)
        labels = labels if output is not None else _with_dtype(labels, dtype, num)
    elif binarize is None and on_host and _wants_slabs(int(np.prod(np.shape(image))), dtype, max_device_bytes):
        labels, num = _label_slabs(
            image, connectivity, algorithm, device, output, dtype, max_device_bytes, background, filters
        )
    elif binarize is None and not on_host and int(np.prod(_shape_of(image), dtype=np.int64)) > _GPU_SLAB_ELEMENTS:
        gpu = _gpu_array(image)
        if _on_host(device):  # through the host, in slabs there
            with gpu.device():
                host = gpu.host_binary(background)
            labels, num = _label_slabs(host, connectivity, algorithm, device, output, dtype, None, None, filters)
        else:
            labels, num = _label_gpu_slabs(gpu, connectivity, algorithm, device, output, dtype, background, filters)
    else:
        if output is not None and dtype is not None and dtype.itemsize != 4:
            raise ValueError(f"output is 32-bit, dtype {dtype} is not: leave one out")
        labels, num, _ = _label_any(
            image, connectivity, algorithm, device, False, output, binarize, background, filters
        )
        if output is None:
            labels = _with_dtype(labels, dtype, num)
    return (labels, num) if return_num else labels


def label_batch(images, connectivity=None, algorithm=None, device=None, output=None, stats=False):
    """Label a batch of binary images or volumes: each item as :func:`label` labels it.

    Parameters
    ----------
    images : array_like, CUDA array, or a sequence of them
        One array whose first axis is the batch: (N, H, W) images or (N, D, H, W) volumes (a 3D
        array is N images here, never a volume); or a list of images or volumes. NumPy, or CuPy
        / PyTorch CUDA arrays (labeled on their GPU, the whole batch staying there). Nonzero is
        foreground, any dtype :func:`label` takes.
    connectivity, algorithm, device
        As for :func:`label`, for every item.
    output : ndarray or CUDA array, optional
        For one batch array: where to write the labels, a C-contiguous ``uint32`` or ``int32``
        array of the batch's shape (NumPy for NumPy input, on the same GPU for a GPU array).
    stats : bool
        Also each item's statistics, as :func:`label_with_stats` returns them.

    Returns
    -------
    labels : ndarray of uint32 (or the GPU array kind), or a list of them
        The batch's shape, item ``i`` numbered 1..N_i as ``label(images[i])`` numbers it. A list
        in gives a list out.
    counts : ndarray of int64, shape (N,)
        N_i, the number of components of each item.
    stats, centroids : lists of N arrays, with ``stats=True`` only
        Item ``i``'s OpenCV tables, as ``label_with_stats(images[i])`` returns them (computed on
        the device; for a GPU batch, on its GPU, as the same kind of array).

    A NumPy batch is labeled by four labelers of the device at once, each taking the next item
    when free, so that one's copies overlap the others' kernels, without the GIL; the pixels
    go up straight from the array and the labels come straight back into ``labels`` (page-locked
    memory from the pool of returned label arrays, as :func:`label` returns). A GPU
    batch is labeled item by item on its device, nothing through the host.

    Examples
    --------
    >>> import numpy as np, ccl
    >>> labels, counts = ccl.label_batch(np.array([[[1, 0, 1]], [[1, 1, 0]]]), connectivity=4, device="cpu")
    >>> counts
    array([2, 1])
    """
    if isinstance(images, (list, tuple)):
        if stats:
            tables = [label_with_stats(item, connectivity, algorithm, device) for item in images]
            counts = np.array([t[0] - 1 for t in tables], dtype=np.int64)
            return [t[1] for t in tables], counts, [t[2] for t in tables], [t[3] for t in tables]
        pairs = [label(item, connectivity, algorithm, device, return_num=True) for item in images]
        return [p[0] for p in pairs], np.array([p[1] for p in pairs], dtype=np.int64)
    gpu = _gpu_array(images)
    if gpu is not None and not _on_host(device):
        return _label_batch_gpu(gpu, images, connectivity, algorithm, device, output, stats)
    array = np.asarray(images if gpu is None else gpu.host())
    if array.ndim not in (3, 4):
        raise ValueError(
            f"a batch has 3 dimensions (N, H, W) or 4 (N, D, H, W), not {array.ndim}; label one image with ccl.label"
        )
    _check_kind(array.dtype.kind, array.dtype)
    if array.dtype.itemsize == 1 and array.flags.c_contiguous:
        binary = array.view(np.uint8)
    else:
        binary = np.ascontiguousarray(array != 0).view(np.uint8)
    if 0 in array.shape[1:]:
        raise ValueError(f"invalid input: the items are empty (shape {array.shape})")
    conn = _connectivity(array.ndim - 1, connectivity)
    labels, counts, tables = _label_items(list(binary), array.shape[1:], conn, algorithm, device, output, stats)
    if stats:
        return labels, counts, [t[0] for t in tables], [t[1] for t in tables]
    return labels, counts


def label_iter(images, connectivity=None, algorithm=None, device=None, chunk=8):
    """Label a stream of images or volumes: an iterable in, an iterator of ``(labels, n)`` out,
    in order, each as ``label(image, return_num=True)`` returns it.

    The images are taken ``chunk`` at a time; while the caller works on the results of one
    chunk, the next one is labeled on a thread of its own (as :func:`label_batch`, with the GIL
    released), so reading the stream, the copies and the labeling overlap. At most two chunks
    are taken from ``images`` ahead of what was yielded, so memory stays bounded on an endless
    stream (video frames, a camera, a generator reading files). A chunk of NumPy arrays of one
    shape is labeled as one batch (four labelers of the device at once, each image copied up
    straight from its array, nothing stacked); other chunks (GPU arrays, mixed shapes) item by
    item.

    Parameters
    ----------
    images : iterable of array_like or CUDA arrays
        Images (H, W) or volumes (D, H, W), any dtype :func:`label` takes.
    connectivity, algorithm, device
        As for :func:`label`, for every item.
    chunk : int
        Images labeled together, at least 1.

    Examples
    --------
    >>> import numpy as np, ccl
    >>> frames = (np.eye(3, dtype=bool) for _ in range(2))
    >>> [n for _, n in ccl.label_iter(frames, connectivity=4, device="cpu")]
    [3, 3]
    """
    chunk = operator.index(chunk)
    if chunk < 1:
        raise ValueError(f"chunk of {chunk}; at least 1 image is labeled at a time")
    stream = iter(images)

    def labeled(items):
        arrays = [np.asarray(x) if _gpu_array(x) is None else None for x in items]
        batchable = all(a is not None and a.ndim in (2, 3) for a in arrays) and len({a.shape for a in arrays}) == 1
        if not batchable or len(items) == 1:
            return [label(x, connectivity, algorithm, device, return_num=True) for x in items]
        binaries = [_binary(a) for a in arrays]
        conn = _connectivity(binaries[0].ndim, connectivity)
        labels, counts, _ = _label_items(binaries, binaries[0].shape, conn, algorithm, device)
        return [(labels[i], int(counts[i])) for i in range(len(items))]

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ccl.label_iter") as worker:
        items = list(itertools.islice(stream, chunk))
        pending = worker.submit(labeled, items) if items else None
        while pending is not None:
            items = list(itertools.islice(stream, chunk))
            following = worker.submit(labeled, items) if items else None
            yield from pending.result()
            pending = following


def _label_items(binaries, item_shape, conn, algorithm, device, output=None, stats=False):
    """C-contiguous uint8 items of ``item_shape`` labeled as one batch by the native labelers,
    into ``output`` or new labels from :func:`_new_labels`; returns (labels, counts as int64,
    OpenCV's tables of each item when ``stats``)."""
    shape = (len(binaries),) + tuple(item_shape)
    labels = _new_labels(shape, device) if output is None else _host_output(output, shape)
    counts, tables = _ccl._label_batch(binaries, conn, algorithm, device, labels, bool(stats))
    return (labels if output is None else output), np.array(counts, dtype=np.int64), tables


def _new_labels(shape, device) -> np.ndarray:
    """A new uint32 array of ``shape`` to label into on ``device``: page-locked memory from the
    pool of returned label arrays where it serves (see :func:`label`), else ordinary memory."""
    pooled = _ccl._pooled_labels(int(np.prod(shape)), device)
    return np.empty(shape, np.uint32) if pooled is None else pooled.reshape(shape)


def _label_batch_gpu(gpu, images, connectivity, algorithm, device, output, stats=False):
    """A batch in CUDA memory labeled on its device (each item made binary as :func:`label`
    makes it), into ``output`` or a new array of the input's library: as one image where it can
    (:func:`_label_stacked`), else item by item; the counts come back to the host, the
    statistics (with ``stats``) stay on the GPU."""
    address, shape = _interface_of(images)
    if len(shape) not in (3, 4):
        raise ValueError(
            f"a batch has 3 dimensions (N, H, W) or 4 (N, D, H, W), not {len(shape)}; label one image with ccl.label"
        )
    with gpu.device():
        if output is None:
            labels = gpu.empty_labels(shape)
        else:
            _gpu_output(output, shape, _ccl._cuda_device_of(address))
            labels = output
        items = images
        if not stats and len(shape) == 3 and 0 not in shape:
            items = gpu.binary()  # (made once: the items below are its views, binary already)
            counts = _label_stacked(gpu, items, labels, connectivity, algorithm, device)
            if counts is not None:
                return labels, np.array(counts, dtype=np.int64)
        counts, tables = [], []
        for i in range(shape[0]):
            _, num, table = _label_gpu(_gpu_array(items[i]), connectivity, algorithm, device, stats, labels[i])
            counts.append(num)
            tables.append(table)
    if stats:
        return labels, np.array(counts, dtype=np.int64), [t[0] for t in tables], [t[1] for t in tables]
    return labels, np.array(counts, dtype=np.int64)


def _label_stacked(gpu, binary, labels, connectivity, algorithm, device):
    """``binary``, a GPU batch of images (N, H, W) made binary (``gpu.binary()``), labeled as one
    image of N * H rows whose items stay apart, one grid per pass (TUF, items of a multiple of 32
    rows): each item's labels 1..N_k as :func:`label` numbers them. Returns the N counts, or None
    where the batch cannot run so (nothing written). Runs with the array's device current, on
    ``gpu``'s stream."""
    image_at, shape = _interface_of(binary)
    conn = _connectivity(2, connectivity)
    device = _cuda_device(device, _ccl._cuda_device_of(image_at))
    labels_at, _ = _interface_of(labels)
    return _ccl._label_cuda_stacked(image_at, labels_at, list(shape), gpu.stream(), conn, algorithm, device)


def label_with_stats(
    image,
    connectivity=None,
    algorithm=None,
    device=None,
    output=None,
    binarize=None,
    background=None,
    min_size=None,
    keep_largest=None,
    structure=None,
    multilabel=False,
):
    """Label a binary image or volume and compute each component's statistics on the device.

    Returns what OpenCV's ``connectedComponentsWithStats`` returns, in its format: row 0 is the
    background, row k the component labeled k.

    Parameters
    ----------
    image, connectivity, algorithm, device, output, binarize, background, min_size, keep_largest, structure, multilabel
        As for :func:`label` (GPU arrays and gray pages included); with filters, the tables
        describe the components kept.

    Returns
    -------
    num_labels : int
        N + 1 (the components and the background).
    labels : ndarray of uint32, or an array on the input's GPU
        As :func:`label` returns them (for a GPU array: on its GPU, as the same kind of array).
    stats : ndarray of int64, shape (N + 1, 5) for an image, (N + 1, 7) for a volume
        Images: ``left, top, width, height, area`` (OpenCV's ``CC_STAT_*`` order). Volumes:
        ``left, top, front, width, height, depth, area``. Row 0 describes the background
        pixels (all zero when there are none). For a GPU array labeled on its device: an
        int64 array of its library on that GPU, built there by ccl's kernels (nothing goes
        through the host).
    centroids : ndarray of float64, shape (N + 1, 2) for an image, (N + 1, 3) for a volume
        Mean ``x, y`` (and ``z``) of each component's pixels; exact sums divided in float64.
        On the GPU for a GPU array, as ``stats``.
    """
    filters = _filters(min_size, keep_largest)
    connectivity = _structure_connectivity(structure, 2 if binarize is not None else _ndim_of(image), connectivity)
    if multilabel:
        if binarize is not None:
            raise ValueError("multilabel labels an image's values and binarize a gray page's ink: pass one")
        labels, num, (stats, centroids) = _label_values(
            image, connectivity, algorithm, device, True, output, background, filters
        )
    else:
        labels, num, (stats, centroids) = _label_any(
            image, connectivity, algorithm, device, True, output, binarize, background, filters
        )
    return num + 1, labels, stats, centroids


def _gray(image, xp=np):
    """``image`` as a C-contiguous uint8 gray page, converted as ``ccl binarize`` converts a
    ``.npy`` page: 16-bit samples to 8 bits (v / 257, rounded), then RGB(A) to gray as OpenCV's
    ``cvtColor(RGB2GRAY)``. ``xp``: NumPy, or CuPy for a page on its GPU (converted there)."""
    array = xp.asarray(image)
    if array.dtype == np.uint16:
        array = ((array.astype(np.uint32) + 128) // 257).astype(np.uint8)
    elif array.dtype != np.uint8:
        raise ValueError(
            f"a page of dtype {array.dtype}; expected uint8 or uint16 gray levels (for floats in [0, 1]: "
            "(page * 255).round().astype(np.uint8))"
        )
    if array.ndim == 3 and array.shape[2] in (1, 3, 4):
        if array.shape[2] == 1:
            array = array[:, :, 0]
        else:
            rgb = array[:, :, :3].astype(np.uint32)
            array = ((4899 * rgb[..., 0] + 9617 * rgb[..., 1] + 1868 * rgb[..., 2] + 8192) >> 14).astype(np.uint8)
    elif array.ndim != 2:
        raise ValueError(
            f"a page of shape {array.shape}; expected (H, W) gray, or (H, W, 3) / (H, W, 4) RGB / RGBA"
        )
    return xp.ascontiguousarray(array)


def _binarize_gpu(gpu, page, args, device):
    """Binarizes ``page`` (a C-contiguous uint8 (H, W) array in CUDA memory, made from ``gpu``'s
    array) on its device, into a bool array of ``gpu``'s library there. Runs with the array's
    device current."""
    page_at, shape = _interface_of(page)
    if 0 in shape:
        raise ValueError(f"invalid input: the page is empty (shape {shape})")
    ordinal = _ccl._cuda_device_of(page_at)
    device = _cuda_device(device, ordinal)
    ink = gpu.empty_ink(shape)
    _ccl._binarize_cuda(page_at, _interface_of(ink)[0], list(shape), gpu.stream(), args, device)
    return ink


def binarize(image, method="nick", window=None, k=None, r=None, formula=None, kernel=None, device=None):
    """Binarize a gray page with a local (or Otsu's global) threshold, on the device.

    The ink mask it returns is what :func:`label` takes: ``ccl.label(ccl.binarize(page))``
    labels the ink. Every device and kernel gives the same result, bit for bit, as ccl's CPU
    reference (window sums in integers, the decision in float64).

    Parameters
    ----------
    image : array_like, CuPy array or PyTorch CUDA tensor
        The page: (H, W) gray, or (H, W, 3) / (H, W, 4) RGB / RGBA, of uint8 or uint16 (16-bit
        samples become 8-bit as v / 257, rounded). Color becomes gray as OpenCV's
        ``cvtColor(..., COLOR_RGB2GRAY)``: ``(4899 R + 9617 G + 1868 B + 8192) >> 14``. A CuPy
        array or a PyTorch CUDA tensor is converted and binarized on its GPU (``device`` None
        or the ``"cuda:N"`` that holds it), nothing going through the host; with an OpenCL or
        CPU ``device`` it goes through the host.
    method : {"nick", "sauvola", "niblack", "wolf", "otsu"}, optional
        With S1, S2 the sums of p and p^2 over the window, NP its pixel count, m = S1 / NP and s
        the window's standard deviation: ``nick`` T = m + k sqrt((S2 - m^2) / NP) (Khurshid et
        al., the default); ``niblack`` T = m + k s; ``sauvola`` T = m (1 + k (s / r - 1));
        ``wolf`` T = m - k (1 - s / R) (m - M), M the page's darkest gray and R its largest
        window deviation; ``otsu`` one global threshold from the page's histogram.
    window : int, optional
        Side of the square window, 1 to 2048 (default: nick 45, the others 15). The window of
        (x, y) spans x - (W - 1) // 2 to x + W // 2 (an even window reaches one pixel further
        right and down, as Doxa's), clipped at the page's border, NP counting the pixels
        inside. Ignored by ``otsu``.
    k : float, optional
        The method's k (default: nick -0.1, niblack -0.2, sauvola and wolf 0.5).
    r : float, optional
        Sauvola's dynamic range of the deviation (default 128).
    formula : {"paper", "doxa", "opencv"}, optional
        Nick's threshold only: ``paper`` (default) as above, ``doxa`` T = m + k sqrt(S2 / NP)
        (Doxa, doxapy), ``opencv`` as OpenCV ximgproc's ``niBlackThreshold(...,
        BINARIZATION_NICK)`` (replicated border, T rounded to uint8, odd windows of 3 or more).
    kernel : {"fast", "global", "global-shared", "shared"}, optional
        How a GPU computes the window sums: ``fast`` (default, the same cost for any window),
        or one of the three kernels of Najafi et al. (ICPADS 2015), whose cost grows with the
        window's area. All give the same result.
    device : str, optional
        As for :func:`label` (``"cuda:0"``, ``"opencl:1"``, ``"cpu"``); the device needs double
        precision (not Intel Arc).

    Returns
    -------
    ink : ndarray of bool, shape (H, W)
        True where the pixel is ink (p <= T), False for the background. DIBCO's image
        convention (ink 0, background 255) is ``np.where(ink, 0, 255).astype(np.uint8)``. For
        a CuPy array or a PyTorch tensor: the same kind of array on its GPU (NumPy when
        ``device`` names an OpenCL device or the CPU, as for :func:`label`).

    Raises
    ------
    ValueError
        A bad argument (method, window, k, r, formula or kernel name, the page's dtype or
        shape, an empty page) or a device without double precision.
    RuntimeError
        A device or driver failure.

    Examples
    --------
    >>> import numpy as np, ccl
    >>> page = np.full((5, 6), 200, dtype=np.uint8); page[2, 1:5] = 40
    >>> ccl.binarize(page, window=3, device="cpu").astype(int)
    array([[0, 0, 0, 0, 0, 0],
           [0, 0, 0, 0, 0, 0],
           [0, 1, 1, 1, 1, 0],
           [0, 0, 0, 0, 0, 0],
           [0, 0, 0, 0, 0, 0]])
    >>> int(ccl.label(ccl.binarize(page, window=3, device="cpu"), device="cpu").max())
    1
    """
    args = _binarize_args({"method": method, "window": window, "k": k, "r": r, "formula": formula, "kernel": kernel})
    gpu = _gpu_array(image)
    if gpu is not None and not _on_host(device):
        with gpu.device():
            return _binarize_gpu(gpu, gpu.gray(), args, device)
    page = _gray(image if gpu is None else gpu.host())
    return _ccl._binarize(page, args, device).view(np.bool_)  # 0 / 1 bytes


def host_array(shape, dtype=np.uint8, device=None):
    """A zeroed NumPy array in host memory that ``device`` copies to and from at bus speed.

    Page-locked ("pinned") memory on a CUDA device, ordinary memory elsewhere. Labeling an image
    held in one, into an ``output`` held in another, copies both by DMA instead of through
    staging buffers: the fastest way to label many images from host memory. Allocating
    page-locked memory is slow (milliseconds per megabyte): make such arrays once and reuse
    them. The memory is freed with the last array (or view) that uses it.

    Parameters
    ----------
    shape : int or tuple of int
        The array's shape.
    dtype : data-type, optional
        Its element type (default ``uint8``; ``uint32`` or ``int32`` for labels).
    device : str, optional
        As for :func:`label`.
    """
    shape = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimensions in shape {shape}")
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    return _ccl._pinned(nbytes, device)[:nbytes].view(dtype).reshape(shape)


def devices():
    """The devices ``ccl`` can use, as ``(id, name, kind, backend)`` tuples.

    ``id`` is what the ``device`` arguments take (``"cuda:0"``, ``"opencl:1"``, ``"cpu"``);
    the CPU reference is always there.
    """
    return _ccl.devices()


def algorithms():
    """The labeling algorithms ``ccl`` knows (``"LE"``, ``"UF"``, ``"BKE_IC"``, ...)."""
    return _ccl.algorithms()


from ._regionprops import regionprops_table  # noqa: E402  (it uses the helpers above)
from ._values import component_values  # noqa: E402
