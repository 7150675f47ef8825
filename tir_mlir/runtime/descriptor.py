"""Ranked memref descriptors for numpy arrays of any dtype (mlir.runtime's helper has no
float16/bfloat16), passed to `_mlir_ciface_` functions by pointer."""
import ctypes
import functools


@functools.lru_cache(maxsize=None)
def descriptor_type(rank: int):
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})


def descriptor(a):
    """Descriptor of a C-contiguous array; it must not outlive `a`."""
    d = descriptor_type(a.ndim)()
    ptr = a.ctypes.data
    d.allocated = d.aligned = ptr
    d.offset = 0
    if a.ndim:
        d.sizes[:] = list(a.shape)
        d.strides[:] = [s // a.itemsize for s in a.strides]
    return d
