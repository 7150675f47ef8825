"""Function signatures (buffer name, shape, dtype per parameter) read from a tir-level module,
and the check of numpy arguments against them."""
from dataclasses import asdict, dataclass

import numpy as np
from mlir import ir

from tir_mlir.dialect.buffers import arg_attrs
from tir_mlir.dialect.ops import str_attr
from tir_mlir.dtypes import dtype_of, numpy_dtype
from tir_mlir.errors import RuntimeCallError
from tir_mlir.passes.lowering.common import functions


@dataclass(frozen=True)
class Param:
    name: str
    shape: tuple
    dtype: str

    def to_json(self):
        return {**asdict(self), "shape": list(self.shape)}


def signatures(module: ir.Module) -> dict:
    """Function name -> [Param] for every function definition of a tir-level module."""
    out = {}
    for op in functions(module):
        name = str_attr(op.attributes, "sym_name")
        ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        params = []
        for pos, (t, d) in enumerate(zip(ftype.inputs, arg_attrs(op))):
            if not isinstance(t, ir.MemRefType):
                raise RuntimeCallError(f"function {name!r}: parameter {pos} is not a buffer ({t})")
            dtype = str_attr(d, "tir.dtype") or dtype_of(t.element_type)
            params.append(Param(str_attr(d, "tir.name", f"arg{pos}"), tuple(t.shape), dtype))
        out[name] = params
    return out


def check_args(fname: str, params, arrays):
    """Raise RuntimeCallError naming the first buffer whose array does not fit.

    Non-contiguous arrays are rejected rather than copied, so writes always land in the caller's
    array."""
    if len(arrays) != len(params):
        raise RuntimeCallError(f"{fname} takes {len(params)} buffers "
                               f"({', '.join(p.name for p in params)}), got {len(arrays)}")
    for p, a in zip(params, arrays):
        if not isinstance(a, np.ndarray):
            raise RuntimeCallError(f"{fname}: buffer {p.name!r} expects a numpy array, "
                                   f"got {type(a).__name__}")
        if a.dtype != numpy_dtype(p.dtype):
            raise RuntimeCallError(f"{fname}: buffer {p.name!r} expects dtype {p.dtype}, "
                                   f"got {a.dtype}")
        if tuple(a.shape) != tuple(p.shape):
            raise RuntimeCallError(f"{fname}: buffer {p.name!r} expects shape {tuple(p.shape)}, "
                                   f"got {tuple(a.shape)}")
        if not a.flags.c_contiguous:
            raise RuntimeCallError(f"{fname}: buffer {p.name!r} is not C-contiguous; "
                                   f"pass np.ascontiguousarray(...) and read the result from it")
        if not a.flags.writeable:
            raise RuntimeCallError(f"{fname}: buffer {p.name!r} is read-only")
