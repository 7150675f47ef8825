"""Compute location (TVM's compute_at, compute_inline): compute_at, reverse_compute_at,
compute_inline, reverse_compute_inline, and TE's compute_root. They move computation between
blocks; the loops and blocks they erase consume their handles.
"""

from typing import List, Sequence, Union

from tir_mlir.schedule.primitives.host import ScheduleHost
from tir_mlir.passes.schedule import compute_at as _at
from tir_mlir.passes.schedule import compute_inline as _inline
from tir_mlir.passes.schedule import compute_root as _root

from tir_mlir.analysis.op_index import sids_of
from tir_mlir.analysis.structure import enclosing_loops
from tir_mlir.schedule.handles import INLINE_SID, ROOT_SID, BlockRV, LoopRV
from tir_mlir.schedule.primitive import primitive


class ComputeLocation(ScheduleHost):
    """Primitives that move computation between blocks."""

    @primitive
    def compute_at(
        self,
        block: Union[BlockRV, Sequence[BlockRV]],
        loop: LoopRV,
        preserve_unit_loops: bool = False,
        index: int = -1,
    ) -> None:
        """Move producer block(s) under `loop`, computing the part its consumers read there.
        A list of blocks (TE create_group + compute_at) is moved consumers first.
        The locations sampled as "root" / "inline" (sample_compute_location) leave the block
        where it is / inline it, like TVM."""
        if isinstance(loop, LoopRV) and loop.sid == ROOT_SID:
            _blocks(self, block)
            return
        if isinstance(loop, LoopRV) and loop.sid == INLINE_SID:
            op = self._block(block)
            before = _loop_sids([op]) + sids_of([op])
            _inline.compute_inline(op)
            self._consume_gone(before, "compute_at")
            return
        ops = _blocks(self, block)
        target = self._resolve(loop, LoopRV)
        before = _loop_sids(ops)
        _at.compute_at(
            ops if isinstance(block, (list, tuple)) else ops[0], target, preserve_unit_loops, index
        )
        self._consume_gone(before, "compute_at")

    @primitive
    def reverse_compute_at(
        self,
        block: Union[BlockRV, Sequence[BlockRV]],
        loop: LoopRV,
        preserve_unit_loops: bool = False,
        index: int = -1,
    ) -> None:
        """Move consumer block(s) under `loop`, consuming what its producers wrote there."""
        ops = _blocks(self, block)
        target = self._resolve(loop, LoopRV)
        before = _loop_sids(ops)
        _at.reverse_compute_at(
            ops if isinstance(block, (list, tuple)) else ops[0], target, preserve_unit_loops, index
        )
        self._consume_gone(before, "reverse_compute_at")

    @primitive
    def compute_inline(self, block: BlockRV) -> None:
        """Inline an elementwise producer into its consumers' loads; the block disappears."""
        op = self._block(block)
        before = _loop_sids([op]) + sids_of([op])
        _inline.compute_inline(op)
        self._consume_gone(before, "compute_inline")

    @primitive
    def reverse_compute_inline(self, block: BlockRV) -> None:
        """Fold an elementwise consumer into its producer's store; the block disappears."""
        op = self._block(block)
        before = _loop_sids([op]) + sids_of([op])
        _inline.reverse_compute_inline(op)
        self._consume_gone(before, "reverse_compute_inline")

    @primitive
    def compute_root(self, block: BlockRV) -> None:
        """TE's compute_root: move a compute_at'ed block back to the function body with its full
        loop nest (loops ax0, ax1, ...), before its first consumer."""
        op = self._block(block)
        before = _loop_sids([op])
        _root.compute_root(op)
        self._consume_gone(before, "compute_root")


def _blocks(sch, block) -> list:
    return (
        [sch._block(b) for b in block] if isinstance(block, (list, tuple)) else [sch._block(block)]
    )


def _loop_sids(ops) -> List[int]:
    return sids_of([lp for op in ops for lp in enclosing_loops(op)])
