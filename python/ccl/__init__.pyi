from typing import Literal, Optional, Union, overload

import numpy as np
import numpy.typing as npt

Labels = npt.NDArray[np.uint32]

@overload
def label(
    image: npt.ArrayLike,
    connectivity: Optional[int] = ...,
    algorithm: Optional[str] = ...,
    device: Optional[str] = ...,
    return_num: Literal[False] = ...,
) -> Labels: ...
@overload
def label(
    image: npt.ArrayLike,
    connectivity: Optional[int] = ...,
    algorithm: Optional[str] = ...,
    device: Optional[str] = ...,
    return_num: Literal[True] = ...,
) -> tuple[Labels, int]: ...
def label_with_stats(
    image: npt.ArrayLike,
    connectivity: Optional[int] = ...,
    algorithm: Optional[str] = ...,
    device: Optional[str] = ...,
) -> tuple[int, Labels, npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def devices() -> list[tuple[str, str, str, str]]: ...
def algorithms() -> list[str]: ...
