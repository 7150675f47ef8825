"""`tvm.nd.array` / `tvm.nd.empty` / `tvm.cpu()`: tir_mlir runs on numpy arrays, so an NDArray
is a numpy array (a subclass adding TVM's `.numpy()` and `.device`), 64-byte aligned as TVM's."""
import numpy as np

from tir_mlir.runtime import aligned


class Device:
    def __init__(self, kind="cpu", index=0):
        self.kind, self.index = kind, index

    def __repr__(self):
        return f"{self.kind}({self.index})"


def cpu(index=0) -> Device:
    return Device("cpu", index)


def cuda(index=0) -> Device:
    return Device("cuda", index)


class NDArray(np.ndarray):
    device = Device()

    def numpy(self) -> np.ndarray:
        return np.array(self)

    def copyfrom(self, source):
        self[...] = source
        return self


def array(arr, device=None) -> NDArray:
    return aligned.copy(arr).view(NDArray)


def empty(shape, dtype="float32", device=None) -> NDArray:
    return aligned.zeros(shape, dtype).view(NDArray)
