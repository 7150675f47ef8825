"""Stage `unroll-loops` (affine level): TVM's `UnrollLoop`, done in the IR.

    for i in T.unroll(2):           c0 = 0; BODY[i := c0]
        BODY                 =>     c1 = 1; BODY[i := c1]

- A `T.unroll` loop (kind "unroll") is unrolled, unless it is the inner loop of a pair that
  `coalesce-loops` makes one contiguous loop (`_coalescible_inner`; why: coalesce_loops.py),
  or it walks rows of integer sums that `rows-outside` moves out of their reduction
  (`_rows_walk`; why: rows_outside.py).
- Under a loop annotated `pragma_auto_unroll_max_step = N` (the loop itself included), a serial
  loop is unrolled when every loop inside it is unrolled too and extent x (statements of its
  body) <= N, at most `MAX_DEPTH` nested unrolled loops (TVM's defaults).
- `pragma_unroll_explicit = 0` (default 1) keeps such loops as loops with kind "unroll", which
  `affine-to-scf` turns into LLVM's full-unroll hint instead.
Explicit unrolling leaves constant indices, so a small local buffer indexed by unrolled loop
vars becomes scalars (LLVM's SROA) that stay in registers.
"""

from typing import Optional

from mlir import ir

from tir_mlir.dialect.ops import Loop, body_ops
from tir_mlir.passes.lowering.coalesce_loops import CoalesceLoops
from tir_mlir.passes.lowering.common import (
    constant_extent,
    constant_loop,
    constant_min,
    functions,
    index_const,
    move_body,
)
from tir_mlir.passes.lowering.rows_outside import RowsOutside

MAX_DEPTH = 8
# Above this many copies of a body, a loop is left to LLVM's unroller (with the hint).
MAX_COPIES = 4096
STATEMENTS = ("memref.store", "func.call")


class UnrollLoops:
    name = "unroll-loops"

    def __init__(self, rows: Optional[RowsOutside] = None):
        self.rows = rows or RowsOutside()

    @classmethod
    def for_target(cls, target):
        return cls(RowsOutside.for_target(target))

    def __call__(self, module: ir.Module):
        for f in functions(module):
            plan = []
            _visit_block(f.regions[0].blocks[0], None, True, plan)
            planned = [loop for loop, _ in plan]
            keep = [
                _coalescible_inner(loop, planned) or self._rows_walk(loop, planned)
                for loop, _ in plan
            ]
            for (loop, explicit), kept in zip(plan, keep):  # innermost first
                if kept:
                    continue  # stays a loop of kind "unroll" for coalesce-loops
                if explicit:
                    unroll(loop)
                else:
                    Loop(loop).set(kind="unroll")

    def _rows_walk(self, op, planned: list) -> bool:
        """Whether `op`, a `T.unroll` loop, walks the rows of sums that `rows-outside` moves
        out of their reduction (a rows loop alone in `op`, or in a perfect nest inside it):
        unrolled, its copies of the rows loop hide that nest from `rows-outside`, so it stays
        a loop of kind "unroll" (then `coalesce-loops` takes it with the loop around it, or
        it becomes LLVM's full-unroll hint). A nest holding a loop that is unrolled anyway
        (auto-unrolled, kind "serial") is left to unroll."""
        if Loop(op).kind != "unroll":
            return False
        inner = op
        while (
            len(body_ops(Loop(inner).body)) == 1
            and body_ops(Loop(inner).body)[0].name == "affine.for"
        ):
            inner = body_ops(Loop(inner).body)[0].operation
        if inner == op:
            return False
        nest = self.rows.nest(Loop(inner))
        if not nest or not any(lp.op.operation == op.operation for lp in nest):
            return False
        unrolled = [p.operation for p in planned]
        return all(lp.kind == "unroll" or lp.op.operation not in unrolled for lp in nest)


def _visit_block(block, max_step, explicit, plan):
    """(statement count, whether some loop inside stays a loop, unrolled loop depth)."""
    steps, normal, depth = 0, False, 0
    for op in block.operations:
        op = op.operation
        if op.name == "affine.for":
            s, n, d = _visit_loop(op, max_step, explicit, plan)
        else:
            s, n, d = (1 if op.name in STATEMENTS else 0), False, 0
            for region in op.regions:
                for b in region.blocks:
                    s2, n2, d2 = _visit_block(b, max_step, explicit, plan)
                    s, n, d = s + s2, n or n2, max(d, d2)
        steps, normal, depth = steps + s, normal or n, max(depth, d)
    return steps, normal, depth


def _visit_loop(op, max_step, explicit, plan):
    loop = Loop(op)
    ann = loop.annotations
    if "pragma_auto_unroll_max_step" in ann:
        max_step = _int(ann["pragma_auto_unroll_max_step"])
    if "pragma_unroll_explicit" in ann:
        explicit = bool(_int(ann["pragma_unroll_explicit"]))
    steps, normal, depth = _visit_block(loop.body, max_step, explicit, plan)
    if not constant_loop(loop):
        return steps, True, depth  # bounds on outer loops or sizes: stays a loop
    extent = constant_extent(loop) // loop.step
    if loop.kind == "unroll":
        auto = True
    else:
        auto = (
            loop.kind == "serial"
            and max_step is not None
            and not normal
            and depth < MAX_DEPTH
            and extent * steps <= max_step
        )
    if not auto:
        return steps, True, depth
    plan.append((op, explicit and extent * max(steps, 1) <= MAX_COPIES))
    return extent * steps, False, depth + 1


def _coalescible_inner(op, planned: list) -> bool:
    """Whether `op`, a `T.unroll` loop, is the inner loop of a pair `coalesce-loops` makes one
    loop (its parent a plain loop that stays a loop, with `op` alone in it): then it stays a
    loop, its kind "unroll", and `coalesce-loops` takes the pair (a loop of that kind that it
    does not take becomes LLVM's full-unroll hint in `affine-to-scf`)."""
    parent = op.parent
    if Loop(op).kind != "unroll" or parent is None or parent.name != "affine.for":
        return False
    if any(parent.operation == p.operation for p in planned):
        return False
    return CoalesceLoops().coalescible(parent) is not None


def _int(attr) -> int:
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.Attribute) else int(attr)


def unroll(op):
    """Replace a loop of integer bounds by one copy of its body per iteration, its IV a constant."""
    loop = Loop(op)
    loc = op.location
    first = constant_min(loop)
    for value in range(first, first + constant_extent(loop), loop.step):
        copy = op.clone(ip=ir.InsertionPoint(op))
        body = copy.regions[0].blocks[0]
        with ir.InsertionPoint(copy):
            const = index_const(value, loc)
        body.arguments[0].replace_all_uses_with(const)
        move_body(body, copy)
        copy.erase()
    op.erase()
