"""What the printer needs to know about a buffer (a memref value): name, shape, dtype, scope,
and the layout keywords TVM prints (offset_factor, axis_separators)."""

from dataclasses import dataclass
from typing import Optional

from mlir import ir

from tir_mlir.dialect.buffers import (
    ALIGN,
    OFFSET_FACTOR,
    arg_attrs,
    axis_separators_of,
    int_of,
    scope_of,
)
from tir_mlir.dialect.ops import INDEX_DTYPE, str_attr
from tir_mlir.dtypes import dtype_of
from tir_mlir.ir.index_dtypes import buffer_dim_dtypes


@dataclass
class BufferInfo:
    name: str
    shape: tuple
    dtype: str
    scope: str = "global"
    param: Optional[str] = None  # handle name of a T.match_buffer parameter
    dim_dtypes: tuple = ()  # "int32" | "int64" per dimension
    offset_factor: Optional[int] = None  # T.Buffer / T.match_buffer(..., offset_factor=N)
    axis_separators: tuple = ()
    align: int = 64  # T.match_buffer(..., align=N)

    @property
    def needs_match(self) -> bool:
        """TVM prints a parameter with these as a T.handle bound by T.match_buffer."""
        return self.offset_factor is not None or bool(self.axis_separators)

    @staticmethod
    def of(t: ir.MemRefType, attrs) -> "BufferInfo":
        dtype = str_attr(attrs, "tir.dtype") or dtype_of(t.element_type)
        factor = int_of(attrs, OFFSET_FACTOR)
        seps = axis_separators_of(attrs)
        return BufferInfo(
            str_attr(attrs, "tir.name", "buf"),
            tuple(t.shape),
            dtype,
            scope_of(attrs),
            str_attr(attrs, "tir.param"),
            buffer_dim_dtypes(attrs[INDEX_DTYPE] if INDEX_DTYPE in attrs else None, len(t.shape)),
            factor,
            seps,
            int_of(attrs, ALIGN, 64),
        )


def buffer_infos(func_op) -> dict:
    """memref value -> BufferInfo for every parameter, allocation and block-level
    T.match_buffer (a `memref.subview`) of a function."""
    out = {}
    args = func_op.regions[0].blocks[0].arguments
    for arg, attrs in zip(args, arg_attrs(func_op)):
        if isinstance(arg.type, ir.MemRefType):
            out[arg] = BufferInfo.of(ir.MemRefType(arg.type), attrs)

    def visit(op):
        if op.name in ("memref.alloc", "memref.alloca") or (
            op.name == "memref.subview" and "tir.match_buffer" in op.attributes
        ):
            out[op.results[0]] = BufferInfo.of(ir.MemRefType(op.results[0].type), op.attributes)
        return ir.WalkResult.ADVANCE

    func_op.walk(visit)
    return out


def _int_attr(attrs, name, default) -> int:
    return ir.IntegerAttr(attrs[name]).value if name in attrs else default
