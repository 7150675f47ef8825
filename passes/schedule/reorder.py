"""reorder: permute loops of one chain; loops of the chain not given stay in place.

    for i:                    for k:
      for j:         ==>        for j:          reorder(k, i) (j is not given: it stays)
        for k:                    for i:
          body                      body

Legality: no loop is given twice; the loops lie on one chain (each is an ancestor or a
descendant of every other); every loop of the chain from the outermost given loop down to
(but excluding) the innermost given one has exactly one statement in its body; the blocks
under the innermost given loop have only spatial and reduction iter vars and an affine
binding (affine_binding.py), as TVM requires. Blocks refer to loops through their variables,
which move with the loops, so no binding changes.
"""

from typing import List, Sequence

from mlir import ir

from tir_mlir.dialect.ops import Block, Loop, body_ops
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import structure as analysis
from tir_mlir.analysis.affine_binding import affine_binding_error


def check(loops: Sequence[ir.Operation]) -> List[ir.Operation]:
    """The loops sorted outermost first, after checking they form one chain."""
    if len({analysis.op_of(lp) for lp in loops}) != len(loops):  # (hashed by the op)
        for k, lp in enumerate(loops):
            if any(lp == other for other in loops[:k]):
                raise ScheduleError(
                    f"reorder: loop {Loop(lp).name!r} appears in the input array multiple times"
                )
    # one chain: sorted by depth, each loop encloses the next (ancestry is transitive)
    parent, depth = _tree(loops)
    order = sorted(range(len(loops)), key=lambda k: depth[loops[k]])
    for a, b in zip(order, order[1:]):
        up = loops[b]
        while up is not None and depth[up] > depth[loops[a]]:
            up = parent[up]
        if up is None or up != loops[a]:
            raise ScheduleError(
                f"reorder: loops {Loop(loops[a]).name!r} and "
                f"{Loop(loops[b]).name!r} are not in the same loop chain"
            )
    return [loops[k] for k in order]


def _tree(ops):
    """(parent, depth) of the ops and their ancestors, each ancestor visited once (the loops
    of a chain share most of theirs)."""
    parent, depth = {}, {}
    for op in ops:
        path, p = [], op
        while p is not None and p not in depth:
            path.append(p)
            p = analysis.parent_op(p)
        d = depth[p] if p is not None else -1
        for q, up in zip(reversed(path), [p] + path[:0:-1]):
            d += 1
            depth[q], parent[q] = d, up
    return parent, depth


def reorder(loops: Sequence[ir.Operation]):
    by_depth = check(loops)
    if len(loops) < 2:
        return
    top, bottom = by_depth[0], by_depth[-1]
    above = [Loop(lp).iv for lp in analysis.enclosing_loops(top)]
    analysis.check_affine_bindings(top, "reorder", above)
    chain = analysis.chain_between(top, bottom)
    for outer, inner in zip(chain, chain[1:]):
        if analysis.parent_op(inner) != outer:
            raise ScheduleError(
                f"reorder: loop {Loop(inner).name!r} is not directly inside "
                f"loop {Loop(outer).name!r} (a block or branch lies between)"
            )
    for lp in chain[:-1]:
        if len(Loop(lp).body.operations) != 2:  # one statement and the yield
            raise ScheduleError(
                f"reorder: loop {Loop(lp).name!r} has more than one child "
                f"statement, so the loops are not a perfect nest"
            )
    for blk in analysis.child_blocks(bottom):
        b = Block(blk)
        if any(t not in ("S", "R") for t in b.iter_types):
            raise ScheduleError(
                f"reorder: the block {b.name!r} under the loops to be "
                f"reordered has block iter type other than data-parallel or "
                f"reduction"
            )
        # (loops above the reordered ones are constants there, as TVM checks the binding)
        why = affine_binding_error(blk, above)
        if why is not None:
            raise ScheduleError(
                f"reorder: the block {b.name!r} is required to have an affine binding: {why}"
            )
    given = iter(loops)  # (Python wrappers of one op may differ: compare with ==, not id)
    moving = {analysis.op_of(lp) for lp in loops}
    order = [next(given) if analysis.op_of(lp) in moving else lp for lp in chain]
    _check_bounds_stay_inside(order)

    # --- rewrite: park body and loops after `top`, then nest them in the new order ---------
    anchor = _next_op(top)
    body = body_ops(Loop(bottom).body)
    for op in body:
        op.move_before(anchor)
    for lp in chain[:0:-1]:  # innermost first: each is empty when moved
        lp.move_before(anchor)
    order[0].move_before(anchor)
    for outer, inner in zip(order, order[1:]):
        inner.move_before(analysis.terminator(Loop(outer).body))
    for op in body:
        op.move_before(analysis.terminator(Loop(order[-1]).body))


def _check_bounds_stay_inside(order):
    """A loop whose bounds read another loop's variable (`for j in range(i)`) stays inside it."""
    position = {Loop(lp).iv: k for k, lp in enumerate(order)}
    for k, lp in enumerate(order):
        loop = Loop(lp)
        if loop.constant_bounds:
            continue
        for v in list(loop.lower_bound[1]) + list(loop.upper_bound[1]):
            if position.get(v, -1) > k:
                raise ScheduleError(
                    f"reorder: the bounds of loop {loop.name!r} depend on loop "
                    f"{Loop(order[position[v]]).name!r}, which would move "
                    f"inside it"
                )


def _next_op(op: ir.Operation) -> ir.Operation:
    ops = [analysis.op_of(o) for o in op.block.operations]
    k = next(i for i, o in enumerate(ops) if o == op)
    return ops[k + 1]
