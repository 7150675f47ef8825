"""Schedule methods for buffer and reduction primitives, tensorize, and the TE counterparts.

A mixin of `Schedule` (a base class of it in schedule.py); each method has TVM 0.21's name,
parameters and defaults, and delegates to a rewrite in `tir_mlir/passes/schedule/`.
"""
from typing import Callable, List, Optional, Sequence, Tuple, Union

from mlir import ir

from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.passes.schedule import (blockize as _blockize, cache_read_write as _cache,
    decompose_reduction as _decompose, prefetch as _prefetch, rfactor as _rfactor,
    set_scope as _set_scope, storage_align as _align, store_predicate as _pred,
    tensorize as _tensorize, transform_layout as _layout)
from tir_mlir.schedule import lambda_exprs as symbolic
from tir_mlir.analysis.buffer_util import block_reads, block_writes
from tir_mlir.schedule.safe_lambda import SafeLambda, canonical_text, constant_body, parse_lambda
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
        """Pad the stride of one dimension of a buffer a block writes, so that `stride % factor ==
        offset` (avoids bank conflicts in shared memory).

        Parameters
        ----------
        block : BlockRV
            The block that writes the buffer (allocated in the function).
        buffer_index : int
            The index of the buffer among the block's writes.
        axis : int
            The dimension whose stride is padded.
        factor : int
            The alignment factor.
        offset : int
            The required remainder of the stride modulo `factor`.

        Returns
        -------
        None

        Examples
        --------
        Before:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            B = T.alloc_buffer((128, 128))
            for i, j in T.grid(128, 128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            for i, j in T.grid(128, 128):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj] + T.float32(1)
        ```

        With `sch = tir.Schedule(main)`:

        ```python
        sch.storage_align(sch.get_block("B"), 0, axis=0, factor=128, offset=1)
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((128, 128))
            for i, j in T.grid(128, 128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    T.block_attr({"buffer_dim_align": [[0, 0, 128, 1]]})
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
            for i, j in T.grid(128, 128):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1.0)
        ```
        """
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
        """Factorize a reduction by one of its loops: a new block `B_rf` computes partial results
        along that loop into a new buffer, and the original block reduces them.

        Parameters
        ----------
        loop : LoopRV
            A loop the reduction block binds to one reduction iterator only.
        factor_axis : int
            Where the loop's dimension goes in the `rf` buffer's shape.

        Returns
        -------
        BlockRV
            The new `rf` block (computing the partial results).

        Examples
        --------
        Before:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
            for i, k in T.grid(128, 128):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
        ```

        With `sch = tir.Schedule(main)`:

        ```python
        i, k = sch.get_loops(sch.get_block("B"))
        k_0, k_1 = sch.split(k, factors=[None, 4])
        rf = sch.rfactor(k_1, factor_axis=0)
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
            # with T.block("root"):
            B_rf = T.alloc_buffer((4, 128))
            for i, k_0, k_1 in T.grid(128, 32, 4):
                with T.block("B_rf"):
                    vk_1, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
                    T.reads(A[vi, vk_0 * 4 + vk_1])
                    T.writes(B_rf[vk_1, vi])
                    with T.init():
                        B_rf[vk_1, vi] = T.float32(0.0)
                    B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 4 + vk_1]
            for i, k_1 in T.grid(128, 4):
                with T.block("B"):
                    vk_1, vi = T.axis.remap("RS", [k_1, i])
                    T.reads(B_rf[vk_1, vi])
                    T.writes(B[vi])
                    with T.init():
                        B[vi] = T.float32(0.0)
                    B[vi] = B[vi] + B_rf[vk_1, vi]
        ```
        """
        rf = _rfactor.rfactor(Loop(self._resolve(loop, LoopRV)), factor_axis)
        return self._handle(rf.op, BlockRV)

    @primitive(keeps_index=True)
    def decompose_reduction(self, block: BlockRV, loop: LoopRV) -> BlockRV:
        """Split a reduction block's `T.init()` out into its own block `B_init`, placed before the
        given loop.

        Parameters
        ----------
        block : BlockRV
            The reduction block.
        loop : LoopRV
            A loop above the block; the init block goes right before it, under the loops above it.

        Returns
        -------
        BlockRV
            The new init block.

        Examples
        --------
        Before:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
            for i, k in T.grid(128, 128):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
        ```

        With `sch = tir.Schedule(main)`:

        ```python
        i, k = sch.get_loops(sch.get_block("B"))
        init = sch.decompose_reduction(sch.get_block("B"), k)
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
            # with T.block("root"):
            for i in range(128):
                with T.block("B_init"):
                    vi = T.axis.spatial(128, i)
                    T.reads()
                    T.writes(B[vi])
                    B[vi] = T.float32(0.0)
                for k in range(128):
                    with T.block("B_update"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        T.reads(B[vi], A[vi, vk])
                        T.writes(B[vi])
                        B[vi] = B[vi] + A[vi, vk]
        ```
        """
        init = _decompose.decompose_reduction(Block(self._block(block)),
                                              Loop(self._resolve(loop, LoopRV)))
        return self._handle(init.op, BlockRV)

    @primitive(keeps_index=True)
    def blockize(self, target: Union[LoopRV, List[BlockRV]],
                 preserve_unit_iters: bool = True) -> BlockRV:
        """Turn the subtree of a loop into a block `B_o` whose iterators are the outer part of the
        inner block's (the inner block keeps the rest).

        Parameters
        ----------
        target : LoopRV
            The loop whose body becomes the new block.
        preserve_unit_iters : bool
            Keep iterators of extent 1 in the new block's bindings.

        Returns
        -------
        BlockRV
            The new outer block.

        Examples
        --------
        Before:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            for i, j in T.grid(128, 128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
        ```

        With `sch = tir.Schedule(main)`:

        ```python
        i, j = sch.get_loops(sch.get_block("B"))
        j_0, j_1 = sch.split(j, factors=[None, 16])
        outer = sch.blockize(j_1)
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            for i, j_0 in T.grid(128, 8):
                with T.block("B_o"):
                    vi_o, vj_o = T.axis.remap("SS", [i, j_0])
                    T.reads(A[vi_o, vj_o * 16:vj_o * 16 + 16])
                    T.writes(B[vi_o, vj_o * 16:vj_o * 16 + 16])
                    for j_1 in range(16):
                        with T.block("B"):
                            vj_i = T.axis.spatial(16, j_1)
                            T.reads(A[vi_o, vj_o * 16 + vj_i])
                            T.writes(B[vi_o, vj_o * 16 + vj_i])
                            B[vi_o, vj_o * 16 + vj_i] = A[vi_o, vj_o * 16 + vj_i] * T.float32(2.0)
        ```
        """
        if not isinstance(target, LoopRV):
            raise ScheduleError("blockize: only a loop target is supported")
        outer = _blockize.blockize(Loop(self._resolve(target, LoopRV)), preserve_unit_iters)
        return self._handle(outer.op, BlockRV)

    @primitive
    def tensorize(self, block_or_loop: Union[BlockRV, LoopRV], tensor_intrin: str,
                  preserve_unit_iters: bool = True) -> None:
        """Replace the computation of a block (or of the subtree of a loop, blockized first) by a
        tensor intrinsic's implementation, after checking that it matches the intrinsic's
        description.

        Parameters
        ----------
        block_or_loop : BlockRV or LoopRV
            What to replace.
        tensor_intrin : str
            The name the intrinsic was registered under (`TensorIntrin.register`); `"mac16_f32"`
            ships: `C[0:16] += A[0] * B[0:16]`.
        preserve_unit_iters : bool
            As in `blockize`.

        Returns
        -------
        None

        Examples
        --------
        Before:

        ```python
        @T.prim_func
        def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((16, 32), "float32"),
                 C: T.Buffer((8, 32), "float32")):
            for i, j, k in T.grid(8, 32, 16):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        ```

        With `sch = tir.Schedule(main)`:

        ```python
        i, j, k = sch.get_loops(sch.get_block("C"))
        j_0, j_1 = sch.split(j, factors=[None, 16])
        sch.reorder(j_0, k, j_1)
        sch.tensorize(j_1, "mac16_f32")
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((16, 32), "float32"), C: T.Buffer((8, 32), "float32")):
            # with T.block("root"):
            for i, j_0, k in T.grid(8, 2, 16):
                with T.block("C_o"):
                    vi_o, vj_o, vk_o = T.axis.remap("SSR", [i, j_0, k])
                    T.reads(A[vi_o, vk_o], B[vk_o, vj_o * 16:vj_o * 16 + 16])
                    T.writes(C[vi_o, vj_o * 16:vj_o * 16 + 16])
                    with T.init():
                        for j_1 in range(16):
                            with T.block("C_init"):
                                vj_i_init = T.axis.spatial(16, j_1)
                                T.reads()
                                T.writes(C[vi_o, vj_o * 16 + vj_i_init])
                                C[vi_o, vj_o * 16 + vj_i_init] = T.float32(0.0)
                    for j in T.vectorized(16):
                        C[vi_o, vj_o * 16 + j] = C[vi_o, vj_o * 16 + j] + A[vi_o, vk_o] * B[vk_o, vj_o * 16 + j]
        ```
        """
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
