"""Stage `lane-interchange` (CPU, affine level): a `T.vectorized` loop whose lanes are apart in
memory trades places with the serial loop around it when that loop walks memory along rows.

    for j in 0..64:                              for i in 0..3:
      for i in T.vectorized(3):          =>        for j in T.vectorized(64):
        C[i, j] += A[i, k] * B[k, j]                 C[i, j] += A[i, k] * B[k, j]

Vectorized over rows, every lane of `C` is a scalar load and store of its own (a gather and a
scatter at every step); vectorized over `j`, `C` and `B` are whole vector loads and stores and
`A` one value for all lanes (benchmarks/README.md, "Row lanes", measures the
difference). TVM's build does the same in effect: its vectorizer leaves a predicated lane loop
serial and LLVM vectorizes the loop around it.

A pair qualifies when `j` is a plain serial loop (constant bounds, step 1, no annotation) whose
body is pure ops and the vectorized loop `i` (constant bounds, step 1) holding accesses, pure
ops and `affine.if`s of them; every store is on a row-major buffer, reached by no other access
at another address (the same SSA memref, the same index), and its element is a different one
for each (j, i) (its strides in `j` and `i` nonzero and apart, as in `loop-interchange`). Then
the iterations are independent and any order computes the same numbers.
It is done when every access that varies with `i` is apart between lanes (no contiguous vector
access is lost) and, along `j`, every store is contiguous and every load contiguous or the same
for all iterations, over at least MIN_VECTOR_TRIPS iterations.
"""

from mlir import ir

from tir_mlir.dialect.ops import Loop, body_ops
from tir_mlir.passes.lowering.buffer_roots import noalias_args
from tir_mlir.passes.lowering.version_guards import COPY as LOOP_COPY
from tir_mlir.passes.lowering.common import constant_extent, functions, loop_iv, walk
from tir_mlir.passes.lowering.loop_interchange import (
    ACCESSES,
    MIN_VECTOR_TRIPS,
    RANGE_ATTRS,
    Access,
    is_vectorized_leaf,
    leaf_ops,
    PLAIN_LOOP_ATTRS,
    pure,
)
from tir_mlir.analysis.buffer_util import NotAffine


class LaneInterchange:
    name = "lane-interchange"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            noalias = noalias_args(f)
            for j in [o for o in walk(f) if o.name == "affine.for"]:
                lanes = _lane_loop(j)
                if lanes is None:
                    continue
                try:
                    accesses = [
                        Access(o, _ivs(j, lanes), noalias)
                        for o in leaf_ops(lanes) or []
                        if o.name in ACCESSES
                    ]
                except NotAffine:
                    continue
                if _legal(accesses, j, lanes) and _profitable(accesses, j):
                    _swap(j, lanes)


def _ivs(j, lanes) -> list:
    return [loop_iv(j), loop_iv(lanes)]


def _lane_loop(j):
    """The vectorized loop `j`'s body ends in, when the pair has the shape the stage swaps."""
    if not _serial(j):
        return None
    ops = body_ops(j.regions[0].blocks[0])
    if not ops or not all(pure(o) or o.name == "affine.apply" for o in ops[:-1]):
        return None
    lanes = ops[-1]
    if lanes.name != "affine.for" or not is_vectorized_leaf(lanes):
        return None
    return lanes


def _serial(op) -> bool:
    """A serial loop of constant bounds, step 1, no annotation (a copy `version-guards` made
    counts: its twin is another loop of the same kind)."""
    if op.name != "affine.for" or len(op.operands):
        return False
    if set(op.attributes) - PLAIN_LOOP_ATTRS - {LOOP_COPY}:
        return False
    loop = Loop(op)
    return loop.kind == "serial" and loop.step == 1 and constant_extent(loop) > 1


def _legal(accesses: list, j, lanes) -> bool:
    extents = [constant_extent(Loop(j)), constant_extent(Loop(lanes))]
    for s in accesses:
        if not s.store:
            continue
        if not s.row_major or any(
            a.may_alias(s) and (a.memref != s.memref or a.index != s.index) for a in accesses
        ):
            return False
        strides = [s.stride(0), s.stride(1)]
        if any(not st for st in strides):
            return False
        a, b = abs(strides[0]), abs(strides[1])  # type: ignore[arg-type]
        if not (a >= b * extents[1] or b >= a * extents[0]):
            return False
    return True


def _profitable(accesses: list, j) -> bool:
    if constant_extent(Loop(j)) < MIN_VECTOR_TRIPS:
        return False
    apart = [a.stride(1) not in (0, 1, -1) for a in accesses if a.stride(1) != 0]
    along = all(a.stride(0) in ((1,) if a.store else (0, 1)) for a in accesses)
    return bool(apart) and all(apart) and along


def _swap(j, lanes):
    """`j` takes the lane loop's range, the lane loop `j`'s (kinds stay in place); the pure ops
    of `j`'s body move into the lane loop's, where the uses of its IV now are."""
    inner = lanes.regions[0].blocks[0]
    first = body_ops(inner)[0]
    for o in body_ops(j.regions[0].blocks[0])[:-1]:
        o.move_before(first)
    headers = [
        {k: op.attributes[k] for k in RANGE_ATTRS if k in op.attributes} for op in (j, lanes)
    ]
    for op, h in zip((j, lanes), headers[::-1]):
        for k in RANGE_ATTRS:
            if k in h:
                op.attributes[k] = h[k]
            elif k in op.attributes:
                del op.attributes[k]
    outer_iv, inner_iv = _ivs(j, lanes)
    with ir.InsertionPoint(first):
        tmp = ir.Operation.create(
            "arith.constant",
            results=[ir.IndexType.get()],
            attributes={"value": ir.IntegerAttr.get(ir.IndexType.get(), 0)},
        ).result
    outer_iv.replace_all_uses_with(tmp)
    inner_iv.replace_all_uses_with(outer_iv)
    tmp.replace_all_uses_with(inner_iv)
    tmp.owner.erase()
