"""fuse: a perfect nest of loops -> one loop over the product of their extents.

    for i in range(128):                 for i_j_fused in range(16384):
        for j in range(128):     ==>         block(vi = i_j_fused // 128,
            block(vi = i, vj = j)                  vj = i_j_fused % 128)

Legality: at least one loop, none annotated or thread-bound (TVM); each loop is the only
statement in the body of the previous one (adjacent and perfectly nested); all start at 0; loop variables are used only in block
bindings. With `preserve_unit_iters=False`, unit-extent loops (also the block's other ones,
as TVM) are bound as constants.
"""

import math
from typing import Sequence

from mlir import ir

from tir_mlir.analysis import binding_trees, iter_map
from tir_mlir.analysis.symbolic import SymExpr, product
from tir_mlir.dialect.ops import Block, Loop, body_ops
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import structure as analysis, index
from tir_mlir.analysis.structure import erase


def check(loops: Sequence[ir.Operation]):
    if not loops:
        raise ScheduleError("fuse: expects at least one loop")
    for lp in loops:
        analysis.check_no_annotation(lp, "fuse")
    for outer, inner in zip(loops, loops[1:]):
        if outer == inner:
            raise ScheduleError(f"fuse: loop {Loop(outer).name!r} is given twice")
        children = analysis.loop_children(outer)
        if analysis.parent_op(inner) != outer:
            raise ScheduleError(
                f"fuse: the loops can't be fused because the outer loop "
                f"{Loop(outer).name!r} is not the parent of the inner loop "
                f"{Loop(inner).name!r}"
            )
        if len(children) != 1:
            raise ScheduleError(
                f"fuse: the loops can't be fused because the outer loop "
                f"{Loop(outer).name!r} has more than one child statement "
                f"(not perfectly nested)"
            )
    for lp in loops:
        if Loop(lp).min != 0:
            raise ScheduleError(f"fuse: loop {Loop(lp).name!r} does not start at 0")
        analysis.check_iv_uses(lp, "fuse")


def fuse(loops: Sequence[ir.Operation], *, preserve_unit_iters: bool = True) -> ir.Operation:
    """Fuse the loops (outermost first); returns the new loop. The old loops are erased."""
    check(loops)
    views = [Loop(lp) for lp in loops]
    sizes = [v.extent for v in views]
    name = "_".join(v.name for v in views) + "_fused"
    index_dtype = "int64" if any(v.index_dtype == "int64" for v in views) else "int32"
    if not all(isinstance(s, int) for s in sizes):
        for v in views:
            if not all(analysis.is_block(u) for u in analysis.users([v.iv])):
                raise ScheduleError(
                    f"fuse: loop {v.name!r} is used by a non-affine binding; "
                    f"fusing symbolic extents keeps affine bindings only"
                )
    total = product(sizes)
    new = Loop.build(
        name, total, index_dtype=index_dtype, loc=loops[0].location, ip=ir.InsertionPoint(loops[0])
    )
    term = analysis.terminator(new.body)
    for op in body_ops(views[-1].body):
        op.move_before(term)
    ivs = [v.iv for v in views]
    const_sizes = [s for s in sizes if isinstance(s, int)]
    if len(const_sizes) == len(sizes):
        hi = math.prod(const_sizes) - 1  # (the fused extent, `total`)
        for pos, iv in enumerate(ivs):  # non-affine bindings: (fused // inner) % size
            e = index.floordiv(index.var(0), math.prod(const_sizes[pos + 1 :]), {0: (0, hi)})
            e = index.mod(e, const_sizes[pos], {0: (0, hi)}) if pos else e
            analysis.rewrite_binding_uses(iv, index.to_affine(e), [new.iv])
    for blk in analysis.users(ivs):
        _rebind(blk, ivs, sizes, new.iv, preserve_unit_iters)
    erase(loops[0])
    return new.op


def _rebind(block_op, ivs, sizes, fused_iv, keep_unit):
    old = Block(block_op).dims
    constant = all(isinstance(s, int) for s in sizes)
    trees = binding_trees.before(block_op) if constant else None
    symbols = analysis.block_symbols(block_op)
    keep = [v for v in old if not any(v == iv for iv in ivs)]
    new_dims = keep + [fused_iv]
    f = index.var(len(keep))
    total = product(sizes)
    ranges = {len(keep): (0, index.upper(total) - 1)}
    subst = {} if keep_unit else analysis.unit_loop_consts(block_op)
    for k, v in enumerate(old):
        for pos, iv in enumerate(ivs):
            if v == iv:
                inner = product(sizes[pos + 1 :])
                # a unit loop is 0, as TVM's fuse binds it whatever preserve_unit_iters says
                # (with a symbolic extent beside it no range simplification would find that)
                if sizes[pos] == 1:
                    e = index.Lin()
                elif pos == 0 and isinstance(inner, SymExpr) and isinstance(sizes[0], SymExpr):
                    # TVM's iter-map form when neither the extent nor the divisor is constant
                    e = index.floordiv_by(
                        index.mod_by(f, inner * sizes[0], ranges, symbols), inner, ranges, symbols
                    )
                else:
                    e = index.floordiv_by(f, inner, ranges, symbols)
                    if pos > 0:
                        e = index.mod_by(e, sizes[pos], ranges, symbols)
                subst[k] = e
    new_op = analysis.rebind_block(block_op, new_dims, subst, symbols=symbols)
    if trees is not None:  # TVM's form of the bindings, beside the IR (analysis/binding_trees)
        f, lower, values = ("v", len(keep)), 1, []
        for pos in reversed(range(len(ivs))):  # loop k as TVM's fuse writes it: f % (l * e) // l
            size = sizes[pos]
            inner = f if pos == 0 else iter_map.floormod(f, lower * size)
            values.append((ivs[pos], 0 if size == 1 else iter_map.floordiv(inner, lower)))
            lower *= size
        binding_trees.record(new_op, trees, old, new_dims, values, keep_unit)
