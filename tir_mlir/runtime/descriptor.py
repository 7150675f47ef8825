"""Ranked memref descriptors for numpy arrays of any dtype (mlir.runtime's helper has no
float16/bfloat16), passed to `_mlir_ciface_` functions by pointer."""

import ctypes
import functools


@functools.lru_cache(maxsize=None)
def descriptor_type(rank: int):
    fields = [
        ("allocated", ctypes.c_void_p),
        ("aligned", ctypes.c_void_p),
        ("offset", ctypes.c_int64),
    ]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})


def descriptor(a):
    """Descriptor of a C-contiguous array; it must not outlive `a`."""
    return memref_descriptor(a.ctypes.data, a.shape, [s // a.itemsize for s in a.strides])


def memref_descriptor(ptr: int, shape, strides):
    """Descriptor of the buffer at address `ptr` (strides in elements)."""
    d = descriptor_type(len(shape))()
    d.allocated = d.aligned = ptr
    d.offset = 0
    if len(shape):
        d.sizes[:] = list(shape)
        d.strides[:] = list(strides)
    return d
