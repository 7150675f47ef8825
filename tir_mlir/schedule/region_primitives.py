"""Schedule methods of issue 13's buffer-region primitives: set_axis_separator,
annotate_buffer_access, unsafe_hide_buffer_access, pad_einsum, rolling_buffer (TVM 0.21
signatures).

A mixin of `Schedule` (a base class of it in schedule.py); each method is a `@primitive`
delegating to a rewrite in `tir_mlir/passes/schedule/`.
"""
from typing import List, Optional, Tuple, Union

from tir_mlir.dialect.ops import Block
from tir_mlir.passes.schedule import reindex as _reindex
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
