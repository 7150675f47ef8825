"""Schedule methods of issue 13's buffer-region primitives: set_axis_separator,
annotate_buffer_access, unsafe_hide_buffer_access, pad_einsum, rolling_buffer (TVM 0.21
signatures).

A mixin of `Schedule` (a base class of it in schedule.py); each method is a `@primitive`
delegating to a rewrite in `tir_mlir/passes/schedule/`.
"""
from typing import Callable, List, Optional, Tuple, Union

from tir_mlir.dialect.ops import Block
from tir_mlir.passes.schedule import annotate_buffer_access as _annotate
from tir_mlir.passes.schedule import hide_buffer_access as _hide
from tir_mlir.passes.schedule import pad_einsum as _pad_einsum
from tir_mlir.passes.schedule import reindex as _reindex
from tir_mlir.passes.schedule import rolling_buffer as _rolling
from tir_mlir.schedule import lambda_exprs as symbolic
from tir_mlir.passes.schedule import set_axis_separator as _axis_sep
from tir_mlir.schedule.handles import BlockRV
from tir_mlir.schedule.primitive import primitive


class RegionPrimitives:

    @primitive
    def set_axis_separator(self, block: Union[BlockRV, str], buffer: Union[Tuple[str, int], str],
                           axis_separators: Optional[List[int]]) -> None:
        """Give the buffer `block` reads or writes (("read" | "write", index) or a name;
        recorded as the pair) these axis separators (`T.alloc_buffer(...,
        axis_separators=[1])`); None or [] removes them."""
        blk = Block(self._block(block))
        kind, i = _reindex.buffer_index(blk, buffer, _axis_sep.WHO)
        seps = list(axis_separators or [])
        self._note(buffer=(kind, i), axis_separators=seps)
        _axis_sep.set_axis_separator(blk, kind, i, seps)

    @primitive
    def annotate_buffer_access(self, block: BlockRV, buffer_index: int, buf_type: str,
                               gen_new_ranges: Callable) -> None:
        """Set the region of T.reads / T.writes entry `buffer_index` (`buf_type` "read" or
        "write") of `block` by hand: `gen_new_ranges` maps the iter vars to one expression or
        (begin, end) pair per buffer dimension (a lambda or its text; recorded as text).
        Only the printed regions change, not the statements."""
        blk = Block(self._block(block))
        region = _annotate.pick(blk, buffer_index, buf_type, _annotate.WHO)
        fn = symbolic.from_text(gen_new_ranges)
        ranges, text = _annotate.new_ranges(blk, fn, len(region.ranges))
        self._note(gen_new_ranges=text)
        _annotate.annotate_buffer_access(blk, buffer_index, buf_type, ranges)

    @primitive
    def unsafe_hide_buffer_access(self, block: BlockRV, buf_type: str,
                                  buf_index_array: List[int]) -> None:
        """Leave T.reads / T.writes entries `buf_index_array` (`buf_type` "read" or "write")
        of `block` out of its printed regions (TVM: to let tensorize match a block that reads
        index buffers). The accesses stay, and our dependence checks still see them."""
        self._note(buf_index_array=list(buf_index_array))
        _hide.unsafe_hide_buffer_access(Block(self._block(block)), buf_type,
                                        list(buf_index_array))

    @primitive
    def pad_einsum(self, block: Union[BlockRV, str], padding: List[int]) -> None:
        """Pad the iteration domain of einsum block `block` to multiples of `padding` (one
        per iter var), through zero-padded `<buf>_pad` copies of its inputs and a padded
        output copied back."""
        self._note(padding=list(padding) if isinstance(padding, (list, tuple)) else padding)
        _pad_einsum.pad_einsum(Block(self._block(block)), padding)

    @primitive
    def rolling_buffer(self, block: Union[BlockRV, str], write_buffer_index: int) -> None:
        """Keep only a sliding window of intermediate buffer `write_buffer_index` of
        producer `block` along its outermost overlapping dimension (indices taken modulo the
        window) and skip recomputing the overlap after a loop's first iteration."""
        _rolling.rolling_buffer(Block(self._block(block)), write_buffer_index)
