"""Zero-copy arguments from other frameworks through DLPack (`__dlpack__`, as torch and cupy
tensors have): a CUDA tensor is passed to a cuda module's function as the very device memory it
owns, no copy; see `cuda.CudaFunction`.

    t = torch.randn(1024, 1024, device="cuda")
    lib["f"](t, ...)                          # the kernel reads and writes t's memory

The capsule's DLManagedTensor is read with ctypes (the DLPack v0.x ABI every producer supports
through `__dlpack__()` with no arguments); its deleter runs when the view is dropped.
"""

import ctypes

import numpy as np

from tir_mlir.errors import RuntimeCallError

CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13
_CODES = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 6: "bool"}


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _Device),
        ("ndim", ctypes.c_int32),
        ("dtype", _DType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _Managed(ctypes.Structure):
    pass


_Managed._fields_ = [
    ("dl_tensor", _Tensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(_Managed))),
]

_api = ctypes.pythonapi
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]


def is_dlpack(x) -> bool:
    return (
        hasattr(x, "__dlpack__")
        and hasattr(x, "__dlpack_device__")
        and not isinstance(x, np.ndarray)
    )


def device_type(x) -> int:
    return int(x.__dlpack_device__()[0])


class Tensor:
    """The DLTensor behind an object's `__dlpack__()`: data address, shape, dtype; holds the
    capsule (and the object) until dropped, then calls the producer's deleter."""

    def __init__(self, obj):
        capsule = obj.__dlpack__()
        if not _api.PyCapsule_IsValid(capsule, b"dltensor"):
            raise RuntimeCallError("__dlpack__() did not return an unused 'dltensor' capsule")
        self._managed = ctypes.cast(
            _api.PyCapsule_GetPointer(capsule, b"dltensor"), ctypes.POINTER(_Managed)
        )
        _api.PyCapsule_SetName(capsule, b"used_dltensor")  # consumed: we call the deleter
        self._capsule, self._owner = capsule, obj
        t = self._managed.contents.dl_tensor
        self.device_type, self.device_id = t.device.device_type, t.device.device_id
        self.shape = tuple(t.shape[k] for k in range(t.ndim))
        self.dtype = _dtype(t.dtype)
        self.ptr = (t.data or 0) + t.byte_offset
        if t.strides:
            strides = tuple(t.strides[k] for k in range(t.ndim))
            expect = tuple(int(np.prod(self.shape[k + 1 :], dtype=np.int64)) for k in range(t.ndim))
            if any(s != e for s, e, n in zip(strides, expect, self.shape) if n > 1):
                self.close()
                raise RuntimeCallError(
                    f"a DLPack tensor with strides {strides} is not "
                    f"C-contiguous; pass a contiguous one (.contiguous())"
                )

    def close(self):
        managed, self._managed = self._managed, None
        if managed and managed.contents.deleter:
            managed.contents.deleter(managed)

    def __del__(self):
        self.close()


def _dtype(t) -> np.dtype:
    kind = _CODES.get(t.code)
    if kind is None or t.lanes != 1:
        raise RuntimeCallError(
            f"unsupported DLPack dtype (code {t.code}, {t.bits} bits, {t.lanes} lanes)"
        )
    if kind == "bool":
        return np.dtype(np.bool_)
    if kind == "bfloat":
        from tir_mlir.dtypes import numpy_dtype

        return numpy_dtype("bfloat16")
    return np.dtype(f"{kind}{t.bits}")


def host_arrays(fname: str, params, args) -> tuple:
    """`args` for a CPU function: numpy arrays as they are; a host-memory tensor of another
    framework (a torch CPU tensor, a JAX array; anything with `__dlpack__`) as the numpy
    view of its own memory (np.from_dlpack), so the call reads and writes it in place."""
    if all(isinstance(a, np.ndarray) or not is_dlpack(a) for a in args):
        return args
    out = []
    for k, a in enumerate(args):
        if isinstance(a, np.ndarray) or not is_dlpack(a):
            out.append(a)
            continue
        name = params[k].name if k < len(params) else str(k)
        if device_type(a) not in (CPU, CUDA_HOST):
            raise RuntimeCallError(
                f"{fname}: buffer {name!r} is a tensor in device memory "
                f"(DLPack device type {device_type(a)}); a CPU function "
                f"takes host memory: move it there first (torch: .cpu())"
            )
        try:
            out.append(np.from_dlpack(a))
        except (BufferError, TypeError, RuntimeError) as e:
            raise RuntimeCallError(
                f"{fname}: buffer {name!r}: its DLPack view cannot be taken ({e})"
            ) from None
    return tuple(out)
