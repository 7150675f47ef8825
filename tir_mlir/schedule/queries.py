"""Schedule queries and the rest of TVM 0.21's Schedule surface that is not a rewrite:
get_output_blocks, get_sref, work_on / func_working_on, remove_rv, enter_postproc, same_as,
state, show.

A mixin of `Schedule` (a base class of it in schedule.py). Only get_output_blocks and
enter_postproc are trace instructions (as in TVM); the others read or set schedule state.
"""
from typing import Dict, List, Optional, Union

from mlir import ir

from tir_mlir.analysis import structure as analysis
from tir_mlir.schedule.handles import BlockRV, LoopRV
from tir_mlir.schedule.primitive import primitive
from tir_mlir.schedule.views import StmtSRef, _View

_ALLOCS = ("memref.alloc", "memref.alloca")


def _scope_root(op: ir.Operation) -> ir.Operation:
    """The block (or function, the implicit root block) that `op` is directly inside."""
    p = analysis.parent_op(op)
    while not analysis.is_block(p) and p.name != "func.func":
        p = analysis.parent_op(p)
    return p


def _allocated_in(scope: ir.Operation) -> list:
    """Buffers allocated by `scope` itself (its alloc_buffer list), not by nested blocks."""
    return [o.results[0] for o in analysis.walk(scope)
            if o.name in _ALLOCS and _scope_root(o) == scope]


def _is_output(block: ir.Operation) -> bool:
    """TVM's IsOutputBlock: the block writes a buffer its scope root did not allocate."""
    local = _allocated_in(_scope_root(block))
    return any(not any(w == a for a in local) for w in analysis.block_reads_writes(block)[1])


class ScheduleState:
    """TVM's `sch.state`, as far as it is meaningful here: the module being scheduled, the debug
    mask, and srefs of statements."""

    def __init__(self, sch):
        self._sch = sch

    @property
    def mod(self):
        return self._sch.mod

    @property
    def debug_mask(self) -> int:
        return self._sch._debug_mask

    @property
    def enable_check(self) -> bool:
        return self._sch._enable_check

    def get_sref(self, stmt: _View) -> StmtSRef:
        return self._sch.get_sref(stmt)


class Queries:
    """Schedule queries and bookkeeping (see the module docstring)."""

    # TVM's annotation value types (annotate's ann_val)
    PrimAnnotationValueT = Union[str, int, float]
    AnnotationValueT = Union[PrimAnnotationValueT, List[PrimAnnotationValueT],
                             Dict[str, Union[PrimAnnotationValueT, List[PrimAnnotationValueT]]]]

    @primitive
    def get_output_blocks(self, scope_block: Union[BlockRV, str]) -> List[BlockRV]:
        """The blocks under `scope_block` (a block, or "root" for the function body) that
        write a buffer not allocated in their scope: the scope's outputs."""
        scope = self._resolve(self.get_block(scope_block) if isinstance(scope_block, str)
                              else scope_block, BlockRV)
        return [self._handle(op, BlockRV) for op in analysis.walk(scope)
                if analysis.is_block(op) and _is_output(op)]

    @primitive
    def enter_postproc(self) -> None:
        """Mark the start of postprocessing in the trace: replay with remove_postproc=True
        stops here."""

    def get_sref(self, rand_var_or_stmt: Union[BlockRV, LoopRV, _View]) -> StmtSRef:
        """The sref (statement reference) of a handle or of a view from `sch.get`."""
        if isinstance(rand_var_or_stmt, _View):
            return StmtSRef(rand_var_or_stmt.op)
        return StmtSRef(self._resolve(rand_var_or_stmt, (BlockRV, LoopRV)))

    def work_on(self, func_name: str) -> None:
        """Make `func_name` the function that get_block looks in by default."""
        self._working_on = self._func(func_name)

    @property
    def func_working_on(self) -> Optional[str]:
        """The name of the function get_block uses by default (TVM gives its GlobalVar):
        the one set by work_on, else the only function of the module, else None."""
        if self._working_on is not None:
            return self._working_on
        funcs = list(self._mod.functions)
        return funcs[0] if len(funcs) == 1 else None

    def remove_rv(self, rand_var: Union[BlockRV, LoopRV]) -> None:
        """Forget a handle: using it afterwards is an error (other handles of the same block
        or loop stay valid). Not a trace instruction, as in TVM."""
        self._resolve(rand_var, (BlockRV, LoopRV))
        self._removed[id(rand_var)] = rand_var

    def same_as(self, other) -> bool:
        return self is other

    @property
    def state(self) -> ScheduleState:
        return ScheduleState(self)

    def show(self, *args, **kwargs) -> None:
        """Print the module, then the trace, highlighted on a terminal (tir_mlir/show.py)."""
        self.mod.show(*args, **kwargs)
        self.trace.show(*args, **kwargs)

    def _repr_html_(self) -> str:
        from tir_mlir.show import html_text
        return html_text(f"{self.mod.script()}\n\n{self.trace}")


def check_debug_mask(debug_mask: Union[str, int]) -> int:
    """TVM's debug_mask: "all", "none" or an int bit mask."""
    if isinstance(debug_mask, str):
        if debug_mask not in ("all", "none"):
            raise ValueError(f'debug_mask must be "all", "none" or an int, got {debug_mask!r}')
        return -1 if debug_mask == "all" else 0
    if not isinstance(debug_mask, int):
        raise TypeError(f"debug_mask must be a str or an int, got {type(debug_mask).__name__}")
    return debug_mask


def check_render_level(level: str) -> str:
    if level not in ("detail", "fast", "none"):
        raise ValueError(f'error_render_level must be "detail", "fast" or "none", got {level!r}')
    return level
