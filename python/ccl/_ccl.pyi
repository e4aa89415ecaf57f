from typing import Any, Callable, Optional

import numpy as np
import numpy.typing as npt

Table = tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]  # OpenCV's stats and centroids
# method, window, k, r, formula, kernel (None: the method's usual value)
BinarizeArgs = tuple[str, Optional[int], Optional[float], Optional[float], Optional[str], Optional[str]]

MAX_32BIT_ELEMENTS: int
DEVICE_BYTES_PER_ELEMENT: int

def _label(
    image: npt.NDArray[np.uint8],
    connectivity: int,
    algorithm: Optional[str],
    device: Optional[str],
    stats: bool,
    output: Optional[npt.NDArray[np.uint32]] = ...,
    binarize: Optional[BinarizeArgs] = ...,
    min_size: Optional[int] = ...,
    keep_largest: Optional[int] = ...,
    values: Optional[tuple[int, int]] = ...,
) -> tuple[npt.NDArray[np.uint32], int, Optional[Table]]: ...
def _label_batch(
    images: list[npt.NDArray[np.uint8]],
    connectivity: int,
    algorithm: Optional[str],
    device: Optional[str],
    output: npt.NDArray[np.uint32],
    stats: bool = ...,
) -> tuple[list[int], list[Table]]: ...
def _regionprops(
    labels: npt.NDArray[np.uint32],
    count: int,
    properties: list[str],
    spacing: Optional[list[float]] = ...,
    intensity: Optional[npt.NDArray[np.float32] | npt.NDArray[np.float64]] = ...,
    device: Optional[str] = ...,
) -> list[tuple[str, npt.NDArray[np.float64], bool]]: ...
def _regionprops_cuda(
    labels_ptr: int,
    shape: list[int],
    count: int,
    properties: list[str],
    stream: Optional[int],
    device: str,
    spacing: Optional[list[float]] = ...,
    intensity: Optional[tuple[int, bool]] = ...,
) -> list[tuple[str, npt.NDArray[np.float64], bool]]: ...
def _pool_usage() -> tuple[int, int, int]: ...
def _pooled_labels(count: int, device: Optional[str] = ...) -> Optional[npt.NDArray[np.uint32]]: ...
def _binarize(
    image: npt.NDArray[np.uint8], binarize: BinarizeArgs, device: Optional[str]
) -> npt.NDArray[np.uint8]: ...  # 1 = ink
def _label_cuda_stacked(
    image_ptr: int,
    labels_ptr: int,
    shape: list[int],
    stream: Optional[int],
    connectivity: int,
    algorithm: Optional[str],
    device: str,
) -> Optional[list[int]]: ...
def _label_slabs(
    image: npt.NDArray[np.uint8],
    connectivity: int,
    algorithm: Optional[str],
    device: Optional[str],
    max_device_bytes: Optional[int],
    bits: int,
    base: int = ...,
    min_size: Optional[int] = ...,
    keep_largest: Optional[int] = ...,
) -> tuple[npt.NDArray[Any], int, int]: ...
def _merge_labels(
    labels: int, a: npt.NDArray[np.uint64], b: npt.NDArray[np.uint64], base: int = ...
) -> tuple[npt.NDArray[np.uint64], int]: ...
def _boundary_pairs(
    a: npt.NDArray[np.uint32], b: npt.NDArray[np.uint32], budget: int
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]: ...
def _relabel_chunk(
    labels: npt.NDArray[np.uint32], table: npt.NDArray[np.uint64], start: int, bits: int
) -> npt.NDArray[Any]: ...
def _label_cuda(
    image_ptr: int,
    labels_ptr: int,
    shape: list[int],
    stream: Optional[int],
    connectivity: int,
    algorithm: Optional[str],
    device: str,
    stats_alloc: Optional[Callable[[int], tuple[int, int]]] = ...,
    binarize: Optional[BinarizeArgs] = ...,
    min_size: Optional[int] = ...,
    keep_largest: Optional[int] = ...,
    values: Optional[tuple[int, int]] = ...,
) -> int: ...
def _binarize_cuda(
    image_ptr: int, ink_ptr: int, shape: list[int], stream: Optional[int], binarize: BinarizeArgs, device: str
) -> None: ...
def _cuda_device_of(address: int) -> int: ...
def _pinned(nbytes: int, device: Optional[str] = ...) -> npt.NDArray[np.uint8]: ...
def devices() -> list[tuple[str, str, str, str]]: ...
def algorithms() -> list[str]: ...
