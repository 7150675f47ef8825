"""Annotations (TVM's annotate, block_annotate, annotate_buffer_access, hide_buffer_access):
annotate, unannotate, storage_align, set_scope, unsafe_set_dtype, annotate_buffer_access,
unsafe_hide_buffer_access, and TE's set_store_predicate. They change what a block or loop
says about itself or its buffers, not the loop nest.
"""

from typing import Callable, Dict, List, Union

from tir_mlir.schedule.primitives.host import ScheduleHost
from tir_mlir.dialect.ops import Block
from tir_mlir.passes.schedule import annotate as _ann
from tir_mlir.passes.schedule import annotate_buffer_access as _annotate
from tir_mlir.passes.schedule import hide_buffer_access as _hide
from tir_mlir.passes.schedule import set_scope as _set_scope
from tir_mlir.passes.schedule import storage_align as _align
from tir_mlir.passes.schedule import store_predicate as _pred
from tir_mlir.passes.schedule import unsafe_set_dtype as _set_dtype

from tir_mlir.errors import ScheduleError
from tir_mlir.schedule import lambda_exprs as symbolic
from tir_mlir.schedule.handles import BlockOrLoop, BlockRV, LoopRV
from tir_mlir.schedule.primitive import primitive
from tir_mlir.schedule.safe_lambda import SafeLambda


class Annotation(ScheduleHost):
    """Primitives that annotate blocks, loops and buffers."""

    # TVM's annotation value types (annotate's ann_val)
    PrimAnnotationValueT = Union[str, int, float]
    AnnotationValueT = Union[
        PrimAnnotationValueT,
        List[PrimAnnotationValueT],
        Dict[str, Union[PrimAnnotationValueT, List[PrimAnnotationValueT]]],
    ]

    @primitive
    def annotate(self, block_or_loop: BlockOrLoop, ann_key: str, ann_val) -> None:
        """Attach an annotation to a block (`T.block_attr`) or a loop (`annotations=`).

        Parameters
        ----------
        block_or_loop : BlockRV or LoopRV
            What to annotate.
        ann_key : str
            The key, e.g. `"pragma_auto_unroll_max_step"` or `"meta_schedule.parallel"`.
        ann_val : int, float, str, bool or a list of them
            The value.

        Returns
        -------
        None

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
        sch.annotate(i, "pragma_auto_unroll_max_step", 16)
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            for i in T.serial(128, annotations={"pragma_auto_unroll_max_step": 16}):
                for j in range(128):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
        ```
        """
        _ann.annotate(self._resolve(block_or_loop, (BlockRV, LoopRV)), ann_key, self._int(ann_val))

    @primitive
    def unannotate(self, block_or_loop: BlockOrLoop, ann_key: str) -> None:
        """Remove an annotation from a block or a loop.

        Parameters
        ----------
        block_or_loop : BlockRV or LoopRV
            What carries the annotation.
        ann_key : str
            The key to remove.

        Returns
        -------
        None

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
        sch.annotate(i, "pragma_auto_unroll_max_step", 16)
        sch.unannotate(i, "pragma_auto_unroll_max_step")
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            for i, j in T.grid(128, 128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
        ```
        """
        _ann.unannotate(self._resolve(block_or_loop, (BlockRV, LoopRV)), ann_key)

    @primitive
    def storage_align(
        self, block: BlockRV, buffer_index: int, axis: int, factor: int, offset: int
    ) -> None:
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

    @primitive
    def set_scope(self, block: BlockRV, buffer_index: Union[int, str], storage_scope: str) -> None:
        """Change the storage scope of write buffer `buffer_index` (an index or a name)."""
        index = self._buffer_index(block, buffer_index, "buffer_index", "set_scope", "write")
        _set_scope.set_scope(Block(self._block(block)), index, storage_scope)

    @primitive
    def unsafe_set_dtype(self, block: Union[BlockRV, str], buffer_index: int, dtype: str) -> None:
        """Change the dtype of intermediate buffer `buffer_index` that `block` writes, casting
        its stores and loads (values may round: "unsafe")."""
        _set_dtype.unsafe_set_dtype(Block(self._block(block)), buffer_index, dtype)

    @primitive
    def annotate_buffer_access(
        self, block: BlockRV, buffer_index: int, buf_type: str, gen_new_ranges: Callable
    ) -> None:
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
    def unsafe_hide_buffer_access(
        self, block: BlockRV, buf_type: str, buf_index_array: List[int]
    ) -> None:
        """Leave T.reads / T.writes entries `buf_index_array` (`buf_type` "read" or "write")
        of `block` out of its printed regions (TVM: to let tensorize match a block that reads
        index buffers). The accesses stay, and our dependence checks still see them."""
        self._note(buf_index_array=list(buf_index_array))
        _hide.unsafe_hide_buffer_access(Block(self._block(block)), buf_type, list(buf_index_array))

    @primitive
    def set_store_predicate(self, block: BlockRV, predicate: Union[Callable, str]) -> None:
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
    if isinstance(fn, SafeLambda):  # a lambda's text, as recorded in a trace
        params, varargs = list(fn.params), False
    elif code is not None:
        params, varargs = list(code.co_varnames[: code.co_argcount]), code.co_flags & 0x0C
    else:
        params, varargs = [], True
    if params == iters:
        return fn
    unknown = [p for p in params if p not in iters]
    if varargs or unknown:
        raise ScheduleError(
            f"set_store_predicate: the predicate's parameters "
            f"({', '.join(params) or '...'}) must be named after the block's "
            f"iter vars ({', '.join(iters)}) of block {blk.name!r}"
        )

    def by_name(*values):
        return fn(*[values[iters.index(p)] for p in params])

    by_name.param_names = list(iters)  # what the trace records (symbolic.lambda_text)
    return by_name
