"""`tvm.nd.array` / `tvm.nd.empty` / `tvm.cpu()`: tir_mlir runs on numpy arrays, so an NDArray
is a numpy array (a subclass adding TVM's `.numpy()` and `.device`), 64-byte aligned as TVM's."""
import numpy as np

from tir_mlir.runtime import aligned


_DEVICE_TYPES = {"cpu": 1, "cuda": 2}      # TVM's codes (kDLCPU, kDLCUDA)


class Device:
    """TVM's Device: `kind` ("cpu", "cuda") and `index`; `device_type` is TVM's code (1, 2)."""

    def __init__(self, kind="cpu", index=0):
        self.kind, self.index = kind, index

    @property
    def device_type(self) -> int:
        return _DEVICE_TYPES[self.kind]

    @property
    def device_id(self) -> int:
        return self.index

    def sync(self):
        """Calls return when their work is done: nothing to wait for."""

    def __eq__(self, other):
        return isinstance(other, Device) and (self.kind, self.index) == (other.kind, other.index)

    def __hash__(self):
        return hash((self.kind, self.index))

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
