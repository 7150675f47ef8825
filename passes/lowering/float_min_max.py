"""Stage `float-min-max`: `T.max`/`T.min` on floats mean what TVM's LLVM code generator emits,
`a > b ? a : b` and `a < b ? a : b`, not IEEE-754 `maximum`/`minimum`. The NaN-propagating
`arith.maximumf` costs four instructions and a mask dependency per element on x86 (a compare, an
unordered compare, a mask or, a blend: a softmax's row max is bound by them); the select is one
`vmaxss`/`vmaxps`. Applies to scalars and vectors alike.
"""

from mlir import ir
from mlir.dialects import arith

from tir_mlir.passes.lowering.common import functions, walk

_PREDICATE = {"arith.maximumf": arith.CmpFPredicate.OGT, "arith.minimumf": arith.CmpFPredicate.OLT}


class FloatMinMax:
    name = "float-min-max"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for op in list(walk(f)):
                if op.name not in _PREDICATE:
                    continue
                a, b = op.operands
                with ir.InsertionPoint(op), op.location:
                    pick_a = arith.cmpf(_PREDICATE[op.name], a, b)
                    op.results[0].replace_all_uses_with(arith.select(pick_a, a, b))
                op.erase()
