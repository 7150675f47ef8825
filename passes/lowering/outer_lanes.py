"""Stage `outer-lanes` (CPU, affine level, before `auto-vectorize`): an element-wise loop that
steps along rows, but that no vectorizer takes as it stands, runs a vector register's lanes
of itself at once: split, its inner part a `T.vectorized` loop around the rest of its body.

    for f in T.parallel(171 * 1024):               for f_o in T.parallel(171 * 64):
      for r in 0..3:                        =>       for f in T.vectorized(16):
        B[f // 1024 * 3 + r, f % 1024] = ...           for r in 0..3:
                                                         B[f_o // 64 * 3 + r, f_o % 64 * 16 + f] = ...

A schedule that splits the rows, puts the columns outside the inner rows and fuses them with
the outer rows (`split`, `reorder`, `fuse`, `parallel`, no `vectorize`) walks down a column
inside each iteration: LLVM's vectorizer takes only the innermost loop, whose lanes would
each come from another row, and never the fused loop (its floor divisions are no linear
address). So a SiLU ran one scalar exp per element (TVM's build the same, one `expf` call
each). A fused loop with nothing inside (`fuse` and `parallel` alone) is scalar for the same
divisions. Split by the lanes of a register (the split's width divides every divisor of the
fused index, so a strip stays in one row: `loop_interchange.split_loop` folds those divisions),
the inner part is a vector loop over 16 contiguous columns, the rows inside it walked once per
strip on vectors (`vectorize-loops`' outer-loop vectorization), the exp a vector polynomial.

A loop qualifies when it is a serial or parallel loop of constant bounds, step 1 and no other
annotation, that holds no vectorized loop and no loop with results, and either is parallel and
holds a loop of constant bounds (the column walk) or its accesses divide its index (a fused
loop). It is done when, split by the most lanes of its narrowest stored element in a register
(`cpu_model.py`) that divide its trip count and the divisors of its index (at least a 128-bit
register's, leaving two iterations outside), `vectorize_plan` vectorizes the inner part (no
two lanes touch one address with one of them a store), every store is contiguous along the
lanes and every load is contiguous along the lanes or the same for all of them. The split is
made on a copy and kept only then. A reduction inside the loop qualifies too (a fused matmul
whose rows run inside `k`: the lanes are 16 columns of accumulators, B's row a vector load):
its elements still see their updates in order, each lane its own.
"""

import math
from typing import Optional

from mlir import ir

from tir_mlir.dialect.ops import Loop, integer_set
from tir_mlir.ir.affine_exprs import dims_of
from tir_mlir.passes.lowering.affine_to_scf import element_bits
from tir_mlir.passes.lowering.common import (
    constant_extent,
    constant_loop,
    functions,
    loop_iv,
    walk,
)
from tir_mlir.passes.lowering.cpu_model import VectorStage
from tir_mlir.passes.lowering.loop_interchange import PLAIN_LOOP_ATTRS, split_loop, split_width
from tir_mlir.passes.lowering.vectorize_plan import Plan, contiguous

MIN_BITS = 128  # the narrowest vector register of every CPU target (SSE2, NEON)


class OuterLanes(VectorStage):
    name = "outer-lanes"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            refused: list = []
            while True:
                j = next((o for o in walk(f) if _candidate(o) and o not in refused), None)
                if j is None:
                    break
                if not self._vectorize(j):
                    refused.append(j)

    def _vectorize(self, j) -> bool:
        """Split `j` (a copy of it) and keep the copy when its lanes vectorize (the module's
        docstring); whether it did."""
        width = self._width(j)
        if width is None:
            return False
        copy = j.clone(ir.InsertionPoint(j))
        lanes = Loop(split_loop(Loop(copy), width, divisions=True))
        lanes.set(kind="vectorized")
        if _streams(Plan(lanes)):
            j.erase()
            return True
        copy.erase()
        return False

    def _width(self, j) -> Optional[int]:
        body = j.regions[0].blocks[0]
        bits = element_bits(body)
        of = math.gcd(*_divisors(j)) if _divisors(j) else 0
        least = max(2, MIN_BITS // bits)
        return split_width(constant_extent(Loop(j)), self.vector_bits // bits, least, of)


def _candidate(op) -> bool:
    if op.name != "affine.for" or len(op.operands) or len(op.results):
        return False
    if set(op.attributes) - PLAIN_LOOP_ATTRS:
        return False
    loop = Loop(op)
    if loop.kind not in ("serial", "parallel") or loop.step != 1 or constant_extent(loop) < 2:
        return False
    inner = [o for o in walk(op) if o.name == "affine.for" and o != op]
    for o in inner:
        if len(o.results) or not constant_loop(Loop(o)) or Loop(o).kind == "vectorized":
            return False
    return bool(_divisors(op)) or (loop.kind == "parallel" and bool(inner))


def _divisors(j) -> list:
    """The divisors of floordivs and mods of `j`'s index in the index maps inside it."""
    iv, out = loop_iv(j), []
    for o in walk(j):
        if o.name == "affine.apply":
            exprs = list(ir.AffineMapAttr(o.attributes["map"]).value.results)
        elif o.name == "affine.if":
            exprs = [c.expr for c in integer_set(o.attributes["condition"]).constraints]
        else:
            continue
        at = {k for k, v in enumerate(o.operands) if v == iv}
        for e in exprs:
            out += _divided(e, at)
    return out


def _divided(e, at: set) -> list:
    e = e.maybe_downcast()
    if not isinstance(e, ir.AffineBinaryExpr):
        return []
    out = _divided(e.lhs, at) + _divided(e.rhs, at)
    c = e.rhs.maybe_downcast()
    if (
        isinstance(e, (ir.AffineFloorDivExpr, ir.AffineModExpr))
        and isinstance(c, ir.AffineConstantExpr)
        and dims_of(e.lhs) & at
    ):
        out.append(c.value)
    return out


def _streams(plan: Plan) -> bool:
    """Whether the plan vectorizes, with every store contiguous along the lanes and every load
    contiguous or the same on all lanes."""
    if not plan.ok or not any(store for store, _, _ in plan.accesses):
        return False
    for store, memref, forms in plan.accesses:
        if any(f is None for f in forms):
            return False
        strides = [f.stride for f in forms]
        if not contiguous(memref, strides) and (store or any(strides)):
            return False
    return True
