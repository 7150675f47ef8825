"""Stage `spatial-out` (CPU, affine level, before `loop-interchange`): the one loop of a nest
that the stores move with but that runs inside reduction loops (an rfactor's factored loop)
moves out of them, so that `loop-interchange` finds a band of reduction loops under the
columns.

    for i, j:                                    for l in 0..8:
      for k0 in 0..64:                             for i, j:
        for l in 0..8:                   =>          for k0 in 0..64:
          C_rf[l, i, j] += A[i, 8 k0 + l]              C_rf[l, i, j] += A[i, 8 k0 + l]
                           * B[8 k0 + l, j]                            * B[8 k0 + l, j]

`rfactor(k1, factor_axis=0)` keeps the loops where they were: the factored loop `l`, now a
spatial loop (C_rf's first index), stays under the reduction loop `k0` (or, factored outer
piece of a convolution's channels, between `rx` and the inner channels). `loop-interchange`
moves `j` inside a band only when no access depends on the band's loops, so `j` stayed outside
`k0` and every element was a chain of scalar FMAs reading B down a column (a new cache line
per step). Moved out, the band under `j` is `k0` alone: `loop-interchange` puts the columns
inside it and they vectorize, B read along its rows, A once per step.

A nest qualifies when it is a perfect nest of at least three plain serial loops
(`plain_loop`: constant bounds, step 1, no annotation) whose innermost body holds only
accesses, pure ops, `affine.if`s of them (a T.init left in the reduction) and loops of
constant bounds of them (a decomposed T.init's band: `_ops`), every written buffer is accessed
at one address (the same memref and index, no other access that may alias it) that no loop
under the nest moves, and each loop of the nest is either spatial (every store reads its IV)
or a reduction loop (no store does). Every store's address must tell its spatial loops apart
(each stride larger than the span of the smaller ones: `loop_interchange.injective`): then an
element's updates are those of one iteration of the spatial loops, in the order of the
reduction loops, which keep their order, and updates of different elements commute. The loop that moves is
the one spatial loop under a reduction loop, or, with none there, the spatial loop right
above the band when it steps farther in memory than the loop above it (`rfactor` of a split's
outer piece: `C_rf[k_0, i, j]` under `i, j, k_0, k_1`), and only when every store jumps a cache
line or more at each of its steps (a matmul's `for k: for j` walks C's row already) and every
access reads its IV (an rfactor's loop is a piece of the reduction's index: no load is reused
across it, where a register tile's rows under `k` share B's row). It moves up past the reduction loops
above it and past the spatial loops whose stride is smaller than its own in every store (the
rf buffer's layout: with `factor_axis=0` to the top of the nest). It is done only when the
loop left above the band then walks the rows (`loop_interchange.streams`, on a copy): either
`loop-interchange` moves it inside the band, or the band is small enough for LLVM to unroll
whole and the loop around it vectorizes.
"""

from typing import Optional

from mlir import ir

from tir_mlir.dialect.ops import Loop, body_ops
from tir_mlir.passes.lowering.buffer_roots import noalias_args
from tir_mlir.ir.affine_exprs import dims_of
from tir_mlir.passes.lowering.common import (
    constant_extent,
    defined_outside,
    functions,
    loop_iv,
    walk,
)
from tir_mlir.passes.lowering.cpu_model import cpu_model
from tir_mlir.passes.lowering.loop_interchange import (
    ACCESSES,
    Access,
    injective,
    streams,
    plain_loop,
    pure,
    rotate_headers,
    rotate_ivs,
)
from tir_mlir.analysis.buffer_util import NotAffine


class SpatialOut:
    name = "spatial-out"

    def __init__(self, line_bytes: int = 64):
        self.line_bytes = line_bytes

    @classmethod
    def for_target(cls, target):
        return cls(cpu_model(target).line_bytes)

    def __call__(self, module: ir.Module):
        for f in functions(module):
            noalias = noalias_args(f)
            for op in [o for o in walk(f) if o.name == "affine.for"]:
                loops = _chain(op)
                plan = _plan(loops, noalias, self.line_bytes) if loops else None
                if plan is not None and self._pays(op, plan, noalias):
                    _move(loops, *plan[:2])

    def _pays(self, top, plan, noalias) -> bool:
        """Whether `loop-interchange` moves the loop above the band inside it once the spatial
        loop is out (tried on a copy of the nest)."""
        l, m, j = plan
        copy = top.clone(ir.InsertionPoint(top))
        try:
            loops = _chain(copy, top=False)
            assert loops is not None
            _move(loops, l, m)
            return streams(loops[j], noalias, self.line_bytes)
        finally:
            copy.erase()


def _chain(op, top: bool = True) -> Optional[list]:
    """The loops of the perfect nest of plain serial loops `op` heads (None: `op` is not the
    head of one of three loops or more whose innermost body holds only accesses, pure ops,
    `affine.if`s and loops of constant bounds of them: `_ops`). With `top`, `op` must not be the
    only op of such a loop's body."""
    if not plain_loop(op):
        return None
    parent = op.parent
    if top and plain_loop(parent) and len(_body(parent)) == 1:
        return None
    loops = [op]
    while True:
        body = _body(loops[-1])
        if len(body) == 1 and plain_loop(body[0]):
            loops.append(body[0])
            continue
        if len(loops) < 3 or _ops(loops[-1]) is None:
            return None
        return loops


def _body(op) -> list:
    return body_ops(op.regions[0].blocks[0])


def _ops(loop) -> Optional[list]:
    """The ops of `loop`'s body, those in its `affine.if`s and its loops of constant bounds
    (a decomposed T.init's band) included, when each is an access, a pure op or an
    `affine.apply` (None: it holds another op, such as a call)."""
    out, todo = [], [loop.regions[0].blocks[0]]
    while todo:
        for o in body_ops(todo.pop()):
            if o.name == "affine.if" or (
                o.name == "affine.for" and not len(o.operands) and not len(o.results)
            ):
                todo.extend(b for r in o.regions for b in r.blocks)
            elif o.name in ACCESSES or o.name == "affine.apply" or pure(o):
                out.append(o)
            else:
                return None
    return out


def _plan(loops, noalias, line_bytes: int) -> Optional[tuple]:
    """(the spatial loop's place `l`, the place it moves to `m`, the place of the loop above
    the band after the move) in `loops`, or None when the nest does not qualify."""
    n = len(loops)
    leaves = [loop_iv(o) for o in loops]
    ops = _ops(loops[-1]) or []
    try:
        accesses = [Access(o, leaves, noalias) for o in ops if o.name in ACCESSES]
    except NotAffine:
        return None
    stores = [a for a in accesses if a.store]
    if not stores or not all(a.row_major and a.static for a in stores):
        return None
    for s in stores:
        if any(a.may_alias(s) and (a.memref != s.memref or a.index != s.index) for a in accesses):
            return None
        # (each iteration of the nest writes one element: no loop under it moves the store)
        if any(p >= n and not defined_outside(leaves[p], loops[0]) for p in _dims(s)):
            return None
    spatial = [p for p in range(n) if all(s.depends_on(p) for s in stores)]
    reduction = [p for p in range(n) if not any(s.depends_on(p) for s in stores)]
    band = any(o.name == "affine.for" for o in _body(loops[-1]))
    if len(spatial) + len(reduction) != n or not (reduction or band):
        return None
    r = reduction[0] if reduction else n  # (the band's first loop: under the nest, if none)
    inside = [p for p in spatial if p > r]
    if len(inside) > 1 or not all(
        injective(s, [(p, _trips(loops[p])) for p in spatial]) for s in stores
    ):
        return None
    # (none inside: the spatial loop right above the band, when out of the layout's order)
    l = inside[0] if inside else r - 1
    if any(s.lines(l, line_bytes) < 1 for s in stores):
        return None  # (it walks a row already: `for k: for j` of a matmul)
    if any(not a.depends_on(l) for a in accesses):
        return None  # (a load it reuses: a register tile's rows share B's row)
    m = l
    while m > 0 and (m - 1 in reduction or all(_smaller(s, m - 1, l) for s in stores)):
        m -= 1
    if m == l:
        return None
    return l, m, r if l > r else r - 1


def _dims(a) -> set[int]:
    return {p for e in a.index for p in dims_of(e)}


def _smaller(s, p: int, l: int) -> bool:
    """Whether store `s` steps less along leaf `p` than along leaf `l`."""
    step, of_l = s.stride(p), s.stride(l)
    return step is not None and of_l is not None and abs(step) < abs(of_l)


def _trips(op) -> int:
    return constant_extent(Loop(op))


def _move(loops, l: int, m: int) -> None:
    """Loop `l` of the perfect nest `loops` moved up to place `m`: the loops keep their
    places, their ranges rotate (place m takes l's, each of m..l-1 the next one down its own)
    and the uses of their IVs follow."""
    seg = loops[m : l + 1]
    rotate_headers(seg, 1)
    rotate_ivs([loop_iv(o) for o in seg], 1, seg[0])
