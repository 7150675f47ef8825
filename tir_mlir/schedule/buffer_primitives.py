"""Schedule methods for buffer and reduction primitives, tensorize, and the TE counterparts.

A mixin of `Schedule` (a base class of it in schedule.py); each method has TVM 0.21's name,
parameters and defaults, and delegates to a rewrite in `tir_mlir/passes/schedule/`.
"""
from typing import Callable, List, Optional, Sequence, Tuple, Union

from mlir import ir

from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.passes.schedule import (
    blockize as _blockize, cache_read_write as _cache, decompose_reduction as _decompose,
    prefetch as _prefetch, rfactor as _rfactor, set_scope as _set_scope,
    storage_align as _align, store_predicate as _pred, symbolic, tensorize as _tensorize,
    transform_layout as _layout)
from tir_mlir.passes.schedule.buffer_util import block_reads, block_writes
from tir_mlir.passes.schedule.safe_lambda import (
    SafeLambda, canonical_text, constant_body, parse_lambda)
from tir_mlir.schedule.handles import BlockRV, LoopRV
from tir_mlir.schedule.primitive import primitive


class BufferPrimitives:
    def _blocks(self, blocks) -> Optional[List[Block]]:
        return None if blocks is None else [Block(self._block(b)) for b in blocks]

    def _buffer_index(self, block, buffer, param: str, what: str, kind: str) -> int:
        """A buffer given by index or name as its index, which the trace records (TVM's)."""
        blk = Block(self._block(block))
        bufs = block_reads(blk) if kind == "read" else block_writes(blk)
        k = _cache.buffer_index(blk, bufs, buffer, what, kind)
        self._note(**{param: k})
        return k

    @primitive(lookups_first=True)   # (not keeps_index since the placement changes)
    def cache_read(self, block: BlockRV, read_buffer_index: Union[int, str], storage_scope: str,
                   consumer_blocks: Optional[Sequence[BlockRV]] = None) -> BlockRV:
        """Copy read buffer `read_buffer_index` (an index or a name) of `block` into a new
        `storage_scope` buffer that the consumers read instead; returns the copy block."""
        _set_scope.check_scope(storage_scope)
        index = self._buffer_index(block, read_buffer_index, "read_buffer_index",
                                   "cache_read", "read")
        copy = _cache.cache_read(Block(self._block(block)), index, storage_scope,
                                 self._blocks(consumer_blocks))
        return self._handle(copy.op, BlockRV)

    @primitive(lookups_first=True)   # (not keeps_index since the placement changes)
    def cache_write(self, block: BlockRV, write_buffer_index: Union[int, str],
                    storage_scope: str,
                    consumer_blocks: Optional[Sequence[BlockRV]] = None) -> BlockRV:
        """Make `block` write a new `storage_scope` buffer (write buffer `write_buffer_index`:
        an index or a name), copied back to the original by a new block placed after it
        (returned)."""
        _set_scope.check_scope(storage_scope)
        index = self._buffer_index(block, write_buffer_index, "write_buffer_index",
                                   "cache_write", "write")
        copy = _cache.cache_write(Block(self._block(block)), index, storage_scope,
                                  self._blocks(consumer_blocks))
        return self._handle(copy.op, BlockRV)

    @primitive
    def set_scope(self, block: BlockRV, buffer_index: Union[int, str], storage_scope: str) -> None:
        """Change the storage scope of write buffer `buffer_index` (an index or a name)."""
        index = self._buffer_index(block, buffer_index, "buffer_index", "set_scope", "write")
        _set_scope.set_scope(Block(self._block(block)), index, storage_scope)

    @primitive
    def storage_align(self, block: BlockRV, buffer_index: int, axis: int, factor: int,
                      offset: int) -> None:
        _align.storage_align(Block(self._block(block)), buffer_index, axis, factor, offset)

    @primitive(macro=True)
    def transform_layout(self, block: BlockRV, buffer: Union[Tuple[str, int], str],
                         index_map: Callable, pad_value=None,
                         assume_injective_transform: bool = False) -> None:
        """`index_map`: a lambda (or its text); recorded in the trace as canonical text.
        `pad_value` fills the padding when the map pads the buffer (layout_padding.py);
        `assume_injective_transform` lets the new shape be larger (the padding unused).
        TVM's `IndexMap.AXIS_SEPARATOR` among the map's results becomes a set_axis_separator
        step after it, as TVM records it."""
        if isinstance(block, str):
            block = self.get_block(block)
        if isinstance(buffer, list):
            buffer = tuple(buffer)
        blk = Block(self._block(block))
        rank = len(ir.MemRefType(_layout.find_buffer(blk, buffer).type).shape)
        seps, plain = symbolic.split_separators(symbolic.from_text(index_map), rank)
        self._transform_layout(block, buffer, plain if seps else index_map, pad_value,
                               assume_injective_transform)
        if seps:
            self.set_axis_separator(block, buffer, seps)

    def _layout_step(self, block: BlockRV, buffer: Union[Tuple[str, int], str],
                     index_map: Callable, pad_value=None,
                     assume_injective_transform: bool = False) -> None:
        blk = Block(self._block(block))
        from tir_mlir.passes.schedule.reindex import buffer_index
        self._note(buffer=buffer_index(blk, buffer, "transform_layout") if isinstance(
            buffer, str) else buffer)      # TVM records a name as ("write" | "read", index)
        fn = symbolic.from_text(index_map)
        rank = len(ir.MemRefType(_layout.find_buffer(blk, buffer).type).shape)
        self._note(index_map=symbolic.lambda_text(fn, rank))
        if isinstance(pad_value, str):      # a trace's text: parsed whether or not it pads
            pad_value = _pad_of_text(pad_value)
            if isinstance(pad_value, SafeLambda):
                self._note(pad_value=canonical_text(pad_value.text))
        if hasattr(pad_value, "dtype") and hasattr(pad_value, "value"):   # TVM's IntImm
            from tir_mlir.dtypes import dtype_of
            want = dtype_of(ir.MemRefType(_layout.find_buffer(blk, buffer).type).element_type)
            if str(pad_value.dtype) != want:
                raise ScheduleError(f"transform_layout: the pad value {pad_value!r} must have "
                                    f"the buffer's dtype {want}")
            pad_value = pad_value.value
        if isinstance(pad_value, (int, float)):     # TVM records a constant as a lambda
            self._note(pad_value=_pad_lambda(pad_value, fn, rank, _layout.find_buffer(
                blk, buffer)))
        _layout.transform_layout(blk, buffer, fn, pad_value, assume_injective_transform)

    _layout_step.__name__ = "transform_layout"      # the step's trace instruction
    _transform_layout = primitive(_layout_step)
    del _layout_step

    @primitive(keeps_index=True)
    def rfactor(self, loop: LoopRV, factor_axis: int) -> BlockRV:
        rf = _rfactor.rfactor(Loop(self._resolve(loop, LoopRV)), factor_axis)
        return self._handle(rf.op, BlockRV)

    @primitive(keeps_index=True)
    def decompose_reduction(self, block: BlockRV, loop: LoopRV) -> BlockRV:
        init = _decompose.decompose_reduction(Block(self._block(block)),
                                              Loop(self._resolve(loop, LoopRV)))
        return self._handle(init.op, BlockRV)

    @primitive(keeps_index=True)
    def blockize(self, target: Union[LoopRV, List[BlockRV]],
                 preserve_unit_iters: bool = True) -> BlockRV:
        if not isinstance(target, LoopRV):
            raise ScheduleError("blockize: only a loop target is supported")
        outer = _blockize.blockize(Loop(self._resolve(target, LoopRV)), preserve_unit_iters)
        return self._handle(outer.op, BlockRV)

    @primitive
    def tensorize(self, block_or_loop: Union[BlockRV, LoopRV], tensor_intrin: str,
                  preserve_unit_iters: bool = True) -> None:
        from tir_mlir.schedule.tensor_intrin import TensorIntrin
        intrin = TensorIntrin.get(tensor_intrin)
        if isinstance(block_or_loop, LoopRV):
            block = _blockize.blockize(Loop(self._resolve(block_or_loop, LoopRV)))
        else:
            block = Block(self._block(block_or_loop))
        _tensorize.tensorize(block, intrin.desc_func, intrin.impl_func, tensor_intrin)

    @primitive
    def prefetch(self, block: BlockRV, buffer_index: int, loop: LoopRV,
                 offset: int = 1) -> None:
        """TE's `s[B].prefetch(A, loop, offset)`: tir_mlir only (TensorIR dropped it)."""
        _prefetch.prefetch(Block(self._block(block)), buffer_index,
                           Loop(self._resolve(loop, LoopRV)), offset)

    @primitive
    def set_store_predicate(self, block: BlockRV, predicate: Callable) -> None:
        """TE's `s[B].set_store_predicate(cond)`: tir_mlir only. `predicate` is a Python
        function of the block's iter vars returning a conjunction of comparisons."""
        blk = Block(self._block(block))
        fn = _by_name(symbolic.from_text(predicate), blk)
        self._note(predicate=symbolic.lambda_text(fn, len(blk.iter_names), predicate=True))
        _pred.set_store_predicate(blk, fn)


def _by_name(fn: Callable, blk: Block) -> Callable:
    """`fn` with its parameters bound to the block's iter vars of the same names (in any
    order, a subset allowed), as a function of all iter vars in order. Binding by position
    would silently change meaning when a primitive (rfactor, cache_write) reorders iter vars."""
    iters = blk.iter_names
    code = getattr(fn, "__code__", None)
    if isinstance(fn, SafeLambda):          # a lambda's text, as recorded in a trace
        params, varargs = list(fn.params), False
    elif code is not None:
        params, varargs = list(code.co_varnames[:code.co_argcount]), code.co_flags & 0x0C
    else:
        params, varargs = [], True
    if params == iters:
        return fn
    unknown = [p for p in params if p not in iters]
    if varargs or unknown:
        raise ScheduleError(f"set_store_predicate: the predicate's parameters "
                            f"({', '.join(params) or '...'}) must be named after the block's "
                            f"iter vars ({', '.join(iters)}) of block {blk.name!r}")
    def by_name(*values):
        return fn(*[values[iters.index(p)] for p in params])
    by_name.param_names = list(iters)       # what the trace records (symbolic.lambda_text)
    return by_name


class _TypedConst:
    """A constant pad value read from a trace's `lambda ...: (T.float32(7.0),)`."""

    def __init__(self, dtype: str, value):
        self.dtype, self.value = dtype, value

    def __repr__(self):
        return f"T.{self.dtype}({self.value!r})"


def _pad_of_text(text: str):
    """A recorded pad value: its constant (typed when the text says T.<dtype>) or the parsed
    lambda of the new indices (ScheduleError for anything else)."""
    fn = parse_lambda(text)
    canonical_text(text)                     # only the constructs a trace may print
    const = constant_body(fn)
    if const is None:
        return fn
    dtype, value = const
    return value if dtype is None else _TypedConst(dtype, value)


def _pad_lambda(value, fn, rank: int, buf) -> str:
    """TVM's trace text of a constant pad_value: a lambda of the new indices returning it
    typed as the buffer (`lambda indices_0, indices_1: (T.float32(7.0),)`)."""
    from tir_mlir.dtypes import dtype_of
    dtype = dtype_of(ir.MemRefType(buf.type).element_type)
    n = len(symbolic.exprs(fn, rank))
    params = ", ".join(f"indices_{k}" for k in range(n))
    text = repr(float(value)) if dtype.startswith(("float", "bfloat")) else str(int(value))
    return f"lambda {params}: ({text if dtype == 'int32' else f'T.{dtype}({text})'},)"
