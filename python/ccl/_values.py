"""Each component's value in a multi-label image: what class (segment, atlas region) each label
of ``ccl.label(image, multilabel=True)`` came from, as one scatter of the image over its labels,
where the arrays lie (NumPy, CuPy, PyTorch)."""

from __future__ import annotations

import numpy as np


def _module_of(array) -> str:
    return type(array).__module__.partition(".")[0]


def component_values(labels, image, background=0):
    """The value of ``image`` that each component of ``labels`` holds.

    Parameters
    ----------
    labels : ndarray
        Labels of ``image`` (non-negative integers, 0 the background), such as
        ``ccl.label(image, multilabel=True)`` returns: every pixel of a component holds the same
        value of ``image``.
    image : ndarray
        The labeled image, of the labels' shape; NumPy, CuPy or PyTorch, as ``labels``.
    background : scalar, optional
        The value given to label 0 (the ``background`` of the labeling; default 0).

    Returns
    -------
    values : ndarray
        Of ``image``'s dtype and array kind, ``labels.max() + 1`` long: ``values[k]`` is the value
        of component ``k``'s pixels (``values[labels]`` is ``image`` on the foreground), and
        ``values[0]`` is ``background``. A label no pixel holds (after ``min_size`` or
        ``keep_largest``, which renumber, there is none) gets ``background`` too.

    Raises
    ------
    ValueError
        Arrays of different shapes or kinds, labels that are not integers, negative labels, or a
        component holding more than one value (labels of another image, or a binary labeling of
        a multi-label image).
    """
    if _module_of(labels) != _module_of(image):
        raise ValueError(f"labels ({type(labels).__name__}) and image ({type(image).__name__}) of different array kinds")
    if tuple(labels.shape) != tuple(image.shape):
        raise ValueError(f"labels of shape {tuple(labels.shape)} for an image of shape {tuple(image.shape)}")
    if _module_of(labels) == "torch":
        import torch

        if labels.dtype.is_floating_point or labels.dtype.is_complex or labels.dtype == torch.bool:
            raise ValueError(f"labels of dtype {labels.dtype}: integers are expected")
        flat, pixels = labels.reshape(-1).long(), image.reshape(-1)
        top = int(flat.max()) if flat.numel() else 0
        if flat.numel() and int(flat.min()) < 0:
            raise ValueError("negative labels")
        values = torch.full((top + 1,), background, dtype=image.dtype, device=image.device)
    else:
        xp = np
        if _module_of(labels) == "cupy":
            import cupy as xp
        if labels.dtype.kind not in "iu":
            raise ValueError(f"labels of dtype {labels.dtype}: integers are expected")
        flat, pixels = labels.reshape(-1), image.reshape(-1)
        top = int(flat.max()) if flat.size else 0
        if flat.size and labels.dtype.kind == "i" and int(flat.min()) < 0:
            raise ValueError("negative labels")
        values = xp.full(top + 1, background, dtype=image.dtype)
    foreground = flat != 0
    # Every pixel of a component holds its value: whichever write lands, it is that value.
    values[flat[foreground]] = pixels[foreground]
    if not bool((values[flat[foreground]] == pixels[foreground]).all()):
        raise ValueError("a component holds more than one value of the image (labels of another image?)")
    return values
