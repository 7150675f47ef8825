"""merge: merge consecutive sibling loops of the same extent into one loop running their
bodies in turn (TVM 0.21's output):

    for i, j in T.grid(8, 8): block "B"             for i_m in range(8):
    for i, j in T.grid(8, 8): block "C"     ==>         for j in range(8): block "B"
                                                        for j in range(8): block "C"

Loops at the same depth of different nests merge with the loops above them (TVM's chains):
each nest's loops from the common body down to the given one, each the only statement of the
one above, with the same extents level by level; every level becomes one `_m` loop. Here
these nests must share no buffer that one of them writes (the merge interleaves them).

Legality (TVM's): at least two distinct loops, serial without annotations, starting at 0, of
the same extent, in one loop body (or the function body). Here also: the loops are consecutive
statements (TVM 0.21 itself fails when they make up the whole body), and merging keeps the
dependences: every buffer written in one loop and accessed in another is accessed, in all of
them, at a dimension indexed by an iter var bound to the loop itself (iteration t of the merged
loop touches only slice t), so no iteration reads what a later one writes.
"""

from typing import List

from mlir import ir

from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import structure as analysis
from tir_mlir.analysis.buffer_util import accesses, buffer_name, move_body

WHO = "merge"


def merge(loops: List[ir.Operation]) -> ir.Operation:
    views = [Loop(lp) for lp in loops]
    if len(loops) < 2 or any(a == b for k, a in enumerate(loops) for b in loops[k + 1 :]):
        raise ScheduleError(f"{WHO}: needs at least two distinct loops")
    for lp in views:
        if lp.annotations or lp.kind != "serial":
            raise ScheduleError(
                f"{WHO}: loop {lp.name!r} has an annotation, a thread binding or a non-serial kind"
            )
        if lp.min != 0:
            raise ScheduleError(f"{WHO}: loop {lp.name!r} does not start at 0")
    if len({lp.extent for lp in views}) != 1:
        raise ScheduleError(
            f"{WHO}: the loops' extents must be the same, got {[lp.extent for lp in views]}"
        )
    parent = loops[0].parent
    if any(lp.parent != parent for lp in loops):
        return _merge_chains(loops)
    siblings = (
        [s.operation for s in parent.regions[0].blocks[0].operations]
        if parent is not None and parent.name == "func.func"
        else [s.operation for s in loops[0].block.operations]
    )
    pos = sorted(next(k for k, s in enumerate(siblings) if s == lp) for lp in loops)
    if pos != list(range(pos[0], pos[0] + len(pos))):
        raise ScheduleError(f"{WHO}: the loops must be consecutive statements")
    ordered = [siblings[k] for k in pos]
    _check_dependences(ordered)

    # --- rewrite ------------------------------------------------------------------------------
    first = Loop(ordered[0])
    new = Loop.build(
        f"{views[0].name}_m",
        first.extent,
        index_dtype=first.index_dtype,
        loc=first.op.location,
        ip=ir.InsertionPoint(first.op),
    )
    for op in ordered:
        lp = Loop(op)
        lp.iv.replace_all_uses_with(new.iv)
        move_body(lp.body, new.body)
        analysis.erase(op)
    return new.op


def _check_dependences(loops: List[ir.Operation]):
    by_buffer = {}  # buffer -> [(loop index, kind, slice dims)]
    for n, lp in enumerate(loops):
        iv = Loop(lp).iv
        for blk in analysis.blocks_under(lp):
            for op, kind, buf in accesses(blk):
                if analysis.parent_op(op) is not None and _owner_block(op) != blk:
                    continue  # a nested block's access: its own turn
                by_buffer.setdefault(buf, []).append((n, kind, _slice_dims(Block(blk), op, iv)))
    for buf, uses in by_buffer.items():
        if len({n for n, _, _ in uses}) < 2 or not any(k == "store" for _, k, _ in uses):
            continue
        if not set.intersection(*[dims for _, _, dims in uses]):
            raise ScheduleError(
                f"{WHO}: buffer {buffer_name(buf)!r} is shared by the merged "
                f"loops at indices that do not follow the loop variable: the "
                f"merge could reorder its reads and writes"
            )


def _owner_block(op: ir.Operation) -> ir.Operation:
    p = analysis.parent_op(op)
    while p is not None and not analysis.is_block(p):
        p = analysis.parent_op(p)
    if p is None:
        raise ValueError(f"{op.name} is not inside a block")
    return p


def _slice_dims(blk: Block, op: ir.Operation, iv: ir.Value) -> set:
    """Buffer dimensions the access indexes by an iter var bound to `iv` itself."""
    idx = list(op.operands)[1 if op.name == "memref.load" else 2 :]
    args = list(blk.iter_vars) + (list(blk.init.arguments) if blk.init is not None else [])
    n = len(blk.iter_names)
    out = set()
    for d, v in enumerate(idx):
        k = next((i for i, a in enumerate(args) if a == v), None)
        if k is None:
            continue
        e = blk.bindings.results[k % n]
        if isinstance(e, ir.AffineDimExpr) and blk.dims[e.position] == iv:
            out.add(d)
    return out


def _merge_chains(loops: List[ir.Operation]) -> ir.Operation:
    chains = [analysis.enclosing_loops(lp) + [lp] for lp in loops]  # outermost first
    depth = 0  # levels shared by every chain
    while all(len(c) > depth for c in chains) and len({c[depth] for c in chains}) == 1:
        depth += 1
    chains = [c[depth:] for c in chains]
    if len({len(c) for c in chains}) != 1 or not chains[0]:
        raise ScheduleError(f"{WHO}: the loops must be at the same depth below a common loop body")
    for c in chains:
        for outer, inner in zip(c, c[1:]):
            if analysis.loop_children(outer) != [inner]:
                raise ScheduleError(
                    f"{WHO}: loop {Loop(inner).name!r} is not the only child "
                    f"of loop {Loop(outer).name!r}"
                )
    for level in zip(*chains):
        views = [Loop(lp) for lp in level]
        if (
            any(v.annotations or v.kind != "serial" or v.min != 0 for v in views)
            or len({v.extent for v in views}) != 1
        ):
            raise ScheduleError(
                f"{WHO}: the loops above the merged ones must be serial, "
                f"start at 0 and have the same extents level by level"
            )
    tops = [c[0] for c in chains]
    parent = tops[0].parent
    if any(t.parent != parent for t in tops):
        raise ScheduleError(f"{WHO}: the loops must be in the same loop body (siblings)")
    stmts = [s.operation for s in tops[0].block.operations]
    pos = sorted(next(k for k, s in enumerate(stmts) if s == t) for t in tops)
    if pos != list(range(pos[0], pos[0] + len(pos))):
        raise ScheduleError(f"{WHO}: the loops must be consecutive statements")
    order = [next(c for c in chains if c[0] == stmts[k]) for k in pos]
    _check_disjoint([c[0] for c in order])

    # --- rewrite: one new loop per level, the innermost bodies in program order ------------------
    ip, news = ir.InsertionPoint(order[0][0]), []
    for lp in order[0]:
        v = Loop(lp)
        new = Loop.build(f"{v.name}_m", v.extent, index_dtype=v.index_dtype, loc=lp.location, ip=ip)
        news.append(new)
        ip = ir.InsertionPoint(analysis.terminator(new.body))
    for c in order:
        for lp, new in zip(c, news):
            Loop(lp).iv.replace_all_uses_with(new.iv)
        move_body(Loop(c[-1]).body, news[-1].body)
        analysis.erase(c[0])
    return news[0].op


def _check_disjoint(tops: List[ir.Operation]):
    """No buffer written under one of the nests is accessed under another."""
    uses = [{(v, k) for b in analysis.blocks_under(t) for _, k, v in accesses(b)} for t in tops]
    for n, mine in enumerate(uses):
        written = {v for v, k in mine if k == "store"}
        for m, other in enumerate(uses):
            shared = written & {v for v, _ in other} if m != n else set()
            if shared:
                raise ScheduleError(
                    f"{WHO}: buffer {buffer_name(next(iter(shared)))!r} is "
                    f"written under one merged nest and accessed under "
                    f"another: merging them would interleave those accesses"
                )
