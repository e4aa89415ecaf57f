from typing import Any, Iterable, Iterator, Literal, Optional, Protocol, overload

import numpy as np
import numpy.typing as npt

Labels = npt.NDArray[np.uint32]

MAX_32BIT_ELEMENTS: int
DEVICE_BYTES_PER_ELEMENT: int

class CudaArray(Protocol):
    """A CuPy array, a PyTorch CUDA tensor, or any object with ``__cuda_array_interface__``:
    labeled on its GPU, labels returned there (CuPy uint32, PyTorch int32)."""

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]: ...

@overload
def label(
    image: CudaArray,
    connectivity: Optional[int] = ...,
    algorithm: Optional[str] = ...,
    device: Optional[str] = ...,
    return_num: Literal[False] = ...,
    output: Optional[CudaArray] = ...,
    binarize: Optional[str | dict[str, Any]] = ...,
    dtype: Optional[npt.DTypeLike] = ...,
    background: Optional[Any] = ...,
    min_size: Optional[int] = ...,
    keep_largest: Optional[int] = ...,
    structure: Optional[npt.ArrayLike] = ...,
    multilabel: bool = ...,
) -> Any: ...
@overload
def label(
    image: CudaArray,
    connectivity: Optional[int] = ...,
    algorithm: Optional[str] = ...,
    device: Optional[str] = ...,
    *,
    return_num: Literal[True],
    output: Optional[CudaArray] = ...,
    binarize: Optional[str | dict[str, Any]] = ...,
    dtype: Optional[npt.DTypeLike] = ...,
    background: Optional[Any] = ...,
    min_size: Optional[int] = ...,
    keep_largest: Optional[int] = ...,
    structure: Optional[npt.ArrayLike] = ...,
    multilabel: bool = ...,
) -> tuple[Any, int]: ...
@overload
def label(
    image: npt.ArrayLike,
    connectivity: Optional[int] = ...,
    algorithm: Optional[str] = ...,
    device: Optional[str] = ...,
    return_num: Literal[False] = ...,
    output: Optional[npt.NDArray[Any]] = ...,
    binarize: Optional[str | dict[str, Any]] = ...,
    dtype: Optional[npt.DTypeLike] = ...,
    max_device_bytes: Optional[int] = ...,
    background: Optional[Any] = ...,
    min_size: Optional[int] = ...,
    keep_largest: Optional[int] = ...,
    structure: Optional[npt.ArrayLike] = ...,
    multilabel: bool = ...,
) -> npt.NDArray[Any]: ...
@overload
def label(
    image: npt.ArrayLike,
    connectivity: Optional[int] = ...,
    algorithm: Optional[str] = ...,
    device: Optional[str] = ...,
    *,
    return_num: Literal[True],
    output: Optional[npt.NDArray[Any]] = ...,
    binarize: Optional[str | dict[str, Any]] = ...,
    dtype: Optional[npt.DTypeLike] = ...,
    max_device_bytes: Optional[int] = ...,
    background: Optional[Any] = ...,
    min_size: Optional[int] = ...,
    keep_largest: Optional[int] = ...,
    structure: Optional[npt.ArrayLike] = ...,
    multilabel: bool = ...,
) -> tuple[npt.NDArray[Any], int]: ...
@overload
def label_batch(
    images: list[Any] | tuple[Any, ...],
    connectivity: Optional[int] = ...,
    algorithm: Optional[str] = ...,
    device: Optional[str] = ...,
    output: None = ...,
    stats: Literal[False] = ...,
) -> tuple[list[Any], npt.NDArray[np.int64]]: ...
@overload
def label_batch(
    images: CudaArray,
    connectivity: Optional[int] = ...,
    algorithm: Optional[str] = ...,
    device: Optional[str] = ...,
    output: Optional[CudaArray] = ...,
    stats: Literal[False] = ...,
) -> tuple[Any, npt.NDArray[np.int64]]: ...
@overload
def label_batch(
    images: npt.ArrayLike,
    connectivity: Optional[int] = ...,
    algorithm: Optional[str] = ...,
    device: Optional[str] = ...,
    output: Optional[npt.NDArray[Any]] = ...,
    stats: Literal[False] = ...,
) -> tuple[Labels, npt.NDArray[np.int64]]: ...
@overload
def label_batch(
    images: Any,
    connectivity: Optional[int] = ...,
    algorithm: Optional[str] = ...,
    device: Optional[str] = ...,
    output: Optional[Any] = ...,
    *,
    stats: Literal[True],
) -> tuple[Any, npt.NDArray[np.int64], list[Any], list[Any]]: ...
def label_iter(
    images: Iterable[Any],
    connectivity: Optional[int] = ...,
    algorithm: Optional[str] = ...,
    device: Optional[str] = ...,
    chunk: int = ...,
) -> Iterator[tuple[Any, int]]: ...
@overload
def label_with_stats(
    image: CudaArray,
    connectivity: Optional[int] = ...,
    algorithm: Optional[str] = ...,
    device: Optional[str] = ...,
    output: Optional[CudaArray] = ...,
    binarize: Optional[str | dict[str, Any]] = ...,
    background: Optional[Any] = ...,
    min_size: Optional[int] = ...,
    keep_largest: Optional[int] = ...,
    structure: Optional[npt.ArrayLike] = ...,
    multilabel: bool = ...,
) -> tuple[int, Any, Any, Any]: ...
@overload
def label_with_stats(
    image: npt.ArrayLike,
    connectivity: Optional[int] = ...,
    algorithm: Optional[str] = ...,
    device: Optional[str] = ...,
    output: Optional[npt.NDArray[Any]] = ...,
    binarize: Optional[str | dict[str, Any]] = ...,
    background: Optional[Any] = ...,
    min_size: Optional[int] = ...,
    keep_largest: Optional[int] = ...,
    structure: Optional[npt.ArrayLike] = ...,
    multilabel: bool = ...,
) -> tuple[int, Labels, npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def regionprops_table(
    label_image: npt.ArrayLike | CudaArray,
    intensity_image: Optional[npt.ArrayLike | CudaArray] = ...,
    properties: Iterable[str] = ...,
    *,
    spacing: Optional[float | Iterable[float]] = ...,
    separator: str = ...,
    device: Optional[str] = ...,
) -> dict[str, Any]: ...
Method = Literal["nick", "sauvola", "niblack", "wolf", "otsu"]
Formula = Literal["paper", "doxa", "opencv"]
Kernel = Literal["fast", "global", "global-shared", "shared"]

@overload
def binarize(
    image: CudaArray,
    method: Method = ...,
    window: Optional[int] = ...,
    k: Optional[float] = ...,
    r: Optional[float] = ...,
    formula: Optional[Formula] = ...,
    kernel: Optional[Kernel] = ...,
    device: Optional[str] = ...,
) -> Any: ...
@overload
def binarize(
    image: npt.ArrayLike,
    method: Method = ...,
    window: Optional[int] = ...,
    k: Optional[float] = ...,
    r: Optional[float] = ...,
    formula: Optional[Formula] = ...,
    kernel: Optional[Kernel] = ...,
    device: Optional[str] = ...,
) -> npt.NDArray[np.bool_]: ...
def host_array(
    shape: int | tuple[int, ...], dtype: npt.DTypeLike = ..., device: Optional[str] = ...
) -> npt.NDArray[Any]: ...
def devices() -> list[tuple[str, str, str, str]]: ...
def algorithms() -> list[str]: ...
