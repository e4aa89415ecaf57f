"""scikit-image's ``regionprops_table`` on the device: :func:`regionprops_table`.

The sums every property is derived from (moments, Euler coefficients, perimeter classes,
intensity sums and bounds) are computed on the device, where the labels are; only they leave it,
and the properties are derived from them on the host with scikit-image's definitions (see
``ccl::regions`` in the Rust crate). NumPy labels go to the device and back as a table of NumPy
arrays; CuPy arrays and PyTorch CUDA tensors stay where they are, and the table comes back as
arrays of the same kind on the same device.
"""

from __future__ import annotations

import numpy as np

from . import _ccl

# Columns of integer values (scikit-image returns them as integers).
_INTEGER = np.int64


def _spacing(spacing, ndim: int):
    """``spacing`` as a list of ``ndim`` floats (a scalar applies to every axis), or None."""
    if spacing is None:
        return None
    values = np.broadcast_to(np.asarray(spacing, dtype=np.float64), (ndim,))
    return [float(v) for v in values]


def _properties(properties) -> list:
    if isinstance(properties, str):
        raise ValueError(f"properties must be a sequence of names, not the string {properties!r}")
    return [str(p) for p in properties]


def _check_labels(dtype, ndim: int) -> None:
    if ndim not in (2, 3):
        raise ValueError(f"a label image of {ndim} dimensions: 2 (H, W) or 3 (D, H, W) are supported")
    if np.dtype(dtype).kind not in "iu":
        raise TypeError(f"label image of dtype {dtype}: non-integer label images are ambiguous (as in scikit-image)")


def _consecutive(labels, xp, limit: int, signed: bool):
    """``labels`` (NumPy, CuPy or PyTorch) with negative values as background, numbered as they
    are where their largest is below ``limit`` and at most their size (gaps allowed: labels
    without pixels have no row), else mapped to 1..count in increasing order; returns (labels,
    count, values), values the original label of each of 1..count where they were mapped (else
    None)."""
    size = int(np.prod(tuple(labels.shape)))
    if signed and size and int(labels.min()) < 0:
        labels = xp.where(labels > 0, labels, 0)
    top = int(labels.max()) if size else 0
    if top < limit and top <= size:
        return labels, top, None
    values, inverse = xp.unique(labels, return_inverse=True)
    inverse = inverse.reshape(labels.shape)
    if int(values[0]) == 0:
        return inverse, len(values) - 1, values[1:]
    return inverse + 1, len(values), values


def _table(columns, values, separator: str, convert) -> dict:
    """The native call's columns as scikit-image's dict, each array through ``convert``;
    ``values``: the original labels of 1..count (NumPy), where they were mapped. The float
    columns go through ``convert`` as one array (one copy to a GPU, not one per column), each
    column a row of it; the integer ones likewise."""
    names = [name.replace("-", separator) for name, _, _ in columns]
    integer = [flag for _, _, flag in columns]
    arrays = []
    for name, column, flag in columns:
        if flag:
            column = column.astype(_INTEGER)
        if name == "label" and values is not None:
            column = np.asarray(values, dtype=_INTEGER)[column - 1]
        arrays.append(column)
    table = {}
    for kind in (True, False):
        picked = [i for i, flag in enumerate(integer) if flag == kind]
        if picked:
            stacked = convert(np.stack([arrays[i] for i in picked]))
            for row, i in enumerate(picked):
                table[names[i]] = stacked[row]
    return {name: table[name] for name in names}


def _check_intensity_shape(intensity, labels) -> None:
    """An intensity image must have the labels' shape: one channel."""
    if tuple(intensity.shape) != tuple(labels.shape):
        raise ValueError(
            f"intensity image of shape {tuple(intensity.shape)} for labels of shape {tuple(labels.shape)} "
            "(multichannel intensity images are not supported)"
        )


def _host_intensity(intensity_image, labels):
    if intensity_image is None:
        return None
    intensity = np.asarray(intensity_image)
    _check_intensity_shape(intensity, labels)
    if intensity.dtype not in (np.float32, np.float64):
        intensity = intensity.astype(np.float64)
    return np.ascontiguousarray(intensity)


def regionprops_table(
    label_image,
    intensity_image=None,
    properties=("label", "bbox"),
    *,
    spacing=None,
    separator: str = "-",
    device=None,
) -> dict:
    """Measure the labeled regions of an image or volume on the device, as scikit-image's
    ``skimage.measure.regionprops_table`` does.

    Parameters
    ----------
    label_image : ndarray of integers, (H, W) or (D, H, W)
        Labels: 0 (and negative values) is background, each other value one region (as
        :func:`label` returns them, or any label image: gaps and large values are fine). A CuPy
        array or PyTorch CUDA tensor is measured on its GPU.
    intensity_image : ndarray, optional
        Of the labels' shape (one channel), for the intensity properties; on the same device
        as a GPU ``label_image``. float32 stays float32 on the device; other types are summed
        as float64.
    properties : sequence of str
        scikit-image's names: ``label``, ``area``, ``num_pixels``, ``bbox``, ``area_bbox``,
        ``centroid``, ``centroid_local``, ``extent``, ``equivalent_diameter_area``,
        ``euler_number``, ``perimeter`` (2D), ``moments``, ``moments_central``,
        ``moments_normalized``, ``moments_hu`` (2D), ``inertia_tensor``,
        ``inertia_tensor_eigvals``, ``orientation`` (2D), ``eccentricity`` (2D),
        ``axis_major_length``, ``axis_minor_length``, ``intensity_mean``, ``intensity_min``,
        ``intensity_max``. Others (``solidity``, ``feret_diameter_max``, ...) are refused.
    spacing : float or sequence of floats, optional
        The pixel spacing along each axis (rows first), as scikit-image takes it.
    separator : str
        Between a property's name and its indices in the column names (``bbox-0``).
    device : str, optional
        As for :func:`label`.

    Returns
    -------
    dict of str to arrays
        One column per value, in the order of ``properties`` (``bbox-0`` ... ``bbox-3``), one
        row per region in increasing label order: NumPy arrays, or for a GPU ``label_image``
        arrays of its kind on its device. ``label``, ``bbox``, ``num_pixels`` and
        ``euler_number`` are int64, the others float64.

    Notes
    -----
    Values agree with scikit-image's to rounding (the Python tests compare every property on
    synthetic and real images: integers exactly, the others to a relative 1e-9 of each
    property's scale). Differences: a label image of a single region per value only (as
    scikit-image); intensity images of one channel only; the Euler number is taken at full
    connectivity (8 in 2D, 26 in 3D), as scikit-image's ``regionprops`` does.
    """
    from . import _gpu_array, _on_host

    properties = _properties(properties)
    gpu = _gpu_array(label_image)
    if gpu is not None and not _on_host(device):
        module = type(label_image).__module__ or ""
        if module.startswith("cupy"):
            return _regionprops_cupy(label_image, intensity_image, properties, spacing, separator, device)
        if module.startswith("torch"):
            return _regionprops_torch(label_image, intensity_image, properties, spacing, separator, device)
        raise ValueError(
            "regionprops_table takes CuPy arrays and PyTorch CUDA tensors in GPU memory; other CUDA arrays: "
            "wrap them with cupy.asarray first"
        )
    if gpu is not None:  # an explicit host device: through the host, NumPy back
        label_image = gpu.host()
        intensity_image = None if intensity_image is None else _gpu_array(intensity_image).host()
    labels = np.asarray(label_image)
    _check_labels(labels.dtype, labels.ndim)
    labels, count, values = _consecutive(labels, np, 2**32, labels.dtype.kind == "i")
    labels = np.ascontiguousarray(labels, dtype=np.uint32)
    intensity = _host_intensity(intensity_image, labels)
    columns = _ccl._regionprops(labels, count, properties, _spacing(spacing, labels.ndim), intensity, device)
    return _table(columns, values, separator, lambda a: a)


def _regionprops_cupy(label_image, intensity_image, properties, spacing, separator, device) -> dict:
    import cupy

    from . import _cuda_device, _interface_of

    _check_labels(label_image.dtype, label_image.ndim)
    with label_image.device:
        labels, count, values = _consecutive(label_image, cupy, 2**32, label_image.dtype.kind == "i")
        labels = cupy.ascontiguousarray(labels.astype(cupy.uint32))
        intensity = None
        if intensity_image is not None:
            if type(intensity_image).__module__.partition(".")[0] != "cupy":
                raise ValueError("the intensity image of a CuPy label image must be a CuPy array on its device")
            _check_intensity_shape(intensity_image, labels)
            wide = intensity_image.dtype != cupy.float32
            intensity = cupy.ascontiguousarray(intensity_image.astype(cupy.float64 if wide else cupy.float32))
        address, shape = _interface_of(labels)
        ordinal = _ccl._cuda_device_of(address)
        image = None if intensity is None else (_interface_of(intensity)[0], bool(wide))
        stream = cupy.cuda.get_current_stream().ptr or 1
        columns = _ccl._regionprops_cuda(
            address, list(shape), count, properties, stream, _cuda_device(device, ordinal),
            _spacing(spacing, len(shape)), image,
        )
        host_values = None if values is None else cupy.asnumpy(values)
        return _table(columns, host_values, separator, cupy.asarray)


def _regionprops_torch(label_image, intensity_image, properties, spacing, separator, device) -> dict:
    import torch

    from . import _cuda_device, _interface_of, _torch_numpy_dtype

    _check_labels(_torch_numpy_dtype(label_image), label_image.dim())
    x = label_image.detach()
    on = x.device
    # PyTorch has no uint32 arithmetic: int32 labels below 2^31, whose bits the device reads as
    # uint32.
    labels, count, values = _consecutive(x.to(torch.int64), torch, 2**31, True)
    labels = labels.to(torch.int32).contiguous()
    intensity, image = None, None
    if intensity_image is not None:
        if not getattr(intensity_image, "is_cuda", False) or intensity_image.device != on:
            raise ValueError(f"the intensity image of a tensor on {on} must be a CUDA tensor there")
        _check_intensity_shape(intensity_image, labels)
        wide = intensity_image.dtype != torch.float32
        intensity = intensity_image.detach().to(torch.float64 if wide else torch.float32).contiguous()
        image = (_interface_of(intensity)[0], bool(wide))
    address, shape = _interface_of(labels)
    ordinal = _ccl._cuda_device_of(address)
    stream = torch.cuda.current_stream(on).cuda_stream or 1
    columns = _ccl._regionprops_cuda(
        address, list(shape), count, properties, stream, _cuda_device(device, ordinal),
        _spacing(spacing, len(shape)), image,
    )
    host_values = None if values is None else values.cpu().numpy()
    return _table(columns, host_values, separator, lambda a: torch.from_numpy(a).to(on))
