"""Symbolic sizes as TVMScript (docs/symbolic.md): read from the IR, printed as TVM 0.21 does.

A symbol is an `index` value at the top level of the function: an argument (an implicit var
`n = T.int32()` or an integer scalar parameter) prints as its name, an `arith`/`affine.apply`
op over symbols as the expression it computes (`n * m + 1`, `T.min(n, 64)`). An integer
expression of symbols (a `SymExpr`: a loop extent, a block domain, a buffer dimension) prints
through `affine_text` with each symbol's text.
"""

from mlir import ir

from tir_mlir.analysis.symbolic import SymExpr
from tir_mlir.dialect.buffers import arg_attrs
from tir_mlir.dialect.ops import str_attr
from tir_mlir.ir.index_dtypes import index_dtype
from tir_mlir.printer.affine_text import affine_text
from tir_mlir.printer.literals import int_text

MATCH_SHAPE = "tir.match_shape"
ASSUME = "tir.assume"
IMPLICIT = "tir.implicit"


def size_text(ex, value, dtype: str = "int32") -> str:
    """An int or a SymExpr as TVM prints it (`128`, `n`, `(n + 3) // 4`)."""
    if not isinstance(value, SymExpr):
        return int_text(value, dtype)
    names = [ex.expr(s) for s in value.symbols]  # (text, precedence): n * m + 1
    if any(index_dtype(s) == "int64" for s in value.symbols):
        dtype = "int64"
    return affine_text(value.expr, (), names, dtype)[0]


def implicit_vars(func_op) -> list:
    """(argument, name, dtype) of each implicit var (`n = T.int32()`), in signature order."""
    args = func_op.regions[0].blocks[0].arguments
    return [
        (a, str_attr(d, "tir.name", "v"), str_attr(d, "tir.dtype", "int32"))
        for a, d in zip(args, arg_attrs(func_op))
        if IMPLICIT in d
    ]


def match_shapes(func_op) -> dict:
    """buffer argument -> its tir.match_shape op."""
    out = {}
    for op in func_op.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == MATCH_SHAPE:
            out.setdefault(op.operands[0], op)
    return out


def shape_dims(op) -> list:
    """The sizes a tir.match_shape gives its buffer: ints and SymExprs."""
    amap = ir.AffineMapAttr(op.attributes["shape"]).value
    return SymExpr.from_map(amap, list(op.operands)[1:])


def alloc_dims(op) -> list:
    """The sizes of a `memref.alloc` of dynamic shape: ints, and the SymExprs of its
    operands (one per dynamic dimension, in order)."""
    t = ir.MemRefType(op.results[0].type)
    sizes = iter(op.operands)
    dynamic = ir.ShapedType.get_dynamic_size()
    return [d if d != dynamic else SymExpr.symbol(next(sizes)) for d in t.shape]
