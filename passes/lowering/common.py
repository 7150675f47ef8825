"""Helpers shared by the lowering stages: IR walking, source locations, affine -> arith."""
import re
from typing import Iterator, Optional

from mlir import ir
from mlir.dialects import arith

from tir_mlir.errors import BuildError, SourceLoc

_LOC = re.compile(r'"([^"]*)":(\d+):(\d+)')


def source_loc(op) -> Optional[SourceLoc]:
    """The first `file:line:col` in an op's location (fused/callsite locations included)."""
    m = _LOC.search(str(op.location))
    return SourceLoc(m.group(1), int(m.group(2)), int(m.group(3))) if m else None


def build_error(op, message: str) -> BuildError:
    return BuildError(f"{message} (op '{op.name}')", source_loc(op))


def walk(op) -> Iterator[ir.Operation]:
    """Nested operations of `op` in pre-order (not `op` itself); the list is taken eagerly per
    block, so callers may rewrite the ops already yielded."""
    for region in op.regions:
        for block in region.blocks:
            for child in list(block.operations):
                child = child.operation
                yield child
                yield from walk(child)


def functions(module: ir.Module):
    """The function definitions of a module (declarations skipped)."""
    return [op.operation for op in module.body.operations
            if op.operation.name == "func.func" and len(op.operation.regions[0].blocks)]


def index_const(value: int, loc) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), int(value), loc=loc).result


def affine_to_arith(expr: ir.AffineExpr, dims, symbols, loc) -> ir.Value:
    """Emit arith ops (at the current insertion point) computing an affine expression on index
    values. `mod` and `floordiv` round towards -inf like affine's (TIR's floormod/floordiv)."""
    def emit(e):
        e = e.maybe_downcast()
        if isinstance(e, ir.AffineConstantExpr):
            return index_const(e.value, loc)
        if isinstance(e, ir.AffineDimExpr):
            return dims[e.position]
        if isinstance(e, ir.AffineSymbolExpr):
            return symbols[e.position]
        for cls, make in ((ir.AffineAddExpr, arith.addi), (ir.AffineMulExpr, arith.muli),
                          (ir.AffineFloorDivExpr, arith.floordivsi),
                          (ir.AffineCeilDivExpr, arith.ceildivsi)):
            if isinstance(e, cls):
                return make(emit(e.lhs), emit(e.rhs), loc=loc)
        if isinstance(e, ir.AffineModExpr):
            lhs, rhs = emit(e.lhs), emit(e.rhs)
            return arith.subi(lhs, arith.muli(arith.floordivsi(lhs, rhs, loc=loc), rhs, loc=loc),
                              loc=loc)
        raise BuildError(f"unsupported affine expression {e}")
    return emit(expr)


def set_to_arith(iset: ir.IntegerSet, dims, symbols, loc) -> ir.Value:
    """i1 value that is true when `dims` lie in the integer set."""
    zero = index_const(0, loc)
    cond = None
    for c in iset.constraints:
        v = affine_to_arith(c.expr, dims, symbols, loc)
        pred = arith.CmpIPredicate.eq if c.is_eq else arith.CmpIPredicate.sge
        c = arith.cmpi(pred, v, zero, loc=loc)
        cond = c if cond is None else arith.andi(cond, c, loc=loc)
    if cond is None:
        cond = arith.ConstantOp(ir.IntegerType.get_signless(1), 1, loc=loc).result
    return cond
