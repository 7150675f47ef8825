"""Queries: finding blocks and loops (TVM's get_block_loop), and the rest of TVM 0.21's
Schedule surface that is not a rewrite: get_sref, work_on / func_working_on, remove_rv,
same_as, state, show.

Only the get_* methods are trace instructions (as in TVM); the others read or set schedule
state.
"""

from typing import List, Optional, Union

from mlir import ir

from tir_mlir.schedule.primitives.host import ScheduleHost
from tir_mlir.analysis import structure as analysis
from tir_mlir.errors import ScheduleError
from tir_mlir.schedule.handles import BlockOrLoop, BlockRV, LoopRV
from tir_mlir.schedule.primitive import primitive
from tir_mlir.schedule.views import StmtSRef, _View
from tir_mlir.suggest import did_you_mean

_ALLOCS = ("memref.alloc", "memref.alloca")


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


class Queries(ScheduleHost):
    """Finding blocks and loops, and the schedule's own state."""

    @primitive
    def get_block(self, name: str, func_name: Optional[str] = None) -> BlockRV:
        """Find a block by its name.

        Parameters
        ----------
        name : str
            The block's name, as in `T.block("name")`; `"root"` is the function body.
        func_name : str, optional
            The function to look in; by default the one `work_on` chose, else the module's only
            function or `main`. A module of several functions, none `main`, needs it (a `ValueError`
            otherwise, as in TVM).

        Returns
        -------
        BlockRV
            A handle of the block. A name no block has raises `ScheduleError`, with the closest name
            there is.

        Examples
        --------
        On:

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
        b = sch.get_block("B")
        assert sch.get(b).name_hint == "B"
        ```
        """
        func = self._func(func_name)
        self._note(func_name=func)
        if name == "root" and not self._rw.index.blocks.get((func, name)):
            # TVM's implicit root block: the function body. No re-walk to look for a block of
            # that name: the index holds every parsed block and no primitive names one "root".
            found = [self._mod[func]]
        else:
            found = self._rw.index.blocks_named(func, name)
        if not found:
            names = self._rw.index.block_names(func)
            raise ScheduleError(
                f"Cannot find a block with the name: {name} "
                f"(in function {func!r}){did_you_mean(name, names)}",
                fast="ScheduleError: Cannot find a block with the specified name",
            )
        if len(found) > 1:
            raise ScheduleError(f"several blocks are named {name!r} in function {func!r}")
        return self._handle(found[0], BlockRV)

    @primitive
    def get_loops(self, block: Union[BlockRV, str]) -> List[LoopRV]:
        """The loops around a block, outermost first.

        Parameters
        ----------
        block : BlockRV or str
            The block (or its name).

        Returns
        -------
        list of LoopRV
            Handles of the enclosing loops, from the outermost to the innermost.

        Examples
        --------
        On:

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
        assert (sch.get(i).loop_var.name, sch.get(i).extent) == ("i", 128)
        ```
        """
        return [self._handle(lp, LoopRV) for lp in analysis.enclosing_loops(self._block(block))]

    @primitive
    def get_child_blocks(self, block_or_loop: BlockOrLoop) -> List[BlockRV]:
        """The blocks directly under a block or a loop (not nested deeper in blocks).

        Parameters
        ----------
        block_or_loop : BlockRV or LoopRV
            The parent; `get_block("root")` gives the function body.

        Returns
        -------
        list of BlockRV
            Handles of the child blocks, in program order.

        Examples
        --------
        On:

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
        children = sch.get_child_blocks(sch.get_block("root"))
        assert [sch.get(b).name_hint for b in children] == ["B", "C"]
        ```
        """
        op = self._resolve(block_or_loop, (BlockRV, LoopRV))
        return [self._handle(b, BlockRV) for b in analysis.child_blocks(op)]

    @primitive
    def get_producers(self, block: Union[BlockRV, str]) -> List[BlockRV]:
        """The blocks that write a buffer the given block reads, in its scope.

        Parameters
        ----------
        block : BlockRV or str
            The consumer block.

        Returns
        -------
        list of BlockRV
            Handles of its producers, in program order.

        Examples
        --------
        On:

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
        producers = sch.get_producers(sch.get_block("C"))
        assert [sch.get(b).name_hint for b in producers] == ["B"]
        ```
        """
        op = self._block(block)
        reads, _ = analysis.block_reads_writes(op)
        return [
            self._handle(b, BlockRV)
            for b in analysis.blocks_accessing(analysis.scope_of(op), reads, stores=True, skip=op)
        ]

    @primitive
    def get_consumers(self, block: Union[BlockRV, str]) -> List[BlockRV]:
        """The blocks that read a buffer the given block writes, in its scope.

        Parameters
        ----------
        block : BlockRV or str
            The producer block.

        Returns
        -------
        list of BlockRV
            Handles of its consumers, in program order.

        Examples
        --------
        On:

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
        consumers = sch.get_consumers(sch.get_block("B"))
        assert [sch.get(b).name_hint for b in consumers] == ["C"]
        ```
        """
        op = self._block(block)
        _, writes = analysis.block_reads_writes(op)
        return [
            self._handle(b, BlockRV)
            for b in analysis.blocks_accessing(analysis.scope_of(op), writes, stores=False, skip=op)
        ]

    @primitive
    def get_output_blocks(self, scope_block: Union[BlockRV, str]) -> List[BlockRV]:
        """The blocks under `scope_block` (a block, or "root" for the function body) that
        write a buffer not allocated in their scope: the scope's outputs."""
        scope = self._resolve(
            self.get_block(scope_block) if isinstance(scope_block, str) else scope_block, BlockRV
        )
        return [
            self._handle(op, BlockRV)
            for op in analysis.walk(scope)
            if analysis.is_block(op) and _is_output(op)
        ]

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
        self._rvs.removed[id(rand_var)] = rand_var

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


def _scope_root(op: ir.Operation) -> ir.Operation:
    """The block (or function, the implicit root block) that `op` is directly inside."""
    p = analysis.parent_op(op)
    while p is not None and not analysis.is_block(p) and p.name != "func.func":
        p = analysis.parent_op(p)
    if p is None:
        raise ValueError(f"{op.name} is inside no block or function")
    return p


def _allocated_in(scope: ir.Operation) -> list:
    """Buffers allocated by `scope` itself (its alloc_buffer list), not by nested blocks."""
    return [
        o.results[0] for o in analysis.walk(scope) if o.name in _ALLOCS and _scope_root(o) == scope
    ]


def _is_output(block: ir.Operation) -> bool:
    """TVM's IsOutputBlock: the block writes a buffer its scope root did not allocate."""
    local = _allocated_in(_scope_root(block))
    return any(not any(w == a for a in local) for w in analysis.block_reads_writes(block)[1])


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
