"""GPU connected-components labeling and component statistics.

``ccl`` labels the connected components of binary images (2D) and volumes (3D) on any GPU
(CUDA or OpenCL: NVIDIA, AMD, Intel) or on the CPU, with the algorithms of Allegretti et al.
(IPAS 2018, TPDS 2020). Kernels are compiled at run time, so no CUDA toolkit is needed.

NumPy in, NumPy out: any integer, bool or float array of 2 (H, W) or 3 (D, H, W) dimensions, in
any memory order (strided and Fortran-ordered arrays are copied into C order first); nonzero is
foreground. The device works with the GIL released.

Functions: :func:`label`, :func:`label_with_stats`, :func:`devices`, :func:`algorithms`.
"""

from __future__ import annotations

import numpy as np

from . import _ccl

__all__ = ["label", "label_with_stats", "devices", "algorithms"]

_DEFAULT_ALGORITHM = "UF"


def _binary(image) -> np.ndarray:
    """``image`` as a C-contiguous uint8 array of 0 and 1, checking its dimensions."""
    if hasattr(image, "__cuda_array_interface__") or hasattr(image, "__dlpack_device__"):
        device = getattr(image, "__dlpack_device__", lambda: (1, 0))()
        if device[0] != 1:  # not kDLCPU
            raise ValueError(
                "GPU arrays are not accepted yet: pass a NumPy array (e.g. cupy.asnumpy(x) or x.cpu().numpy())"
            )
    array = np.asarray(image)
    if array.ndim not in (2, 3):
        raise ValueError(f"image has {array.ndim} dimensions; an image has 2 (H, W), a volume 3 (D, H, W)")
    if array.dtype == np.uint8 and array.flags.c_contiguous:
        return array
    if array.dtype.kind not in "biuf":
        raise ValueError(f"image of dtype {array.dtype}; expected bool, integer or float values")
    return np.ascontiguousarray(array != 0, dtype=np.uint8)


def _connectivity(array: np.ndarray, connectivity) -> int:
    if connectivity is None:
        return 8 if array.ndim == 2 else 26
    connectivity = int(connectivity)
    allowed = (4, 8) if array.ndim == 2 else (6, 18, 26)
    if connectivity not in allowed:
        kind = "an image" if array.ndim == 2 else "a volume"
        raise ValueError(f"connectivity {connectivity} is not for {kind}; use one of {allowed}")
    return connectivity


def label(image, connectivity=None, algorithm=None, device=None, return_num=False):
    """Label the connected components of a binary image or volume.

    Parameters
    ----------
    image : array_like
        2D (H, W) image or 3D (D, H, W) volume; nonzero is foreground. Any integer, bool or
        float dtype, any memory layout.
    connectivity : int, optional
        4 or 8 for images (default 8), 6, 18 or 26 for volumes (default 26): pixels that share
        an edge (4, 6), also a corner (8) or, in 3D, an edge (18) or a corner (26).
    algorithm : str, optional
        One of :func:`algorithms` (default ``"UF"``); every algorithm gives the same labels.
    device : str, optional
        ``"cuda:0"``, ``"opencl:1"``, ``"cpu"`` (see :func:`devices`); by default CUDA, else an
        OpenCL GPU, else any OpenCL device, else the CPU reference.
    return_num : bool, optional
        Also return the number of components.

    Returns
    -------
    labels : ndarray of uint32
        The same shape as ``image``: 0 for background, components numbered 1..N in raster
        order of their first pixel (as ``scipy.ndimage.label`` and ``skimage.measure.label``).
    num : int
        The number of components N (only with ``return_num=True``).

    Raises
    ------
    ValueError
        A bad argument or input (dimensions, connectivity, algorithm, device name).
    RuntimeError
        A device or driver failure.

    Examples
    --------
    >>> import numpy as np, ccl
    >>> ccl.label(np.array([[1, 0, 1], [0, 0, 1]]), connectivity=4, device="cpu")
    array([[1, 0, 2],
           [0, 0, 2]], dtype=uint32)
    """
    array = _binary(image)
    conn = _connectivity(array, connectivity)
    labels, num, _ = _ccl._label(array, conn, algorithm or _DEFAULT_ALGORITHM, device, False)
    return (labels, num) if return_num else labels


def label_with_stats(image, connectivity=None, algorithm=None, device=None):
    """Label a binary image or volume and compute each component's statistics on the device.

    Returns what OpenCV's ``connectedComponentsWithStats`` returns, in its format: row 0 is the
    background, row k the component labeled k.

    Parameters
    ----------
    image, connectivity, algorithm, device
        As for :func:`label`.

    Returns
    -------
    num_labels : int
        N + 1 (the components and the background).
    labels : ndarray of uint32
        As :func:`label` returns them.
    stats : ndarray of int64, shape (N + 1, 5) for an image, (N + 1, 7) for a volume
        Images: ``left, top, width, height, area`` (OpenCV's ``CC_STAT_*`` order). Volumes:
        ``left, top, front, width, height, depth, area``. Row 0 describes the background
        pixels (all zero when there are none).
    centroids : ndarray of float64, shape (N + 1, 2) for an image, (N + 1, 3) for a volume
        Mean ``x, y`` (and ``z``) of each component's pixels; exact sums divided in float64.
    """
    array = _binary(image)
    conn = _connectivity(array, connectivity)
    labels, num, (ints, sums) = _ccl._label(array, conn, algorithm or _DEFAULT_ALGORITHM, device, True)
    ints = np.asarray(ints, dtype=np.int64).reshape(num, 7)
    sums = np.asarray(sums, dtype=np.uint64).reshape(num, 3)
    volume = array.ndim == 3
    # The background row: its area and coordinate sums are the whole array's less the
    # components'; only its bounding box needs the labels (one reduction per axis).
    shape_xyz = array.shape[::-1]
    total = int(np.prod(shape_xyz))
    bg_stats = np.zeros(7, dtype=np.int64)
    bg_sums = np.zeros(3, dtype=np.float64)
    bg_area = total - int(ints[:, 6].sum())
    if bg_area > 0:
        background = labels == 0
        for axis, size in enumerate(shape_xyz):
            others = tuple(a for a in range(array.ndim) if a != array.ndim - 1 - axis)
            present = np.flatnonzero(background.any(axis=others))
            bg_stats[axis] = present[0]
            bg_stats[3 + axis] = present[-1] - present[0] + 1
            per_line = total // size  # pixels with one value of this coordinate
            bg_sums[axis] = float(per_line * (size * (size - 1) // 2) - int(sums[:, axis].sum()))
        bg_stats[6] = bg_area
    table = np.vstack([bg_stats, ints])
    area = table[:, 6].astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        centroids = np.vstack([bg_sums, sums.astype(np.float64)]) / area[:, None]
    centroids[area == 0] = np.nan
    if volume:
        return num + 1, labels, table, centroids
    return num + 1, labels, table[:, [0, 1, 3, 4, 6]], centroids[:, :2]


def devices():
    """The devices ``ccl`` can use, as ``(id, name, kind, backend)`` tuples.

    ``id`` is what the ``device`` arguments take (``"cuda:0"``, ``"opencl:1"``, ``"cpu"``);
    the CPU reference is always there.
    """
    return _ccl.devices()


def algorithms():
    """The labeling algorithms ``ccl`` knows (``"LE"``, ``"UF"``, ``"BKE_IC"``, ...)."""
    return _ccl.algorithms()
