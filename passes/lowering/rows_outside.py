"""Stage `rows-outside` (CPU, affine level, before `auto-vectorize`): integer rows of sums inside
a reduction that walks each row contiguously, more rows than the vector registers that carry
sums, become the loop around that reduction.

    for k in 0..512:                             for i1 in 0..32:
      for i1 in 0..32:                 =>          for k in 0..512:
        T[i1] += A[r + i1, k] * B[r + i1, k]          T[i1] += A[r + i1, k] * B[r + i1, k]

`auto-vectorize` leaves such rows scalar (`_gathers_walked_by_parent`): `scalar-replace` carries
one sum per row across the reduction and LLVM's loop vectorizer takes the reduction over
contiguous bytes of every row, one vector accumulator per row. That holds while the sums fit the
registers; with more rows than scalar-replace's budget (the target's vector registers less
FREE_REGISTERS) it carries only some, the others are read and written in memory every step, and
LLVM no longer vectorizes the loop (an int8 dot with 32 rows inside `k` ran many times slower
than with 28: benchmarks/README.md, "session 11, int8"). Each row outside is one contiguous dot
product with one carried sum: the unsplit loop's code.

A loop of rows qualifies when:
- it is innermost, serial (or vectorized: below), of constant bounds and step 1, more steps
  than the budget, and `_gathers_walked_by_parent` holds for it (it stores integers, gathers,
  and a perfect nest of serial loops around it walks every gathered load contiguously);
- every store in it is at an address that moves with the rows and with none of the nest's
  loops (a row's sum), and every load of a stored buffer is at that address: the rows are
  independent, so running each row's steps together keeps every row's order of updates.
The nest is then widened outward over plain loops (serial or unroll, constant bounds, step 1)
that hold nothing but it and move no store of the rows (`_widened`), so each row runs its whole
reduction as one loop (`coalesce-loops` joins a split one). The rows loop then runs around the
nest's outermost loop, holding the nest, which holds its body. `unroll-loops` asks `nest`
before unrolling a `T.unroll` loop: one in such a nest stays a loop, since its unrolled copies
of the rows loop would hide the nest from this stage.

A `T.vectorized` loop of rows (the schedule's `vectorize`) is such rows too when every load
that moves along the nest is walked by it contiguously (`_walked`: a column read along `k`, one
byte for all lanes, would be gathered along `k` by the rows' scalar form, so it keeps its
broadcast) and the rows either qualify above or fit the budget: it is made serial first
(`_scalar_lanes`), and `auto-vectorize` then leaves it scalar. As lanes, every step of the
reduction gathered one byte of each row per insert, as TVM's code does; an int8 dot with 8
vectorized rows inside `k` ran several times slower than with the rows scalar
(benchmarks/README.md, "session 13, int8").
"""

from typing import Optional

from mlir import ir

from tir_mlir.analysis.linear import value_linear
from tir_mlir.dialect.ops import Loop, body_ops
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.affine_to_scf import element_bits
from tir_mlir.passes.lowering.auto_vectorize import (
    _WALKING_KINDS,
    _atom,
    _gathers_walked_by_parent,
    _strides,
    _walking_nest,
)
from tir_mlir.passes.lowering.common import constant_extent, constant_loop, functions
from tir_mlir.passes.lowering.cpu_model import cpu_model
from tir_mlir.passes.lowering.scalar_replace import FREE_REGISTERS

# Ops a row's body may hold (an `affine.if` is a reduction's init, `if k == 0`).
_BODY_OPS = ("affine.apply", "affine.if", "affine.yield", "memref.load", "memref.store")


class RowsOutside:
    name = "rows-outside"

    def __init__(self, vector_bits=512, vector_registers=32):
        self.vector_bits, self.budget = vector_bits, vector_registers - FREE_REGISTERS

    @classmethod
    def for_target(cls, target):
        model = cpu_model(target)
        return cls(model.vector_bits, model.vector_registers)

    def __call__(self, module: ir.Module):
        for f in functions(module):
            loops = [Loop(o) for o in walk_all(f) if o.name == "affine.for"]
            for lanes in [lp for lp in loops if self._scalar_lanes(lp)]:
                lanes.set(kind="serial")
            moves = [(r, n) for r, n in ((r, self._nest(r)) for r in loops) if n]
            for rows, nest in moves:
                _move_out(rows, nest[-1])

    def _nest(self, rows: Loop) -> Optional[list]:
        """The walking nest around `rows` (innermost first) when the rows qualify."""
        nest = self._walked_rows(rows)
        if nest is None or constant_extent(rows) <= self.budget:
            return None
        if not _independent_rows(rows, nest):
            return None
        return _widened(rows, nest)

    def _walked_rows(self, rows: Loop) -> Optional[list]:
        """The walking nest around `rows` (innermost first) when `rows` is an innermost loop of
        constant bounds and step 1 (serial, or vectorized when `_walked` holds) of integer sums
        whose gathered loads the nest walks contiguously."""
        if rows.kind not in ("serial", "vectorized") or not constant_loop(rows) or rows.step != 1:
            return None
        if any(o.name == "affine.for" for o in walk_all(rows.op) if o != rows.op):
            return None
        lanes = max(1, self.vector_bits // element_bits(rows.body))
        if not _gathers_walked_by_parent(rows, lanes):
            return None
        nest = _walking_nest(rows, lanes)
        if rows.kind == "vectorized" and not _walked(rows, nest):
            return None
        return nest

    def _scalar_lanes(self, lanes: Loop) -> bool:
        """Whether `lanes`, a `T.vectorized` loop, runs as rows: made serial, `auto-vectorize`
        leaves it scalar (at most the budget's rows, each sum carried in a register) or this
        stage moves it out of the nest."""
        if lanes.kind != "vectorized" or self._walked_rows(lanes) is None:
            return False
        if not any(o.name == "memref.store" for o in walk_all(lanes.op)):
            return False
        return constant_extent(lanes) <= self.budget or self._nest(lanes) is not None

    def nest(self, rows: Loop) -> Optional[list]:
        """The loops `rows` moves around (innermost first) when it qualifies, else None;
        `unroll-loops` asks it before unrolling a `T.unroll` loop of that nest."""
        return self._nest(rows)


def _walked(rows: Loop, nest: list) -> bool:
    """Whether every load in `rows` that moves along `nest` moves as one loop over the nest
    would, one element per step (as `_gathers_walked_by_parent` asks of the gathered ones)."""
    for op in walk_all(rows.op):
        if op.name != "memref.load":
            continue
        strides = _strides(op, nest)
        if strides is None:
            return False
        walk = 1
        for outer, stride in zip(nest, strides):
            if any(strides) and stride != walk:
                return False
            walk *= constant_extent(outer)
    return True


def _widened(rows: Loop, nest: list) -> list:
    """`nest` and the loops around it that hold nothing else, serial or unroll, of constant
    bounds and step 1, none moving a store in `rows`: the rows then run around the whole
    reduction, each row one contiguous loop (which `coalesce-loops` makes one) rather than
    one short walk per step of an outer reduction loop."""
    while True:
        parent = nest[-1].op.parent
        while parent is not None and parent.name not in ("affine.for", "func.func"):
            parent = parent.parent
        if parent is None or parent.name != "affine.for":
            return nest
        outer = Loop(parent)
        if outer.kind not in _WALKING_KINDS or not constant_loop(outer) or outer.step != 1:
            return nest
        if len(body_ops(outer.body)) != 1:
            return nest
        if not _independent_rows(rows, nest + [outer]):
            return nest
        nest = nest + [outer]


def _independent_rows(rows: Loop, nest: list) -> bool:
    """Whether every store in `rows` moves with the rows and with none of `nest`, and every
    load of a stored buffer reads the store's address."""
    ops = [o for o in walk_all(rows.op) if o != rows.op]
    if any(not (o.name in _BODY_OPS or o.name.startswith("arith.")) for o in ops):
        return False
    stores: list = []  # (buffer, forms of the address its stores share)
    for o in ops:
        if o.name == "memref.store":
            forms = _forms(o, 2)
            if forms is None:
                return False
            known = _stored(stores, o.operands[1])
            if known is None:
                stores.append((o.operands[1], forms))
            elif known != forms:
                return False
            steps = [f.terms.get(rows.iv, 0) for f in forms]
            if not any(steps) or any(f.terms.get(lp.iv, 0) for f in forms for lp in nest):
                return False
    for o in ops:
        if o.name == "memref.load":
            known = _stored(stores, o.operands[0])
            if known is not None and _forms(o, 1) != known:
                return False
    return bool(stores)


def _stored(stores: list, buffer: ir.Value) -> Optional[list]:
    return next((forms for b, forms in stores if b == buffer), None)


def _forms(access, first: int) -> Optional[list]:
    forms = [value_linear(v, _atom) for v in list(access.operands)[first:]]
    return None if any(f is None for f in forms) else forms


def _move_out(rows: Loop, outer: Loop):
    """`rows` around `outer` (the nest's outermost loop), holding it; `rows`' body moves into
    the loop that held `rows`."""
    for op in body_ops(rows.body):
        op.operation.move_before(rows.op)
    rows.op.move_before(outer.op)
    outer.op.move_before(list(rows.body.operations)[-1])  # (before the terminator)
