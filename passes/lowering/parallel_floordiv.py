"""In the body of an `scf.parallel`, a floor division of an index that is never negative by a
positive constant becomes a truncating one (`arith.floordivsi` -> `arith.divsi`: equal there).

    scf.parallel (%f) = (0) to (262144) step (1) {        (a fused i // 1024, i % 1024)
      %i = arith.floordivsi %f, %c1024         =>    %i = arith.divsi %f, %c1024

The parallel loop becomes OpenMP: its body is outlined, and its index comes from the bounds
libomp hands each thread at run time, so LLVM no longer knows it is never negative (a serial
loop's IV it does know from the loop). `floordivsi` expands to a signed division plus a
rounding fix-up for negative quotients (compare, compare, and, extend, add) that LLVM then
cannot drop: a dozen instructions per use of a fused index, per parallel iteration, a large
share of the work of a body of a few elements (a SiLU's two). A truncating division
keeps only the division (by a power of 2: a shift with a sign adjustment).

Why not the unsigned division (`divui`, a plain shift; upstream `arith-unsigned-when-equivalent`
makes the same change, whole module): it tells LLVM the index's range, and LLVM then rewrites
the address arithmetic of everything the body reads and writes (rows as masked shifts of the
index instead of the quotient times the row size). In a body of many unrolled, SLP-vectorized
chains (a GELU over a 32x2 tile) that new arithmetic led the machine scheduler's register
pressure heuristic to interleave the eight vector chains instead of finishing one after the
other, and three times as many vector registers spilled. A truncating division leaves the
address arithmetic in the form LLVM already had.

A parallel loop whose quotients reach a comparison (the guard of a partial tile: rows split by
a factor that does not divide them, `f // 256 * 6 + k < 512`) keeps all its floor divisions.
LLVM specialises the partial tile's branch on the floor quotient's one value there (constant
addresses, only the rows that exist); from a truncating division InstCombine turns the guard
into a range of the IV instead, the branch keeps the general addresses, SimplifyCFG sinks the
tail both branches then share into a common block, and the vectorizer splits the full tile's
last row there into a narrower vector and scalars (more instructions and spills on the full
tiles, the hot path).

An index is never negative when it is a constant >= 0, the IV of an enclosing `scf.parallel`
or `scf.for` with a constant lower bound >= 0 and a positive constant step, or a sum, product,
min, max, select, quotient or remainder of such indices (positive constant divisors), or
`a - (a floordiv c) * c` (a floor remainder, >= 0 for any a). Index arithmetic is taken not to wrap (addresses
of buffers in memory).
"""

from typing import Optional

from mlir import ir
from mlir.dialects import arith

from tir_mlir.ir.ir_walk import ancestors, walk_all
from tir_mlir.passes.lowering.common import constant_int, functions

# Results that are >= 0 when all their operands are.
_CLOSED = ("arith.addi", "arith.muli", "arith.minsi", "arith.minui", "arith.maxui", "arith.maxsi")
_DIVISIONS = ("arith.floordivsi", "arith.divsi", "arith.divui", "arith.remsi", "arith.remui")
_DEPTH = 16  # how far back through the index arithmetic a proof looks


def truncate_nonnegative_floordivs(module: ir.Module) -> None:
    """Rewrite the floor divisions of the module's parallel bodies that the docstring names."""
    for f in functions(module):
        # The loops first: the rewrite erases ops a listing of the whole function would hold.
        loops = [
            o
            for o in walk_all(f)
            if o.name == "scf.parallel" and not any(a.name == "scf.parallel" for a in ancestors(o))
        ]
        for loop in loops:
            divisions = [op for op in walk_all(loop) if _truncatable(op)]
            if any(_compared(op.results[0]) for op in divisions):
                continue
            for op in divisions:
                with ir.InsertionPoint(op), op.location:
                    op.results[0].replace_all_uses_with(arith.divsi(*op.operands))
                op.erase()


def _truncatable(op: ir.Operation) -> bool:
    if op.name != "arith.floordivsi":
        return False
    divisor = constant_int(op.operands[1])
    return divisor is not None and divisor > 0 and nonnegative(op.operands[0], _DEPTH)


def _compared(v: ir.Value) -> bool:
    """Whether index arithmetic on `v` reaches a comparison (a guard of the body)."""
    work, seen = [v], set()
    while work:
        for use in work.pop().uses:
            user = use.owner
            if user.name == "arith.cmpi":
                return True
            if user.name.startswith("arith.") and user not in seen:
                seen.add(user)
                work.extend(r for r in user.results if isinstance(r.type, ir.IndexType))
    return False


def nonnegative(v: ir.Value, depth: int) -> bool:
    """Whether index `v` is provably >= 0 (the module's docstring); `depth` bounds the walk."""
    c = constant_int(v)
    if c is not None:
        return c >= 0
    if depth == 0:
        return False
    owner = v.owner
    if isinstance(owner, ir.Block):
        return _nonnegative_iv(owner, v)
    op = owner.operation
    args = list(op.operands)
    if op.name in _CLOSED:
        return all(nonnegative(a, depth - 1) for a in args)
    if op.name == "arith.select":
        return all(nonnegative(a, depth - 1) for a in args[1:])
    if op.name in _DIVISIONS:
        d = constant_int(args[1])
        return d is not None and d > 0 and nonnegative(args[0], depth - 1)
    if op.name == "arith.subi":
        return _floor_remainder(args[0], args[1], depth - 1)
    return False


def _nonnegative_iv(block: ir.Block, v: ir.Value) -> bool:
    """An IV of an `scf.for` / `scf.parallel` from a constant lower bound >= 0 by a positive
    constant step."""
    loop = block.owner
    if loop is None or loop.name not in ("scf.for", "scf.parallel"):
        return False
    ops = list(loop.operands)
    if loop.name == "scf.for":
        if v != block.arguments[0]:
            return False
        lo, step = ops[0], ops[2]
    else:
        n = (len(ops) - len(loop.results)) // 3
        d = next((i for i in range(n) if block.arguments[i] == v), None)
        if d is None:
            return False
        lo, step = ops[d], ops[2 * n + d]
    lo_c, step_c = constant_int(lo), constant_int(step)
    return lo_c is not None and lo_c >= 0 and step_c is not None and step_c > 0


def _floor_remainder(a: ir.Value, b: ir.Value, depth: int) -> bool:
    """Whether `b` is (a floordiv c) * c with c > 0: a - b is then a mod c, never negative. (A
    truncating quotient counts only for an `a` that is never negative.)"""
    mul = _defining(b, "arith.muli")
    if mul is None:
        return False
    x, y = mul.operands
    for q, c in ((x, y), (y, x)):
        k = constant_int(c)
        floor, trunc = _defining(q, "arith.floordivsi"), _defining(q, "arith.divsi")
        div = floor or trunc
        if div is None or k is None or k <= 0 or div.operands[0] != a:
            continue
        if constant_int(div.operands[1]) == k and (floor is not None or nonnegative(a, depth)):
            return True
    return False


def _defining(v: ir.Value, name: str) -> Optional[ir.Operation]:
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.operation.name != name:
        return None
    return owner.operation
