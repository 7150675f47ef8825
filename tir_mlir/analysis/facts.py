"""Facts a function states about its symbols: `T.assume(n % 4 == 0)`, held as
`"tir.assume"(%n) {condition = affine_set<()[s0] : (s0 mod 4 == 0)>}` at the top of its body
(docs/symbolic.md). Schedule legality asks them what the expressions alone do not prove."""

from mlir import ir

from tir_mlir.dialect.ops import integer_set

ASSUME = "tir.assume"


def assumed_facts(func: ir.Operation) -> list[tuple[ir.Value, int]]:
    """(symbol, m) for each `symbol % m == 0` the function assumes (the form
    `analysis.symbolic.divisible` takes)."""
    out = []
    for op in func.regions[0].blocks[0].operations:
        op = op.operation
        if op.name != ASSUME or "condition" not in op.attributes:
            continue
        cond = integer_set(op.attributes["condition"])
        operands = list(op.operands)
        for c in cond.constraints:
            fact = _multiple_of(c.expr.maybe_downcast(), operands) if c.is_eq else None
            if fact is not None:
                out.append(fact)
    return out


def _multiple_of(e: ir.AffineExpr, operands):
    """(symbol, m) when `e` is `s mod m` (== 0), else None."""
    if not isinstance(e, ir.AffineModExpr):
        return None
    lhs, rhs = e.lhs.maybe_downcast(), e.rhs.maybe_downcast()
    if (
        isinstance(lhs, ir.AffineSymbolExpr)
        and isinstance(rhs, ir.AffineConstantExpr)
        and rhs.value > 0
        and lhs.position < len(operands)
    ):
        return operands[lhs.position], rhs.value
    return None
