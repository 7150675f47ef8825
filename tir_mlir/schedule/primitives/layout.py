"""Layout (TVM's layout_transformation, pad_einsum, decompose_padding, rolling_buffer):
transform_layout, transform_block_layout, set_axis_separator, reorder_block_iter_var,
pad_einsum, decompose_padding (+ can_decompose_padding), rolling_buffer. They change the shape
of a buffer or of a block's iteration space.
"""

from typing import Any, Callable, List, Optional, Tuple, Union

from mlir import ir
from tir_mlir.schedule.primitives.host import ScheduleHost
from tir_mlir.dialect.ops import Block
from tir_mlir.passes.schedule import decompose_padding as _padding
from tir_mlir.passes.schedule import pad_einsum as _pad_einsum
from tir_mlir.passes.schedule import reindex as _reindex
from tir_mlir.passes.schedule import reorder_block_iter_var as _reorder_iters
from tir_mlir.passes.schedule import rolling_buffer as _rolling
from tir_mlir.passes.schedule import set_axis_separator as _axis_sep
from tir_mlir.passes.schedule import transform_block_layout as _block_layout
from tir_mlir.passes.schedule import transform_layout as _layout

from tir_mlir.analysis.buffer_util import func_of
from tir_mlir.analysis.symbolic import symbol_name
from tir_mlir.context import get_context
from tir_mlir.errors import ScheduleError
from tir_mlir.schedule import lambda_exprs as symbolic
from tir_mlir.schedule.handles import BlockRV, LoopRV
from tir_mlir.schedule.primitive import macro, primitive
from tir_mlir.schedule.sampled_map import SampledMap
from tir_mlir.schedule.safe_lambda import SafeLambda, canonical_text, constant_body, parse_lambda


class Layout(ScheduleHost):
    """Primitives that change buffer layouts and iteration spaces."""

    @macro
    def transform_layout(
        self,
        block: BlockRV,
        buffer: Union[Tuple[str, int], List, str],
        index_map: Callable,
        pad_value=None,
        assume_injective_transform: bool = False,
    ) -> None:
        """`index_map`: a lambda (or its text); recorded in the trace as canonical text.
        `pad_value` fills the padding when the map pads the buffer (layout_padding.py);
        `assume_injective_transform` lets the new shape be larger (the padding unused).
        TVM's `IndexMap.AXIS_SEPARATOR` among the map's results becomes a set_axis_separator
        step after it, as TVM records it."""
        if isinstance(block, str):
            block = self.get_block(block)
        if isinstance(buffer, list):  # a trace's JSON spells the pair as a list
            buffer = tuple(buffer)
        blk = Block(self._block(block))
        rank = len(ir.MemRefType(_layout.find_buffer(blk, buffer).type).shape)
        # a map may use sampled values (`j // (j1 * j2)`): read when the map is, and recorded
        # as the constants they are, or as the values' handles in a SampledMap (TVM's trace
        # keeps the ExprRVs themselves)
        with symbolic.sampled_values(self._int), symbolic.function_sizes(_sizes(blk)):
            seps, plain = symbolic.split_separators(symbolic.from_text(index_map), rank)
            self._transform_layout(
                block, buffer, plain if seps else index_map, pad_value, assume_injective_transform
            )
        if seps:
            self.set_axis_separator(block, buffer, seps)

    def _layout_step(
        self,
        block: BlockRV,
        buffer: Union[Tuple[str, int], str],
        index_map: Callable,
        pad_value: Any = None,
        assume_injective_transform: bool = False,
    ) -> None:
        blk = Block(self._block(block))
        from tir_mlir.passes.schedule.reindex import buffer_index

        self._note(
            buffer=buffer_index(blk, buffer, "transform_layout")
            if isinstance(buffer, str)
            else buffer
        )  # TVM records a name as ("write" | "read", index)
        fn = symbolic.from_text(index_map)
        rank = len(ir.MemRefType(_layout.find_buffer(blk, buffer).type).shape)
        if isinstance(index_map, SampledMap):
            self._note(index_map=index_map)  # kept over its sampled values' handles
        else:
            self._note(index_map=symbolic.lambda_text(fn, rank))
        if isinstance(pad_value, str):  # a trace's text: parsed whether or not it pads
            pad_value = _pad_of_text(pad_value)
            if isinstance(pad_value, SafeLambda):
                self._note(pad_value=canonical_text(pad_value.text))
        if (
            not isinstance(pad_value, SafeLambda)
            and hasattr(pad_value, "dtype")
            and hasattr(pad_value, "value")
        ):  # TVM's IntImm, or a trace's typed constant
            from tir_mlir.dtypes import dtype_of

            want = dtype_of(ir.MemRefType(_layout.find_buffer(blk, buffer).type).element_type)
            if str(pad_value.dtype) != want:
                raise ScheduleError(
                    f"transform_layout: the pad value {pad_value!r} must have "
                    f"the buffer's dtype {want}"
                )
            pad_value = pad_value.value
        if isinstance(pad_value, (int, float)):  # TVM records a constant as a lambda
            self._note(pad_value=_pad_lambda(pad_value, fn, rank, _layout.find_buffer(blk, buffer)))
        _layout.transform_layout(blk, buffer, fn, pad_value, assume_injective_transform)

    _layout_step.__name__ = "transform_layout"  # the step's trace instruction

    _transform_layout = primitive(_layout_step)

    del _layout_step

    @primitive
    def transform_block_layout(self, block: Union[BlockRV, str], index_map: Callable) -> None:
        """Re-express the block's iteration space through a bijective `index_map` over its iter
        vars (a lambda or its text; recorded as canonical text), rebuilding its loops."""
        blk = Block(self._block(block))
        fn = symbolic.from_text(index_map)
        with symbolic.function_sizes(_sizes(blk)):  # (a map may name `n`, as transform_layout's)
            self._note(index_map=symbolic.lambda_text(fn, len(blk.iter_names)))
            _block_layout.transform_block_layout(blk, fn)

    @primitive
    def set_axis_separator(
        self,
        block: Union[BlockRV, str],
        buffer: Union[Tuple[str, int], str],
        axis_separators: Optional[List[int]],
    ) -> None:
        """Give the buffer `block` reads or writes (("read" | "write", index) or a name;
        recorded as the pair) these axis separators (`T.alloc_buffer(...,
        axis_separators=[1])`); None or [] removes them."""
        blk = Block(self._block(block))
        kind, i = _reindex.buffer_index(blk, buffer, _axis_sep.WHO)
        seps = list(axis_separators or [])
        self._note(buffer=(kind, i), axis_separators=seps)
        _axis_sep.set_axis_separator(blk, kind, i, seps)

    @primitive
    def reorder_block_iter_var(self, block: BlockRV, new_order: List[int]) -> None:
        """Permute the block's iter vars: new iter var j is old iter var new_order[j]."""
        _reorder_iters.reorder_block_iter_var(Block(self._block(block)), new_order)

    @primitive
    def pad_einsum(self, block: Union[BlockRV, str], padding: List[int]) -> None:
        """Pad the iteration domain of einsum block `block` to multiples of `padding` (one
        per iter var), through zero-padded `<buf>_pad` copies of its inputs and a padded
        output copied back."""
        self._note(padding=list(padding) if isinstance(padding, (list, tuple)) else padding)
        _pad_einsum.pad_einsum(Block(self._block(block)), padding)

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
    def rolling_buffer(self, block: Union[BlockRV, str], write_buffer_index: int) -> None:
        """Keep only a sliding window of intermediate buffer `write_buffer_index` of
        producer `block` along its outermost overlapping dimension (indices taken modulo the
        window) and skip recomputing the overlap after a loop's first iteration."""
        _rolling.rolling_buffer(Block(self._block(block)), write_buffer_index)


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
    canonical_text(text)  # only the constructs a trace may print
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


def _sizes(block: Block) -> dict:
    """The sizes of the block's function a map may name: its index arguments by name
    (`n = T.int32()`, `n: T.int32`)."""
    func = func_of(block.op)
    index = ir.IndexType.get()
    return {symbol_name(a): a for a in func.regions[0].blocks[0].arguments if a.type == index}
