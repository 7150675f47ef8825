"""Caches (TVM's cache_read_write, read_write_at, reindex): cache_read, cache_write,
reindex_cache_read, reindex_cache_write, cache_inplace, cache_index, reindex, read_at,
write_at, and TE's prefetch. Each stages a buffer through a new one, copied by new blocks.
"""

from typing import Callable, List, Optional, Sequence, Tuple, Union

from tir_mlir.schedule.primitives.host import ScheduleHost
from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.passes.schedule import cache_index as _index
from tir_mlir.passes.schedule import cache_inplace as _inplace
from tir_mlir.passes.schedule import cache_read_write as _cache
from tir_mlir.passes.schedule import prefetch as _prefetch
from tir_mlir.passes.schedule import read_write_at as _at
from tir_mlir.passes.schedule import reindex as _reindex
from tir_mlir.passes.schedule import reindex_cache as _reindex_cache
from tir_mlir.passes.schedule import set_scope as _set_scope
from tir_mlir.passes.schedule.set_scope import check_scope

from tir_mlir.analysis.buffer_util import block_reads, block_writes
from tir_mlir.schedule import lambda_exprs as symbolic
from tir_mlir.schedule.handles import BlockRV, LoopRV
from tir_mlir.schedule.primitive import primitive


class Caches(ScheduleHost):
    """Primitives that stage a buffer through a new one."""

    @primitive
    def cache_read(
        self,
        block: BlockRV,
        read_buffer_index: Union[int, str],
        storage_scope: str,
        consumer_blocks: Optional[Sequence[BlockRV]] = None,
    ) -> BlockRV:
        """Copy read buffer `read_buffer_index` (an index or a name) of `block` into a new
        `storage_scope` buffer that the consumers read instead; returns the copy block."""
        _set_scope.check_scope(storage_scope)
        index = self._buffer_index(
            block, read_buffer_index, "read_buffer_index", "cache_read", "read"
        )
        copy = _cache.cache_read(
            Block(self._block(block)), index, storage_scope, self._blocks(consumer_blocks)
        )
        return self._handle(copy.op, BlockRV)

    @primitive
    def cache_write(
        self,
        block: BlockRV,
        write_buffer_index: Union[int, str],
        storage_scope: str,
        consumer_blocks: Optional[Sequence[BlockRV]] = None,
    ) -> BlockRV:
        """Make `block` write a new `storage_scope` buffer (write buffer `write_buffer_index`:
        an index or a name), copied back to the original by a new block placed after it
        (returned)."""
        _set_scope.check_scope(storage_scope)
        index = self._buffer_index(
            block, write_buffer_index, "write_buffer_index", "cache_write", "write"
        )
        copy = _cache.cache_write(
            Block(self._block(block)), index, storage_scope, self._blocks(consumer_blocks)
        )
        return self._handle(copy.op, BlockRV)

    @primitive
    def reindex_cache_read(
        self, block: BlockRV, read_buffer_index: int, storage_scope: str, index_map: Callable
    ) -> BlockRV:
        """cache_read of read buffer `read_buffer_index` of `block` into a `storage_scope`
        buffer indexed by `index_map` of the block's iter vars (a lambda or its text; recorded
        as canonical text); only `block` reads the cache. Returns the copy block."""
        check_scope(storage_scope)
        blk, fn = self._mapped(block, index_map)
        copy = _reindex_cache.reindex_cache_read(blk, read_buffer_index, storage_scope, fn)
        return self._handle(copy.op, BlockRV)

    @primitive
    def reindex_cache_write(
        self, block: BlockRV, write_buffer_index: int, storage_scope: str, index_map: Callable
    ) -> BlockRV:
        """cache_write of write buffer `write_buffer_index` of `block` into a `storage_scope`
        buffer indexed by `index_map` of the block's iter vars; returns the copy-back block."""
        check_scope(storage_scope)
        blk, fn = self._mapped(block, index_map)
        copy = _reindex_cache.reindex_cache_write(blk, write_buffer_index, storage_scope, fn)
        return self._handle(copy.op, BlockRV)

    @primitive
    def cache_inplace(
        self, block_rv: BlockRV, read_buffer_index: int, storage_scope: str
    ) -> List[BlockRV]:
        """Stage buffer `read_buffer_index`, which `block_rv` reads and writes, through a
        `storage_scope` buffer copied in right before the block and back right after it;
        returns [copy-in block, copy-back block]."""
        check_scope(storage_scope)
        blocks = _inplace.cache_inplace(
            Block(self._block(block_rv)), read_buffer_index, storage_scope
        )
        return [self._handle(b.op, BlockRV) for b in blocks]

    @primitive
    def cache_index(
        self, block_rv: BlockRV, storage_scope: str, cse_thresh: int = 0
    ) -> List[BlockRV]:
        """Precompute the index expressions `block_rv` loads with into int32 `storage_scope`
        buffers (those repeated at least `cse_thresh` times; 0: all), filled by blocks placed
        before it; returns those blocks."""
        check_scope(storage_scope)
        blocks = _index.cache_index(Block(self._block(block_rv)), storage_scope, cse_thresh)
        return [self._handle(b.op, BlockRV) for b in blocks]

    @primitive
    def reindex(self, block: Union[BlockRV, str], buffer: Union[Tuple[str, int], str]) -> BlockRV:
        """Make `block` access `buffer` ("read"/"write", index) or a name) through a new buffer
        indexed by its iter vars, copied in before (read) or out after (write) the block's
        loop nest; returns the copy block."""
        blk = Block(self._block(block))
        kind, i = _reindex.buffer_index(blk, buffer)
        self._note(buffer=(kind, i))
        return self._handle(_reindex.reindex(blk, (kind, i)).op, BlockRV)

    @primitive
    def read_at(
        self, loop: LoopRV, block: BlockRV, read_buffer_index: int, storage_scope: str
    ) -> BlockRV:
        """Copy the region of read buffer `read_buffer_index` of `block` that one iteration of
        `loop` reads into a `storage_scope` buffer, at the start of the loop body; returns
        the copy block (annotated auto_copy)."""
        check_scope(storage_scope)
        copy = _at.read_at(
            self._resolve(loop, LoopRV), Block(self._block(block)), read_buffer_index, storage_scope
        )
        return self._handle(copy.op, BlockRV)

    @primitive
    def write_at(
        self, loop: LoopRV, block: BlockRV, write_buffer_index: int, storage_scope: str
    ) -> BlockRV:
        """Write buffer `write_buffer_index` of `block` through a `storage_scope` buffer
        under `loop`, copied back at the end of each iteration; returns the copy block."""
        check_scope(storage_scope)
        copy = _at.write_at(
            self._resolve(loop, LoopRV),
            Block(self._block(block)),
            write_buffer_index,
            storage_scope,
        )
        return self._handle(copy.op, BlockRV)

    @primitive
    def prefetch(self, block: BlockRV, buffer_index: int, loop: LoopRV, offset: int = 1) -> None:
        """TE's `s[B].prefetch(A, loop, offset)`: tir_mlir only (TensorIR dropped it)."""
        _prefetch.prefetch(
            Block(self._block(block)), buffer_index, Loop(self._resolve(loop, LoopRV)), offset
        )

    def _blocks(self, blocks) -> Optional[List[Block]]:
        return None if blocks is None else [Block(self._block(b)) for b in blocks]

    def _buffer_index(self, block, buffer, param: str, what: str, kind: str) -> int:
        """A buffer given by index or name as its index, which the trace records (TVM's)."""
        blk = Block(self._block(block))
        bufs = block_reads(blk) if kind == "read" else block_writes(blk)
        k = _cache.buffer_index(blk, bufs, buffer, what, kind)
        self._note(**{param: k})
        return k

    def _mapped(self, block: BlockRV, index_map):
        """The block and the index map over its iter vars (noted as canonical text)."""
        blk = Block(self._block(block))
        fn = symbolic.from_text(index_map)
        self._note(index_map=symbolic.lambda_text(fn, len(blk.iter_names)))
        return blk, fn
