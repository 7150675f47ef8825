"""Arrays whose data starts on a 64-byte boundary, as TVM's NDArray allocates them.

numpy aligns a large array to 16 bytes only (malloc's header sits before it), so every 64-byte
vector load of a row spans two cache lines: a register-tiled 1024 matmul runs ~1.4x slower on
such arrays. Kernels accept any array; these are the ones they run at full speed on."""

import numpy as np
from numpy.typing import DTypeLike

ALIGNMENT = 64


def empty(shape, dtype: DTypeLike = "float32", alignment: int = ALIGNMENT) -> np.ndarray:
    """An uninitialised C-contiguous array whose data address is a multiple of `alignment`."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + alignment, np.uint8)
    start = -raw.ctypes.data % alignment
    return raw[start : start + nbytes].view(dtype).reshape(shape)


def zeros(shape, dtype="float32", alignment: int = ALIGNMENT) -> np.ndarray:
    out = empty(shape, dtype, alignment)
    out[...] = 0
    return out


def copy(arr, alignment: int = ALIGNMENT) -> np.ndarray:
    """An aligned C-contiguous copy of `arr`."""
    arr = np.asarray(arr)
    out = empty(arr.shape, arr.dtype, alignment)
    out[...] = arr
    return out


def is_aligned(arr: np.ndarray, alignment: int = ALIGNMENT) -> bool:
    return arr.ctypes.data % alignment == 0
