"""The functions `T.call_packed("name", ...)` calls, registered by name as in TVM:

    @tir_mlir.register_func("my.add_one")
    def add_one(a, b, n):          # buffers arrive as numpy arrays over the buffer's memory
        b[:] = a + n

Compiled code calls one dispatcher (passes/lowering/packed_calls.py) with the site's
description and its argument slots. An exception in the function, or a name nothing registered,
is raised by the compiled function's call once it returns (the rest of the kernel still runs;
TVM's returns at once).
"""

import ctypes
import threading
from typing import Callable, Optional

from tir_mlir.errors import RuntimeCallError
from tir_mlir.passes.lowering.packed_calls import ADDRESS, CALLBACK

_REGISTRY = {}
# What a packed function raised, for the call that ran it to raise (worker threads of a parallel
# loop call them too, so this is not thread-local).
_ERRORS = []
_LOCK = threading.Lock()


def register_func(func_name, f=None, override=False):
    """TVM's `tvm.register_func`: `register_func("name", f)` or `@register_func("name")`."""
    if callable(func_name):  # @register_func: named after the function
        return register_func(func_name.__name__, func_name, override)
    if not isinstance(func_name, str):
        raise TypeError("register_func: the name must be a string")

    def register(fn):
        if func_name in _REGISTRY and not override:
            raise ValueError(
                f"a function is already registered as {func_name!r} (override=True replaces it)"
            )
        _REGISTRY[func_name] = fn
        return fn

    return register if f is None else register(f)


def get_global_func(name, allow_missing=False) -> Optional[Callable]:
    fn = _REGISTRY.get(name)
    if fn is None and not allow_missing:
        raise ValueError(f"no function is registered as {name!r}")
    return fn


def _view(address: int, dtype: str, shape, strides):
    import numpy as np
    from tir_mlir.dtypes import numpy_dtype

    dt = numpy_dtype(dtype)
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
    raw = (ctypes.c_char * (span * dt.itemsize)).from_address(address)
    # a ctypes array exports the buffer protocol; numpy's stub does not list ctypes arrays
    return np.ndarray(
        shape,
        dt,
        buffer=raw,  # pyright: ignore[reportArgumentType]
        strides=[s * dt.itemsize for s in strides],
    )


def _scalar(bits: int, dtype: str):
    if dtype.startswith("float") or dtype == "bfloat16":
        return ctypes.c_double.from_buffer_copy(ctypes.c_int64(bits)).value
    if dtype == "bool":
        return bool(bits)
    return bits


@ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64))
def _dispatch(description, slots):
    try:
        name, *kinds = description.decode().split("|")
        fn = _REGISTRY.get(name)
        if fn is None:
            raise RuntimeCallError(
                f"T.call_packed: no function is registered as {name!r} (tir_mlir.register_func)"
            )
        args, k = [], 0
        for kind in kinds:
            if kind.startswith("B:"):
                dtype, rank = kind[2:].split(":")
                rank = int(rank)
                shape, strides = slots[k + 1 : k + 1 + rank], slots[k + 1 + rank : k + 1 + 2 * rank]
                args.append(_view(slots[k], dtype, shape, strides))
                k += 1 + 2 * rank
            else:
                args.append(_scalar(slots[k], kind))
                k += 1
        result = fn(*args)
        return int(result) if type(result) in (int, bool) else 0
    except BaseException as e:  # raised by the compiled function's call (checked)
        with _LOCK:
            _ERRORS.append(e)
        return -1


def attach(backend) -> bool:
    """Point the loaded code's callback at the dispatcher; False when it has no packed call."""
    getter = getattr(backend, "getter", None)
    address = getter(CALLBACK + ADDRESS) if getter else None
    if address is None:
        return False
    dispatch = ctypes.cast(_dispatch, ctypes.c_void_p).value
    assert dispatch is not None, "a ctypes callback has an address"
    ctypes.c_int64.from_address(address()).value = dispatch
    return True


def checked(call):
    """`call`, raising what a packed function raised during it."""

    def run():
        call()
        with _LOCK:
            errors = _ERRORS[:]
            _ERRORS.clear()
        if errors:
            raise errors[0]

    if hasattr(call, "repeat"):
        run.repeat = call.repeat
    run.keep = call
    return run
