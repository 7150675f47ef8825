"""split: one loop -> a perfect nest of loops whose extents are the factors.

    for j in range(128):               for j_0 in range(32):
        block(vj = j)          ==>         for j_1 in range(4):
                                               block(vj = j_0 * 4 + j_1)

Legality: the loop has no annotation or thread binding (TVM); factors are positive ints, at
most one is None (inferred as ceil(extent / rest)); their product is at least the extent; when
it is larger, every block directly under the loop gets `T.where(j_0 * 4 + j_1 < extent)` (unless `disable_predication`). The loop variable may only
be used in block bindings.

On a symbolic extent `n` (docs/symbolic.md) the inferred factor is `T.ceildiv(n, 4)` and the
guard `T.where(j_0 * 4 + j_1 < n)` is added unless the expression alone is a multiple (`n * 4`),
as TVM does; an inferred factor inside the nest makes the strides outside it sizes, a
semi-affine binding `k_0 * ((n + 9) // 10) + k_1` (as `fuse` makes `f // n`); all-constant
factors are refused (they cannot cover every n), and
`disable_predication` is refused unless the program states the divisibility (`T.assume`). With `preserve_unit_iters=False`, unit-extent loops (new ones and
the block's other ones, as TVM) are bound as constants instead of their variable.
"""

import math
from typing import List, Optional, Sequence

from mlir import ir

from tir_mlir.analysis import binding_trees, iter_map
from tir_mlir.analysis.facts import assumed_facts
from tir_mlir.analysis.iter_map import Tree
from tir_mlir.analysis.symbolic import Int, SymExpr, divisible, product, show, tile_count
from tir_mlir.dialect.ops import Block, Loop, body_ops
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import structure as analysis, index
from tir_mlir.analysis.structure import erase
from tir_mlir.ir.wellformed import is_identifier


def infer_factors(
    loop: ir.Operation, factors: Sequence[Optional[int]], extent: Optional[Int] = None
) -> List[Int]:
    """The factors with the None (or -1) one inferred as ceil(extent / the others): on a
    symbolic extent `n`, that one is `T.ceildiv(n, 4)`, the others constants."""
    extent = Loop(loop).extent if extent is None else extent
    if len(factors) < 2 or any(
        f is not None
        and f != -1
        and (not isinstance(f, int) or isinstance(f, bool) or not 0 < f < 1 << 31)
        for f in factors
    ):
        _check_factors(Loop(loop).name, factors)
    if sum(f is None or f == -1 for f in factors) > 1:
        raise ScheduleError(f"split: only one factor can be None, got {list(factors)}")
    known = math.prod(f for f in factors if f is not None and f != -1)
    out = [tile_count(extent, known) if f is None or f == -1 else f for f in factors]
    if isinstance(extent, SymExpr):
        if len(out) == len([f for f in factors if f is not None and f != -1]):
            # TVM: the product must provably cover the extent, which constants cannot do
            raise ScheduleError(
                f"split: the product of factors {out} ({known}) cannot be "
                f"proved to cover the symbolic extent {show(extent)} of loop "
                f"{Loop(loop).name!r} (give one factor as None)"
            )
        return out
    total = math.prod(out)
    assert isinstance(total, int)  # (the factors of a constant extent are constants)
    if total < extent:
        raise ScheduleError(
            f"split: the product of factors {out} ({total}) is smaller "
            f"than the extent {extent} of loop {Loop(loop).name!r}"
        )
    return out


def _check_factors(name: str, factors):
    """Why the factors are refused (their count, or a factor that is not a positive int32)."""
    if len(factors) < 2:
        raise ScheduleError(f"split: loop {name!r} needs at least two factors, got {list(factors)}")
    if sum(f is None or f == -1 for f in factors) > 1:
        raise ScheduleError(f"split: only one factor can be None, got {list(factors)}")
    for k, f in enumerate(factors):
        if f is not None and f != -1 and (not isinstance(f, int) or isinstance(f, bool) or f <= 0):
            raise ScheduleError(
                f"split: factor {k} of loop {name!r} must be a positive int, got {f!r}"
            )
        if f is not None and f >= 1 << 31:
            raise ScheduleError(
                f"split: factor {k} of loop {name!r} ({f}) does not fit in "
                f"int32, the type of loop variables"
            )


def split(
    loop: ir.Operation,
    factors: Sequence[Optional[int]],
    *,
    preserve_unit_iters: bool = True,
    disable_predication: bool = False,
    names: Optional[Sequence[str]] = None,
) -> List[ir.Operation]:
    """Split `loop`; returns the new loops, outermost first. `loop` is erased."""
    lv = Loop(loop)
    extent = lv.extent
    sizes = infer_factors(loop, factors, extent)
    if names is not None and len(names) != len(sizes):
        raise ScheduleError(f"split: {len(sizes)} factors but {len(names)} names")
    bad = [n for n in names or () if not isinstance(n, str) or not is_identifier(n)]
    if bad:
        raise ScheduleError(f"split: loop name {bad[0]!r} is not a Python identifier")
    analysis.check_iv_uses(loop, "split")
    analysis.check_no_annotation(loop, "split")
    names = list(names) if names is not None else [f"{lv.name}_{k}" for k in range(len(sizes))]
    if lv.min != 0:
        raise ScheduleError(f"split: loop {lv.name!r} does not start at 0")
    covers = product(sizes) - extent  # how far the new nest runs past the extent
    predicate = covers != 0 and not disable_predication
    if covers != 0 and disable_predication and isinstance(extent, SymExpr):
        known = math.prod(f for f in sizes if isinstance(f, int))
        if not divisible(extent, known, assumed_facts(analysis.func_of(loop))):
            raise ScheduleError(
                f"split: disable_predication needs {show(extent)} % {known} == 0 for loop "
                f"{lv.name!r}, which the program does not state (add "
                f"T.assume({show(extent)} % {known} == 0))"
            )

    if any(isinstance(f, SymExpr) for f in sizes[1:]) and not all(
        analysis.is_block(u) for u in analysis.users([lv.iv])
    ):
        raise ScheduleError(
            f"split: loop {lv.name!r} is used outside block bindings, where a stride that "
            f"is a size ({show(product(sizes[1:]))}) cannot be written; give the first "
            f"factor as None"
        )

    # --- rewrite: new nest in place of the loop --------------------------------------------
    loc, dtype = loop.location, lv.index_dtype
    new, ip = [], ir.InsertionPoint(loop)
    for name, size in zip(names, sizes):
        inner = Loop.build(name, size, index_dtype=dtype, loc=loc, ip=ip)
        new.append(inner.op)
        ip = ir.InsertionPoint.at_block_terminator(inner.body)
    end = analysis.terminator(inner.body)
    for op in body_ops(lv.body):
        op.move_before(end)
    ivs = [Loop(n).iv for n in new]
    users = analysis.users([lv.iv])
    if not all(analysis.is_block(u) for u in users):  # a non-affine binding, inner bounds
        whole = index.to_affine(fused_expr(range(len(ivs)), sizes, preserve_unit_iters))
        analysis.rewrite_binding_uses(lv.iv, whole, ivs)
        users = analysis.users([lv.iv])
    # like TVM: the predicate goes on every block directly under the loop, used or not (a
    # block ignoring the loop must still run once per original iteration)
    children = analysis.child_blocks(new[-1]) if predicate else []
    others = [c for c in children if not any(c == u for u in users)]
    for blk in users + others:
        _rebind(
            blk,
            lv.iv,
            ivs,
            sizes,
            extent,
            preserve_unit_iters,
            predicate and any(blk == c for c in children),
        )
    erase(loop)
    return new


def fused_expr(
    positions: Sequence[int],
    sizes: Sequence[Int],
    keep_unit: bool,
    symbols: Optional[List[ir.Value]] = None,
) -> index.Lin:
    """((y0 * s1 + y1) * s2 + y2) ...: the value of the split loop from its new variables.
    A stride that is a size (an inferred factor inside: `k_0 * ((n + 9) // 10)`) makes a
    semi-affine term, its expression over `symbols` (extended with those it uses)."""
    terms, stride = [], 1  # (built directly: a replay makes thousands)
    for pos, size in reversed(list(zip(positions, sizes))):
        if size != 1 or keep_unit:
            if isinstance(stride, SymExpr):
                assert symbols is not None, "a symbolic stride needs the block's symbols"
                atom = ("x", ir.AffineDimExpr.get(pos) * stride.embed(symbols))
                terms.append((atom, 1))
            else:
                terms.append((("v", pos), stride))
        stride = stride * size
    return index.Lin(tuple(terms[::-1]))


def _rebind(block_op, iv, ivs, sizes, extent, keep_unit, predicate):
    b = Block(block_op)
    old = b.dims
    constant = all(isinstance(s, int) for s in sizes) and isinstance(extent, int)
    trees = binding_trees.before(block_op) if constant else None
    keep = [v for v in old if v != iv]
    new_dims = keep + ivs
    positions = list(range(len(keep), len(new_dims)))
    extra, symbols = [], analysis.block_symbols(block_op)
    expr = fused_expr(positions, sizes, keep_unit, symbols)
    subst = {k: expr for k, v in enumerate(old) if v == iv}
    if not keep_unit:
        subst = {**analysis.unit_loop_consts(block_op), **subst}
    if predicate:  # extent - 1 - expr >= 0, unit loops included (as TVM writes it)
        whole = fused_expr(positions, sizes, True, symbols)
        if isinstance(extent, SymExpr):
            extra.append(index.to_affine(index.const(-1) + whole.scale(-1)) + extent.embed(symbols))
        else:
            extra.append(index.to_affine(index.const(extent - 1) + whole.scale(-1)))
    new_op = analysis.rebind_block(block_op, new_dims, subst, extra, symbols)
    if trees is not None:  # TVM's form of the bindings, beside the IR (analysis/binding_trees)
        value: Tree = 0  # the old loop as TVM's split writes it: (y0 * s1 + y1) * s2 + y2
        for pos, size in zip(positions, sizes):
            value = iter_map.add(iter_map.mul(value, size), ("v", pos))
        appended = value if predicate else None  # TVM's bound: value < extent
        binding_trees.record(new_op, trees, old, new_dims, [(iv, value)], keep_unit, appended)
