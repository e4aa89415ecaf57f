from typing import Optional

import numpy as np
import numpy.typing as npt

def _label(
    image: npt.NDArray[np.uint8],
    connectivity: int,
    algorithm: str,
    device: Optional[str],
    stats: bool,
) -> tuple[npt.NDArray[np.uint32], int, Optional[tuple[list[int], list[int]]]]: ...
def devices() -> list[tuple[str, str, str, str]]: ...
def algorithms() -> list[str]: ...
