"""`tvm.nd.array` / `tvm.nd.empty` / `tvm.cpu()`: tir_mlir runs on numpy arrays, so an NDArray
is a numpy array (a subclass adding TVM's `.numpy()` and `.device`), 64-byte aligned as TVM's.
With `device=tvm.cuda(i)` they are arrays in GPU memory (`tir_mlir.runtime.cuda.DeviceArray`),
never host arrays: without a GPU that is an error."""

import html
from typing import TYPE_CHECKING, Union

import numpy as np

from tir_mlir.errors import RuntimeCallError
from tir_mlir.runtime import aligned

if TYPE_CHECKING:  # loaded only for a GPU array (_gpu)
    from tir_mlir.runtime.cuda import DeviceArray

_DEVICE_TYPES = {"cpu": 1, "cuda": 2}  # TVM's codes (kDLCPU, kDLCUDA)


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
    # numpy 2 has an ndarray.device property ("cpu"); TVM's NDArray.device is a Device
    device = Device()  # pyright: ignore[reportAssignmentType]

    def numpy(self) -> np.ndarray:
        return np.array(self)

    def copyfrom(self, source):
        self[...] = source
        return self

    def _repr_html_(self) -> str:
        """Shape, dtype, device and the values (numpy's summary of large arrays)."""
        head = f"{self.dtype}{list(self.shape)} on {self.device}"
        return f"<b>NDArray</b> {html.escape(head)}<pre>{html.escape(str(self.numpy()))}</pre>"


def _gpu(device, what: str):
    """The cuda runtime for an array on `device` (None for the host); the module is loaded
    only for a GPU array."""
    if device is None or getattr(device, "kind", "cpu") == "cpu":
        return None
    if getattr(device, "kind", None) != "cuda":
        raise RuntimeCallError(f"nd.{what}: unknown device {device!r}; expected cpu() or cuda()")
    if device.index != 0:
        raise RuntimeCallError(
            f"nd.{what}: only cuda(0), the current GPU, is supported; got {device!r}"
        )
    from tir_mlir.runtime import cuda as gpu

    return gpu


def array(arr, device=None) -> Union[NDArray, "DeviceArray"]:
    """A copy of `arr` (a numpy array, a list, a CPU tensor with `__dlpack__`) on `device`:
    a 64-byte-aligned host NDArray, or for `cuda(0)` a DeviceArray in GPU memory."""
    host = aligned.copy(np.from_dlpack(arr) if _is_host_tensor(arr) else np.asarray(arr))
    gpu = _gpu(device, "array")
    return host.view(NDArray) if gpu is None else gpu.array(host)


def empty(shape, dtype="float32", device=None) -> Union[NDArray, "DeviceArray"]:
    gpu = _gpu(device, "empty")
    if gpu is not None:
        return gpu.DeviceArray(shape, dtype)
    return aligned.zeros(shape, dtype).view(NDArray)


def _is_host_tensor(x) -> bool:
    return (
        not isinstance(x, np.ndarray)
        and hasattr(x, "__dlpack__")
        and hasattr(x, "__dlpack_device__")
        and int(x.__dlpack_device__()[0]) in (1, 3)
    )
