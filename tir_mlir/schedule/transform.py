"""TVM's `tvm.tir.schedule.transform` over a tir_mlir Schedule.

    tile_with_tensor_intrin(sch, block, "dot_16x4_vnni")    -> LoopRV, or None

Tiles the loops around `block` to the shape of a tensor intrinsic's desc, as TVM's
TileWithTensorIntrin: `get_tensorize_loop_mapping` (tir_mlir/schedule/analysis.py) pairs block
loops with desc loops; each paired loop is split `[None, desc extent]` and the inner parts are
moved innermost in the desc's loop order, so `sch.tensorize(result, intrin)` can follow. The
result is the outermost of them. With `allow_padding`, a block whose loops the desc extents do
not divide is first padded (`pad_einsum`), and the original producers / consumers of its padded
copies are inlined into them, as TVM does. Like any schedule calls, these are recorded in the
trace (split, reorder, pad_einsum, compute_inline).
"""

from typing import List, Optional

from tir_mlir.schedule.analysis import Desc, get_tensorize_loop_mapping
from tir_mlir.schedule.handles import BlockRV, LoopRV


def tile_with_tensor_intrin(
    sch, block: BlockRV, intrin_name: Desc, allow_padding: bool = False
) -> Optional[LoopRV]:
    """Tile the loops of `block` for intrinsic `intrin_name` (a registered name, or the desc
    as a module or TVMScript text); None when its loops do not map onto the desc's."""
    info = get_tensorize_loop_mapping(sch, block, intrin_name, allow_padding)
    if info is None or not info.loop_map:
        return None
    if info.block_iter_paddings is not None:
        _pad(sch, block, info.block_iter_paddings)
    loops = sch.get_loops(block)
    by_sref = {sch.get_sref(lp): lp for lp in loops}
    # (the paired loops resolved to handles first: a split replaces the loop it splits)
    pairs = [(by_sref[sref], desc_loop) for sref, desc_loop in info.loop_map.items()]
    inner_sids, suffix = set(), [None] * len(pairs)
    for lp, desc_loop in pairs:
        extent = desc_loop.extent
        assert isinstance(extent, int)  # the mapping pairs constant desc loops only
        _, inner = sch.split(lp, [None, int(extent)])
        inner_sids.add(inner.sid)
        suffix[info.desc_loop_indexer[desc_loop]] = inner
    order: List[LoopRV] = []
    meet = False
    for lp in sch.get_loops(block):
        if lp.sid in inner_sids:
            meet = True
        elif meet:
            order.append(lp)
    sch.reorder(*order, *suffix)
    return suffix[0]


def _pad(sch, block: BlockRV, paddings: List[int]) -> None:
    """pad_einsum, then the padded copies' original producers / consumers inlined into them."""

    def sids(blocks):
        return {b.sid for b in blocks}

    producers, consumers = sids(sch.get_producers(block)), sids(sch.get_consumers(block))
    sch.pad_einsum(block, paddings)
    inline = []
    for p in sch.get_producers(block):
        originals = sch.get_producers(p)
        if p.sid not in producers and originals:
            inline.append(originals[0])  # computes into the padded copy
    for c in sch.get_consumers(block):
        if c.sid not in consumers and sch.get_consumers(c):
            inline.append(c)  # the copy back, into its consumer
    for b in inline:
        sch.compute_inline(b)
