"""Stage `safe-division`: an integer division or remainder by a divisor that is zero at run
time would trap (SIGFPE) and kill the caller's process. A divisor that is not a constant is
replaced by `b == 0 ? 1 : b`, so `x // 0` gives x and `x % 0` gives 0 instead of a signal.
Constant zero divisors never get here: the parser rejects them, like TVM.
"""
from mlir import ir
from mlir.dialects import arith

from tir_mlir.passes.lowering.common import functions, walk

_DIVISIONS = ("arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.floordivsi",
              "arith.ceildivsi", "arith.ceildivui")


def _is_constant(v) -> bool:
    owner = v.owner
    return not isinstance(owner, ir.Block) and owner.name == "arith.constant"


class SafeDivision:
    name = "safe-division"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for op in list(walk(f)):
                if op.name not in _DIVISIONS or _is_constant(op.operands[1]):
                    continue
                b = op.operands[1]
                with ir.InsertionPoint(op), op.location:
                    zero = arith.constant(b.type, 0)
                    one = arith.constant(b.type, 1)
                    is_zero = arith.cmpi(arith.CmpIPredicate.eq, b, zero)
                    op.operands[1] = arith.select(is_zero, one, b)
