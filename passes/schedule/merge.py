"""merge: merge consecutive sibling loops of the same extent into one loop running their
bodies in turn (TVM 0.21's output):

    for i, j in T.grid(8, 8): block "B"             for i_m in range(8):
    for i, j in T.grid(8, 8): block "C"     ==>         for j in range(8): block "B"
                                                        for j in range(8): block "C"

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
from tir_mlir.passes.schedule import analysis
from tir_mlir.passes.schedule.buffer_util import accesses, buffer_name, move_body

WHO = "merge"


def merge(loops: List[ir.Operation]) -> ir.Operation:
    views = [Loop(lp) for lp in loops]
    if len(loops) < 2 or any(a == b for k, a in enumerate(loops) for b in loops[k + 1:]):
        raise ScheduleError(f"{WHO}: needs at least two distinct loops")
    for lp in views:
        if lp.annotations or lp.kind != "serial":
            raise ScheduleError(f"{WHO}: loop {lp.name!r} has an annotation, a thread binding "
                                f"or a non-serial kind")
        if lp.min != 0:
            raise ScheduleError(f"{WHO}: loop {lp.name!r} does not start at 0")
    if len({lp.extent for lp in views}) != 1:
        raise ScheduleError(f"{WHO}: the loops' extents must be the same, got "
                            f"{[lp.extent for lp in views]}")
    parent = loops[0].parent
    if any(lp.parent != parent for lp in loops):
        raise ScheduleError(f"{WHO}: the loops must be in the same loop body (siblings)")
    siblings = [s.operation for s in parent.regions[0].blocks[0].operations] \
        if parent.name == "func.func" else [s.operation for s in loops[0].block.operations]
    pos = sorted(next(k for k, s in enumerate(siblings) if s == lp) for lp in loops)
    if pos != list(range(pos[0], pos[0] + len(pos))):
        raise ScheduleError(f"{WHO}: the loops must be consecutive statements")
    ordered = [siblings[k] for k in pos]
    _check_dependences(ordered)

    # --- rewrite ------------------------------------------------------------------------------
    first = Loop(ordered[0])
    new = Loop.build(f"{views[0].name}_m", first.extent, index_dtype=first.index_dtype,
                     loc=first.op.location, ip=ir.InsertionPoint(first.op))
    for op in ordered:
        lp = Loop(op)
        lp.iv.replace_all_uses_with(new.iv)
        move_body(lp.body, new.body)
        op.erase()
    return new.op


def _check_dependences(loops: List[ir.Operation]):
    by_buffer = {}                 # buffer -> [(loop index, kind, slice dims)]
    for n, lp in enumerate(loops):
        iv = Loop(lp).iv
        for blk in analysis.blocks_under(lp):
            for op, kind, buf in accesses(blk):
                if analysis.parent_op(op) is not None and _owner_block(op) != blk:
                    continue                       # a nested block's access: its own turn
                by_buffer.setdefault(buf, []).append((n, kind, _slice_dims(Block(blk), op, iv)))
    for buf, uses in by_buffer.items():
        if len({n for n, _, _ in uses}) < 2 or not any(k == "store" for _, k, _ in uses):
            continue
        if not set.intersection(*[dims for _, _, dims in uses]):
            raise ScheduleError(f"{WHO}: buffer {buffer_name(buf)!r} is shared by the merged "
                                f"loops at indices that do not follow the loop variable: the "
                                f"merge could reorder its reads and writes")


def _owner_block(op: ir.Operation) -> ir.Operation:
    p = analysis.parent_op(op)
    while not analysis.is_block(p):
        p = analysis.parent_op(p)
    return p


def _slice_dims(blk: Block, op: ir.Operation, iv: ir.Value) -> set:
    """Buffer dimensions the access indexes by an iter var bound to `iv` itself."""
    idx = list(op.operands)[1 if op.name == "memref.load" else 2:]
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
