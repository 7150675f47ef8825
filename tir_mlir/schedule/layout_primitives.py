"""Schedule methods of issue 13's padding and layout primitives: decompose_padding,
can_decompose_padding, reindex, reorder_block_iter_var, transform_block_layout, unsafe_set_dtype
(TVM 0.21 signatures).

A mixin of `Schedule` (a base class of it in schedule.py); each method is a `@primitive`
delegating to a rewrite in `tir_mlir/passes/schedule/`.
"""
from typing import Callable, List, Tuple, Union

from tir_mlir.context import get_context
from tir_mlir.dialect.ops import Block
from tir_mlir.errors import ScheduleError
from tir_mlir.passes.schedule import decompose_padding as _padding
from tir_mlir.passes.schedule import reindex as _reindex
from tir_mlir.passes.schedule import reorder_block_iter_var as _reorder_iters
from tir_mlir.schedule import lambda_exprs as symbolic
from tir_mlir.passes.schedule import transform_block_layout as _block_layout
from tir_mlir.passes.schedule import unsafe_set_dtype as _set_dtype
from tir_mlir.schedule.handles import BlockRV, LoopRV
from tir_mlir.schedule.primitive import primitive


class LayoutPrimitives:

    @primitive
    def decompose_padding(self, block: Union[BlockRV, str], loop: LoopRV) -> BlockRV:
        """Split padding block `block` into a block filling the buffer with the pad value
        (a copy of the loops from `loop` down, placed before `loop`; returned) and the block
        itself copying only the valid region."""
        blk = Block(self._block(block))
        fill = _padding.decompose_padding(blk, self._resolve(loop, LoopRV))
        return self._handle(fill.op, BlockRV)

    def can_decompose_padding(self, block: Union[BlockRV, str], loop: LoopRV) -> bool:
        """Whether decompose_padding(block, loop) would be accepted (not a trace
        instruction; the module is not changed)."""
        try:
            with get_context():
                _padding.check(Block(self._block(block)), self._resolve(loop, LoopRV))
        except ScheduleError:
            return False
        return True

    @primitive
    def reindex(self, block: Union[BlockRV, str],
                buffer: Union[Tuple[str, int], str]) -> BlockRV:
        """Make `block` access `buffer` ("read"/"write", index) or a name) through a new buffer
        indexed by its iter vars, copied in before (read) or out after (write) the block's
        loop nest; returns the copy block."""
        blk = Block(self._block(block))
        kind, i = _reindex.buffer_index(blk, buffer)
        self._note(buffer=(kind, i))
        return self._handle(_reindex.reindex(blk, (kind, i)).op, BlockRV)

    @primitive
    def reorder_block_iter_var(self, block: BlockRV, new_order: List[int]) -> None:
        """Permute the block's iter vars: new iter var j is old iter var new_order[j]."""
        _reorder_iters.reorder_block_iter_var(Block(self._block(block)), new_order)

    @primitive
    def transform_block_layout(self, block: Union[BlockRV, str], index_map: Callable) -> None:
        """Re-express the block's iteration space through a bijective `index_map` over its iter
        vars (a lambda or its text; recorded as canonical text), rebuilding its loops."""
        blk = Block(self._block(block))
        fn = symbolic.from_text(index_map)
        self._note(index_map=symbolic.lambda_text(fn, len(blk.iter_names)))
        _block_layout.transform_block_layout(blk, fn)

    @primitive
    def unsafe_set_dtype(self, block: Union[BlockRV, str], buffer_index: int, dtype: str) -> None:
        """Change the dtype of intermediate buffer `buffer_index` that `block` writes, casting
        its stores and loads (values may round: "unsafe")."""
        _set_dtype.unsafe_set_dtype(Block(self._block(block)), buffer_index, dtype)
