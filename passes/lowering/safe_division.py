"""Stage `safe-division`: an integer division or remainder that traps at run time (SIGFPE)
would kill the caller's process. Two divisions trap: by zero, and the signed overflow
MIN / -1. A divisor that is not a constant other than -1 is replaced by

    b == 0 or (signed and b == -1 and a == MIN) ? 1 : b

so `x // 0` gives x and `x % 0` gives 0, and `MIN // -1` gives MIN (the two's-complement
wrap of -MIN, as numpy gives) and `MIN % -1` gives 0, instead of a signal. Constant zero
divisors never get here: the parser rejects them, like TVM.
"""

from mlir import ir
from mlir.dialects import arith

from tir_mlir.passes.lowering.common import INTEGER_DIVISIONS, constant_int, functions, walk

_SIGNED = ("arith.divsi", "arith.remsi", "arith.floordivsi", "arith.ceildivsi")


class SafeDivision:
    name = "safe-division"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for op in list(walk(f)):
                if op.name not in INTEGER_DIVISIONS:
                    continue
                signed = op.name in _SIGNED
                c = constant_int(op.operands[1])
                if c is not None and (c != -1 or not signed):
                    continue
                a, b = op.operands[0], op.operands[1]
                with ir.InsertionPoint(op), op.location:
                    one = arith.constant(b.type, 1)
                    trap = arith.cmpi(arith.CmpIPredicate.eq, b, arith.constant(b.type, 0))
                    if signed:
                        width = (
                            64 if isinstance(b.type, ir.IndexType) else ir.IntegerType(b.type).width
                        )
                        overflow = arith.andi(
                            arith.cmpi(arith.CmpIPredicate.eq, b, arith.constant(b.type, -1)),
                            arith.cmpi(
                                arith.CmpIPredicate.eq,
                                a,
                                arith.constant(b.type, -(1 << (width - 1))),
                            ),
                        )
                        trap = arith.ori(trap, overflow)
                    op.operands[1] = arith.select(trap, one, b)
