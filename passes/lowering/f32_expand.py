"""What the inline f32 math stages (vector-exp, vector-log, vector-tanh-erf) share: the walk
that replaces each of their ops on f32 (scalar or vector) by its expansion, and constants
splatted to the type of the value they meet."""

from typing import Callable, Dict

from mlir import ir
from mlir.dialects import arith

from tir_mlir.passes.lowering.common import functions, walk


def expand_f32(module: ir.Module, expansions: Dict[str, Callable[[ir.Value], ir.Value]]) -> None:
    """Each op named in `expansions` whose result is f32 is replaced by expansions[name] of its
    operand, built just before it at its location; f64 keeps its libm call."""
    for f in functions(module):
        for op in list(walk(f)):
            if op.name in expansions and is_f32(op.results[0].type):
                with ir.InsertionPoint(op), op.location:
                    op.results[0].replace_all_uses_with(expansions[op.name](op.operands[0]))
                op.erase()


def is_f32(t: ir.Type) -> bool:
    return isinstance(t, ir.F32Type) or (
        isinstance(t, ir.VectorType) and isinstance(t.element_type, ir.F32Type)
    )


def splat(t: ir.Type, attr: ir.Attribute) -> ir.Value:
    """The constant `attr` of type `t`: every lane of it where `t` is a vector."""
    return arith.constant(
        t, ir.DenseElementsAttr.get_splat(t, attr) if isinstance(t, ir.VectorType) else attr
    )
