"""Helpers shared by the lowering stages: walking and moving IR, source locations, upstream
pass pipelines, affine -> arith."""

import math
from typing import Any, Callable, Iterable, Optional, TypeVar

from mlir import ir
from mlir.dialects import arith
from mlir.passmanager import PassManager

from tir_mlir.ir.mlir_error import MLIRError
from tir_mlir.dialect.ops import Loop
from tir_mlir.errors import BuildError, SourceLoc
from tir_mlir.ir.ir_walk import ancestors as ancestors, walk as walk  # re-exported for the stages

T = TypeVar("T")

# Integer division and remainder: a zero divisor traps (a signed one also on INT_MIN / -1).
INTEGER_DIVISIONS = frozenset(
    {
        "arith.divsi",
        "arith.divui",
        "arith.remsi",
        "arith.remui",
        "arith.floordivsi",
        "arith.ceildivsi",
        "arith.ceildivui",
    }
)


def source_loc(op) -> Optional[SourceLoc]:
    """Where in the source program `op` comes from."""
    return SourceLoc.of(op.location)


def build_error(op, message: str) -> BuildError:
    return BuildError(f"{message} (op '{op.name}')", source_loc(op))


def iv_range(loop_op) -> Optional[tuple]:
    """(first, last) value of the IV of an `affine.for`; for bounds on outer loop variables,
    the widest over those loops' ranges; None when a bound is a symbolic size (`range(n)`)."""
    first, last = Loop(loop_op).iv_range()
    return (first, last) if isinstance(first, int) and isinstance(last, int) else None


def constant_loop(loop: Loop) -> bool:
    """Whether a loop's bounds are integers: not over outer loop variables, not over symbolic
    sizes (`range(n)`). The stages that need a trip count leave the other loops alone."""
    return not len(loop.op.operands)


def constant_extent(loop: Loop) -> int:
    """The trip count of a loop whose bounds are integers (`constant_loop` holds)."""
    extent = loop.extent
    assert isinstance(extent, int), "a loop over outer loop variables or sizes"
    return extent


def constant_min(loop: Loop) -> int:
    """The first value of a loop that starts at an integer: one whose bounds are integers
    (`constant_loop` holds), or a `range(n)` (a loop over a size from 0)."""
    first = loop.min
    assert isinstance(first, int), "a loop over outer loop variables or sizes"
    return first


Bounds = tuple[int, int, int]


def scf_dims(loop) -> int:
    """How many induction variables an `scf.for` (1) or `scf.parallel` has."""
    return (len(loop.operands) - len(loop.results)) // 3 if loop.name == "scf.parallel" else 1


def scf_bounds(loop, dim: int = 0) -> Optional[Bounds]:
    """(lower bound, upper bound, step) of an `scf.for`, or of dimension `dim` of an
    `scf.parallel`, when the three are `arith.constant`s; None otherwise."""
    operands, n = list(loop.operands), scf_dims(loop)
    lo, hi, step = (constant_int(operands[k * n + dim]) for k in range(3))
    if lo is None or hi is None or step is None:
        return None
    return lo, hi, step


def iterations(bounds: Bounds) -> int:
    """The trip count of a loop of these constant bounds (0 when the upper bound is not above
    the lower one); the step is positive, as `scf.for`'s verifier requires."""
    lo, hi, step = bounds
    return max(0, -(-(hi - lo) // step))


def trip_count(loop, dim: int = 0) -> Optional[int]:
    """The trip count of an `scf.for` (or of dimension `dim` of an `scf.parallel`) of constant
    bounds; None when a bound is not a constant or the step is not positive."""
    bounds = scf_bounds(loop, dim)
    return None if bounds is None or bounds[2] <= 0 else iterations(bounds)


# A band this small (iterations x body ops, `unrolled_ops`) LLVM unrolls whole, then vectorizes
# the loop around it with the accumulators in registers: better than moving it (loop-interchange),
# up to about this size; larger bands run faster moved (benchmarks/README.md, "session 9, stage
# figures").
UNROLLED_BAND_OPS = 256


def unrolled_ops(loop: ir.Operation) -> float:
    """The ops of an `scf.for` unrolled whole, as LLVM's unroller weighs it once the index
    arithmetic has folded into addresses: trip count x (its stores and its ops on values
    other than indices and constants, an inner loop counted unrolled); inf when a trip count is
    not a constant."""
    trips = trip_count(loop)
    if trips is None:
        return math.inf
    body = 0.0
    for op in loop.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "scf.for":
            body += unrolled_ops(op)
        elif op.name == "memref.store" or any(
            not isinstance(r.type, ir.IndexType) for r in op.results
        ):
            body += op.name != "arith.constant"
    return trips * body


def loop_iv(loop) -> ir.Value:
    """The induction variable of a loop op (`scf.for`, `affine.for`, a `tir` loop): its
    body's first argument."""
    return loop.regions[0].blocks[0].arguments[0]


def defined_outside(value: ir.Value, loop) -> bool:
    """Whether `value` is defined outside `loop`, so that it dominates all of it: not a result
    of `loop` or of an op nested in it, not an argument of one of their blocks."""
    owner = value.owner
    op = owner.owner if isinstance(owner, ir.Block) else owner.operation
    loop = loop.operation
    return op != loop and not any(p == loop for p in ancestors(op))


def depends_on(value: ir.Value, target: ir.Value, scope=None) -> bool:
    """Whether `value` is `target` or computed from it through the operands of ops (not
    through regions); with `scope`, only through ops nested in `scope`."""
    seen: list = []
    todo = [value]
    while todo:
        v = todo.pop()
        if v == target:
            return True
        owner = v.owner
        if isinstance(owner, ir.Block) or any(owner == s for s in seen):
            continue
        if scope is not None and not any(p == scope for p in ancestors(owner)):
            continue
        seen.append(owner)
        todo += list(owner.operands)
    return False


def scalar_bits(t: ir.Type) -> int:
    """Bits of an integer or float type (the bindings give `.width` to those types only)."""
    assert isinstance(t, (ir.IntegerType, ir.FloatType)), f"{t} has no bit width"
    return t.width


def value_bits(t: ir.Type) -> int:
    """Bits of a scalar or vector type (a buffer of `int16x4` elements stores 64 bits each)."""
    if isinstance(t, ir.VectorType):
        return scalar_bits(t.element_type) * math.prod(t.shape)
    return scalar_bits(t)


def else_block(if_op) -> ir.Block:
    """The else block of an `scf.if` or `affine.if` built with one (the bindings type their
    `else_block` Optional)."""
    return if_op.regions[1].blocks[0]


def run_pipeline(module: ir.Module, pipeline: str, what: str):
    """Run an upstream pass pipeline on the module; its failure is a BuildError."""
    try:
        PassManager.parse(f"builtin.module({pipeline})", module.context).run(module.operation)
    except MLIRError as e:
        raise BuildError(f"{what} failed: {e}") from None


def move_body(block: ir.Block, before):
    """Move the ops of a region block, its terminator excepted, before the op `before`."""
    for o in list(block.operations)[:-1]:
        o.operation.move_before(before)


def group_in_order(items: Iterable[T], key: Callable[[T], Any]) -> list[tuple[Any, list[T]]]:
    """[(k, the items whose key is k)] in the order each key first appears. Keys compare with
    `==`: an MLIR block or value read twice is two Python objects, equal but not the same."""
    groups: list[tuple[Any, list[T]]] = []
    for item in items:
        k = key(item)
        for other, group in groups:
            if other == k:
                group.append(item)
                break
        else:
            groups.append((k, [item]))
    return groups


def functions(module: ir.Module):
    """The function definitions of a module (declarations skipped)."""
    return [
        op.operation
        for op in module.body.operations
        if op.operation.name == "func.func" and len(op.operation.regions[0].blocks)
    ]


def constant_int(value: ir.Value) -> Optional[int]:
    """The value of an integer `arith.constant`, or None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.constant":
        return None
    attr = owner.operation.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


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
        for cls, make in (
            (ir.AffineAddExpr, arith.addi),
            (ir.AffineMulExpr, arith.muli),
            (ir.AffineFloorDivExpr, arith.floordivsi),
            (ir.AffineCeilDivExpr, arith.ceildivsi),
        ):
            if isinstance(e, cls):
                return make(emit(e.lhs), emit(e.rhs), loc=loc)
        if isinstance(e, ir.AffineModExpr):
            lhs, rhs = emit(e.lhs), emit(e.rhs)
            return arith.subi(
                lhs, arith.muli(arith.floordivsi(lhs, rhs, loc=loc), rhs, loc=loc), loc=loc
            )
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
