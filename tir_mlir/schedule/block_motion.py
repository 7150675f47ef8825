"""Schedule methods that move computation between blocks: compute_at, reverse_compute_at,
compute_inline, reverse_compute_inline (TVM 0.21 signatures) and compute_root (TE's).

A mixin of Schedule (a base class of it in schedule.py); each method is a `@primitive` (trace
record, snapshot/restore on error). The rewrites live in
tir_mlir/passes/schedule/{compute_at,compute_inline,compute_root}.py.
"""
from typing import List, Sequence, Union

from mlir import ir

from tir_mlir.passes.schedule import compute_at as _at
from tir_mlir.passes.schedule import compute_inline as _inline
from tir_mlir.passes.schedule import compute_root as _root
from tir_mlir.analysis.structure import SID, enclosing_loops
from tir_mlir.schedule.handles import INLINE_SID, ROOT_SID, BlockRV, LoopRV
from tir_mlir.schedule.primitive import primitive


def _sids(ops) -> List[int]:
    return [ir.IntegerAttr(o.attributes[SID]).value for o in ops if SID in o.attributes]


def _consume_erased(sch, before: Sequence[int], by: str, last: bool = False):
    """Mark the handles of ops that the rewrite erased (sids gone from the module). `last`:
    the primitive changes nothing after this, so an index walked here is the module's."""
    known = (sch._ops, sch._pre_index)
    index = sch._index(force=True)
    # (an index not known before this call was just walked: no second walk for `missing`)
    fresh = not any(index is k for k in known)
    for sid in index.missing(before, fresh=fresh):
        sch._consumed[sid] = (by, sch._step)
    if fresh and last:
        index.complete = index.names = index.settled = True


def _blocks(sch, block) -> list:
    return [sch._block(b) for b in block] if isinstance(block, (list, tuple)) \
        else [sch._block(block)]


def _loop_sids(ops) -> List[int]:
    return _sids([lp for op in ops for lp in enclosing_loops(op)])


class BlockMotion:
    """Schedule primitives that move computation between blocks."""

    @primitive(lookups_first=True, tracks_lookups=True)   # (not keeps_index: placement)
    def compute_at(self, block: Union[BlockRV, Sequence[BlockRV]], loop: LoopRV,
                   preserve_unit_loops: bool = False, index: int = -1) -> None:
        """Move producer block(s) under `loop`, computing the part its consumers read there.
        A list of blocks (TE create_group + compute_at) is moved consumers first.
        The locations sampled as "root" / "inline" (sample_compute_location) leave the block
        where it is / inline it, like TVM."""
        if isinstance(loop, LoopRV) and loop.sid == ROOT_SID:
            _blocks(self, block)
            return
        if isinstance(loop, LoopRV) and loop.sid == INLINE_SID:
            op = self._block(block)
            before = _loop_sids([op]) + _sids([op])
            _inline.compute_inline(op)
            _consume_erased(self, before, "compute_at", last=True)
            return
        ops = _blocks(self, block)
        target = self._resolve(loop, LoopRV)
        before = _loop_sids(ops)
        _at.compute_at(ops if isinstance(block, (list, tuple)) else ops[0], target,
                       preserve_unit_loops, index)
        _consume_erased(self, before, "compute_at", last=True)

    @primitive(lookups_first=True, tracks_lookups=True)   # (not keeps_index: placement)
    def reverse_compute_at(self, block: Union[BlockRV, Sequence[BlockRV]], loop: LoopRV,
                           preserve_unit_loops: bool = False, index: int = -1) -> None:
        """Move consumer block(s) under `loop`, consuming what its producers wrote there."""
        ops = _blocks(self, block)
        target = self._resolve(loop, LoopRV)
        before = _loop_sids(ops)
        _at.reverse_compute_at(ops if isinstance(block, (list, tuple)) else ops[0], target,
                               preserve_unit_loops, index)
        _consume_erased(self, before, "reverse_compute_at", last=True)

    @primitive(keeps_index=True)
    def compute_inline(self, block: BlockRV) -> None:
        """Inline an elementwise producer into its consumers' loads; the block disappears."""
        op = self._block(block)
        before = _loop_sids([op]) + _sids([op])
        _inline.compute_inline(op)
        _consume_erased(self, before, "compute_inline")

    @primitive(keeps_index=True)
    def reverse_compute_inline(self, block: BlockRV) -> None:
        """Fold an elementwise consumer into its producer's store; the block disappears."""
        op = self._block(block)
        before = _loop_sids([op]) + _sids([op])
        _inline.reverse_compute_inline(op)
        _consume_erased(self, before, "reverse_compute_inline")

    @primitive
    def compute_root(self, block: BlockRV) -> None:
        """TE's compute_root: move a compute_at'ed block back to the function body with its full
        loop nest (loops ax0, ax1, ...), before its first consumer."""
        op = self._block(block)
        before = _loop_sids([op])
        _root.compute_root(op)
        _consume_erased(self, before, "compute_root")
