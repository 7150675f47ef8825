"""Schedule methods of issue 13's cache primitives: reindex_cache_read, reindex_cache_write,
cache_inplace, cache_index, read_at, write_at (TVM 0.21 signatures).

A mixin of `Schedule` (a base class of it in schedule.py); each method is a `@primitive`
delegating to a rewrite in `tir_mlir/passes/schedule/`.
"""
from typing import Callable, List

from tir_mlir.dialect.ops import Block
from tir_mlir.passes.schedule import cache_index as _index, cache_inplace as _inplace
from tir_mlir.passes.schedule import reindex_cache as _reindex_cache
from tir_mlir.passes.schedule import read_write_at as _at
from tir_mlir.schedule import lambda_exprs as symbolic
from tir_mlir.passes.schedule.set_scope import check_scope
from tir_mlir.schedule.handles import BlockRV, LoopRV
from tir_mlir.schedule.primitive import primitive


class CachePrimitives:

    @primitive
    def reindex_cache_read(self, block: BlockRV, read_buffer_index: int, storage_scope: str,
                           index_map: Callable) -> BlockRV:
        """cache_read of read buffer `read_buffer_index` of `block` into a `storage_scope`
        buffer indexed by `index_map` of the block's iter vars (a lambda or its text; recorded
        as canonical text); only `block` reads the cache. Returns the copy block."""
        check_scope(storage_scope)
        blk, fn = self._mapped(block, index_map)
        copy = _reindex_cache.reindex_cache_read(blk, read_buffer_index, storage_scope, fn)
        return self._handle(copy.op, BlockRV)

    @primitive
    def reindex_cache_write(self, block: BlockRV, write_buffer_index: int, storage_scope: str,
                            index_map: Callable) -> BlockRV:
        """cache_write of write buffer `write_buffer_index` of `block` into a `storage_scope`
        buffer indexed by `index_map` of the block's iter vars; returns the copy-back block."""
        check_scope(storage_scope)
        blk, fn = self._mapped(block, index_map)
        copy = _reindex_cache.reindex_cache_write(blk, write_buffer_index, storage_scope, fn)
        return self._handle(copy.op, BlockRV)

    @primitive
    def cache_inplace(self, block_rv: BlockRV, read_buffer_index: int,
                      storage_scope: str) -> List[BlockRV]:
        """Stage buffer `read_buffer_index`, which `block_rv` reads and writes, through a
        `storage_scope` buffer copied in right before the block and back right after it;
        returns [copy-in block, copy-back block]."""
        check_scope(storage_scope)
        blocks = _inplace.cache_inplace(Block(self._block(block_rv)), read_buffer_index,
                                        storage_scope)
        return [self._handle(b.op, BlockRV) for b in blocks]

    @primitive
    def cache_index(self, block_rv: BlockRV, storage_scope: str,
                    cse_thresh: int = 0) -> List[BlockRV]:
        """Precompute the index expressions `block_rv` loads with into int32 `storage_scope`
        buffers (those repeated at least `cse_thresh` times; 0: all), filled by blocks placed
        before it; returns those blocks."""
        check_scope(storage_scope)
        blocks = _index.cache_index(Block(self._block(block_rv)), storage_scope, cse_thresh)
        return [self._handle(b.op, BlockRV) for b in blocks]

    @primitive
    def read_at(self, loop: LoopRV, block: BlockRV, read_buffer_index: int,
                storage_scope: str) -> BlockRV:
        """Copy the region of read buffer `read_buffer_index` of `block` that one iteration of
        `loop` reads into a `storage_scope` buffer, at the start of the loop body; returns
        the copy block (annotated auto_copy)."""
        check_scope(storage_scope)
        copy = _at.read_at(self._resolve(loop, LoopRV), Block(self._block(block)),
                           read_buffer_index, storage_scope)
        return self._handle(copy.op, BlockRV)

    @primitive
    def write_at(self, loop: LoopRV, block: BlockRV, write_buffer_index: int,
                 storage_scope: str) -> BlockRV:
        """Write buffer `write_buffer_index` of `block` through a `storage_scope` buffer
        under `loop`, copied back at the end of each iteration; returns the copy block."""
        check_scope(storage_scope)
        copy = _at.write_at(self._resolve(loop, LoopRV), Block(self._block(block)),
                            write_buffer_index, storage_scope)
        return self._handle(copy.op, BlockRV)

    def _mapped(self, block: BlockRV, index_map):
        """The block and the index map over its iter vars (noted as canonical text)."""
        blk = Block(self._block(block))
        fn = symbolic.from_text(index_map)
        self._note(index_map=symbolic.lambda_text(fn, len(blk.iter_names)))
        return blk, fn
