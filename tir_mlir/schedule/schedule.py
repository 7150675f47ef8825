"""`Schedule`: TVM 0.21's tir.Schedule API over an MLIR module.

Every primitive is a method wrapped by `@primitive` (tir_mlir/schedule/primitive.py: trace,
snapshot/restore, verification). The rewrites live in `tir_mlir/passes/schedule/<name>.py`.
Groups of primitives written elsewhere are mixin classes (block motion, buffer primitives).
"""
import contextlib
import random
from typing import List, Optional, Sequence, Union

from mlir import ir

from tir_mlir.context import get_context, serialized
from tir_mlir.errors import HandleError, NoFunctionError, ScheduleError
from tir_mlir.module import IRModule
from tir_mlir.passes.schedule import (add_unit_loop as _unit, annotate as _ann, fuse as _fuse,
    loop_kind, reorder as _reorder, split as _split, tile as _tile)
from tir_mlir.analysis import structure as analysis
from tir_mlir.analysis.structure import SID
from tir_mlir.analysis.op_index import OpIndex
from tir_mlir.schedule.block_motion import BlockMotion
from tir_mlir.schedule.buffer_primitives import BufferPrimitives
from tir_mlir.schedule.cache_primitives import CachePrimitives
from tir_mlir.schedule.handles import BlockRV, ExprRV, LoopRV, _RV
from tir_mlir.schedule.layout_primitives import LayoutPrimitives
from tir_mlir.schedule.loop_primitives import LoopPrimitives
from tir_mlir.schedule.primitive import primitive
from tir_mlir.schedule.queries import Queries, check_debug_mask, check_render_level
from tir_mlir.schedule.region_primitives import RegionPrimitives
from tir_mlir.schedule.rule_queries import RuleQueries
from tir_mlir.schedule.sampling import Sampling
from tir_mlir.schedule.trace import Trace
from tir_mlir.schedule.views import StmtSRef, view
from tir_mlir.suggest import did_you_mean

BlockOrLoop = Union[BlockRV, LoopRV]


class Schedule(BlockMotion, BufferPrimitives, LoopPrimitives, LayoutPrimitives, Sampling, Queries,
               RuleQueries, CachePrimitives, RegionPrimitives):
    """A schedule over a copy of `mod`: `sch.mod` is the scheduled module, `sch.trace` the
    primitives applied so far. `seed` seeds the sampling instructions (None or -1: random).
    `debug_mask`, `error_render_level` and `enable_check` are TVM's, validated and kept
    (`sch.state`): the module is verified after every primitive and every legality check runs
    whatever they say."""

    @serialized
    def __init__(self, mod: IRModule, *, seed: Optional[int] = None,
                 debug_mask: Union[str, int] = "none", error_render_level: str = "detail",
                 enable_check: bool = True):
        if not isinstance(mod, IRModule):
            raise TypeError(f"Schedule expects an IRModule, got {type(mod).__name__}")
        self._mod = mod.copy()
        self._identity = object()    # carried by this schedule's handles
        self._inherited = {}         # identity of a schedule copied from -> its next sid then
        self._init_random(seed)
        self._trusted = False        # trusted replay: no per-step snapshot / verification
        self._debug_mask = check_debug_mask(debug_mask)
        self._error_render_level = check_render_level(error_render_level)
        self._enable_check = bool(enable_check)
        self._working_on = None      # work_on's function name
        self._removed = {}           # id(handle) -> handle, for remove_rv
        self._trace = Trace()
        self._consumed = {}          # sid -> (primitive name, trace step)
        with get_context():
            self._ops = OpIndex(self._mod)   # None after a rewrite that does not keep it
        self._next_sid = 1 + max(self._ops.ops, default=-1)
        self._next_name = 0
        self._mutating = 0           # depth of index-dropping rewrites running (no index then)
        self._lookups_first = False  # the running rewrite resolves its handles before it erases
        self._pre_index = None       # ... and the index its lookups share until it erases
        self._tracks_lookups = False  # ... or, told of its erasures, after them too
        self._tracking = 0           # depth of index-keeping rewrites running
        self._depth = 0
        self._recording = False
        self._inst = None
        self._step = 0

    @property
    def mod(self) -> IRModule:
        return self._mod

    @property
    def trace(self) -> Trace:
        return self._trace

    @serialized
    def copy(self) -> "Schedule":
        """An independent schedule with the same module, trace and handles; its random state
        is forked from this one's."""
        new = Schedule.__new__(Schedule)
        new.__dict__.update(self.__dict__)
        new._mod = self._mod.copy()
        new._trace = self._trace.copy()
        new._consumed = dict(self._consumed)
        new._removed = dict(self._removed)
        new._ops, new._mutating, new._tracking = None, 0, 0
        new._values = dict(self._values)
        new._rng = random.Random(self.fork_seed())
        # the copy knows the handles made before it (as TVM copies the RV table), not those
        # either schedule makes afterwards
        new._identity = object()
        new._inherited = dict(self._inherited)
        new._inherited[self._identity] = self._next_sid
        return new

    @contextlib.contextmanager
    def trusted_mode(self):
        """Primitives without per-step snapshot and verification (the search's fast replay):
        a primitive that fails after it started rewriting leaves the module broken, so the
        schedule must then be dropped. Legality errors raised before rewriting are safe."""
        prev, self._trusted = self._trusted, True
        try:
            yield self
        finally:
            self._trusted = prev

    # --- handles (for primitive implementations) ----------------------------------------------
    def _handle(self, op: ir.Operation, cls=None) -> _RV:
        """A new handle for `op`, giving the op a stable id if it has none yet."""
        op = analysis.op_of(op)
        attrs = op.attributes
        if SID in attrs:
            sid = ir.IntegerAttr(attrs[SID]).value
        else:
            sid = self._next_sid
            attrs[SID] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), sid)
            self._next_sid += 1
            if self._ops is not None and not self._mutating:
                self._ops.add(sid, op)
            elif self._pre_index is not None:
                self._pre_index.add(sid, op)
        cls = cls or (BlockRV if analysis.is_block(op) else LoopRV)
        return cls(sid, schedule=self._identity)

    def _resolve_many(self, rvs, kind=None) -> List[ir.Operation]:
        """The ops of several handles from one index of the module (inside a rewriting
        primitive each `_resolve` walks the module again: see `_index`)."""
        if self._ops is not None:
            return [self._resolve(rv, kind) for rv in rvs]
        self._ops = self._index(force=True)
        try:
            return [self._resolve(rv, kind) for rv in rvs]
        finally:
            if self._mutating:
                self._ops = None

    def _resolve(self, rv, kind=None) -> ir.Operation:
        """The op a handle stands for; ScheduleError if it was consumed or is gone."""
        if kind is not None and not isinstance(rv, kind):
            want = " or ".join(k.KIND for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise ScheduleError(f"expected a {want} handle, got {rv!r}")
        if not isinstance(rv, _RV):
            raise ScheduleError(f"expected a block or loop handle, got {rv!r}")
        if rv.schedule is not None and rv.schedule is not self._identity and \
                rv.sid >= self._inherited.get(rv.schedule, -1):
            raise HandleError(f"{rv.describe()} belongs to another Schedule; get the "
                                f"{rv.KIND} from this one (sch.get_block / sch.get_loops)")
        if rv.sid in self._consumed:
            prim, step = self._consumed[rv.sid]
            raise ScheduleError(f"{rv.describe()} was consumed by {prim} at trace step {step}")
        if id(rv) in self._removed:
            raise HandleError(f"{rv.describe()} was removed by remove_rv")
        op = self._index().lookup(rv.sid, settled=not self._tracking)
        if op is not None:
            return op
        raise HandleError(f"{rv.describe()} no longer exists in the module")

    def _index(self, force: bool = False) -> OpIndex:
        """The index of the module's ops (sid -> op, block names), kept by the rewrites that
        report what they erase and rebuilt by a walk after any other (see primitive.py).
        `force`: build it even inside such a rewrite, for lookups made before it rewrites."""
        if self._ops is not None:
            return self._ops
        if self._mutating and self._pre_index is not None:
            return self._pre_index
        with get_context():
            index = OpIndex(self._mod)
        # Inside a rewrite that does not report its erasures ops are erased as it goes: no
        # cache there (a stale entry would be an erased operation), except for the lookups of
        # a `lookups_first` primitive before its first erasure (op_index.erased drops it).
        if not self._mutating and not force:
            self._ops = index
        elif self._mutating and self._lookups_first:
            index.complete = index.names = False     # ops it creates: found by a walk
            self._pre_index = index
        return index

    def _consume(self, rv: _RV, by: str):
        """Mark a handle's op as gone (erased by primitive `by`)."""
        self._consumed[rv.sid] = (by, self._step)

    def _note(self, **args):
        """Canonicalize recorded arguments (e.g. get_block's resolved func_name)."""
        if self._inst is not None:
            self._inst.args.update(args)

    def _name(self, rv: _RV):
        if rv.name is None:
            rv.name = f"{rv.PREFIX}{self._next_name}"
            self._next_name += 1

    def _verify(self, prim: str):
        try:
            ok = self._mod.module.operation.verify()
        except ir.MLIRError as e:
            raise ScheduleError(f"{prim}: internal error: produced invalid IR: {e}") from e
        if not ok:
            raise ScheduleError(f"{prim}: internal error: produced invalid IR")

    def get(self, rand_var_or_sref: Union[BlockOrLoop, ExprRV, StmtSRef]):
        """A view of the block / loop a handle (or sref) stands for, with TVM's attribute names
        (tir_mlir/schedule/views.py; it prints as TVMScript); the value of a sampled ExprRV."""
        if isinstance(rand_var_or_sref, ExprRV):
            return self._int(rand_var_or_sref)
        if isinstance(rand_var_or_sref, StmtSRef):
            return rand_var_or_sref.stmt
        return view(self._resolve(rand_var_or_sref))

    # --- queries -------------------------------------------------------------------------------
    def _func(self, func_name: Optional[str]) -> str:
        funcs = list(self._mod.functions)
        if func_name is None and self._working_on in funcs:
            return self._working_on
        if func_name is None:
            if len(funcs) == 1:
                return funcs[0]
            if "main" in funcs:
                return "main"
            raise NoFunctionError(f"The schedule does not know which function to be working "
                                  f"on: the module has several functions ({', '.join(funcs)})"
                                  f" and none is 'main'; call work_on or pass func_name")
        if func_name not in funcs:
            raise ScheduleError(f"no function named {func_name!r}; the module has "
                                f"{', '.join(funcs) or 'none'}")
        return func_name

    def _block(self, block: Union[BlockRV, str]) -> ir.Operation:
        if isinstance(block, str):
            block = self.get_block(block)
        op = self._resolve(block, BlockRV)
        if op.name == "func.func":
            raise ScheduleError("this primitive does not apply to the root block")
        return op

    @primitive(readonly=True)
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
        found = self._index().blocks_named(func, name, settled=not self._tracking)
        if not found and name == "root":      # TVM's implicit root block: the function body
            found = [self._mod[func]]
        if not found:
            names = [n for f, n in self._index().blocks if f == func]
            raise ScheduleError(f"Cannot find a block with the name: {name} "
                                f"(in function {func!r}){did_you_mean(name, names)}",
                                fast="ScheduleError: Cannot find a block with the specified "
                                     "name")
        if len(found) > 1:
            raise ScheduleError(f"several blocks are named {name!r} in function {func!r}")
        return self._handle(found[0], BlockRV)

    @primitive(readonly=True)
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

    @primitive(readonly=True)
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

    @primitive(readonly=True)
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
        return [self._handle(b, BlockRV) for b in analysis.blocks_accessing(
            analysis.scope_of(op), reads, stores=True, skip=op)]

    @primitive(readonly=True)
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
        return [self._handle(b, BlockRV) for b in analysis.blocks_accessing(
            analysis.scope_of(op), writes, stores=False, skip=op)]

    # --- loop primitives -----------------------------------------------------------------------
    @primitive(keeps_index=True)
    def split(self, loop: LoopRV, factors: Sequence[Optional[int]],
              preserve_unit_iters: bool = True, disable_predication: bool = False, *,
              names: Optional[Sequence[str]] = None) -> List[LoopRV]:
        """Split a loop into len(factors) nested loops (one factor may be None: inferred).
        `names` (tir_mlir only) names the new loops; default `{name}_0`, `{name}_1`, ..."""
        op = self._resolve(loop, LoopRV)
        new = _split.split(op, [self._int(f) for f in factors], preserve_unit_iters=preserve_unit_iters,
                           disable_predication=disable_predication, names=names)
        self._consume(loop, "split")
        return [self._handle(n, LoopRV) for n in new]

    @primitive(keeps_index=True)
    def fuse(self, *loops: LoopRV, preserve_unit_iters: bool = True) -> LoopRV:
        """Fuse a perfect nest of loops (outermost first) into one loop `i_j_fused`."""
        ops = self._resolve_many(loops, LoopRV)
        new = _fuse.fuse(ops, preserve_unit_iters=preserve_unit_iters)
        for lp in loops:
            self._consume(lp, "fuse")
        return self._handle(new, LoopRV)

    @primitive(keeps_index=True)
    def reorder(self, *ordered_loops: LoopRV) -> None:
        """Permute loops of one chain into the given order."""
        _reorder.reorder(self._resolve_many(ordered_loops, LoopRV))

    @primitive(keeps_index=True)
    def add_unit_loop(self, block_or_loop: BlockOrLoop) -> LoopRV:
        """Wrap a block or loop in a new loop `u` of extent 1."""
        return self._handle(_unit.add_unit_loop(self._resolve(block_or_loop, (BlockRV, LoopRV))),
                            LoopRV)

    @primitive(keeps_ops=True)
    def parallel(self, loop: LoopRV) -> None:
        """Run the iterations of a loop on separate threads (`T.parallel`).

        Parameters
        ----------
        loop : LoopRV
            A loop whose iterations are independent: every block under it binds the loop only to
            spatial (data-parallel) iterators, or the primitive refuses with `ScheduleError`.

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
        sch.parallel(i)
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            for i in T.parallel(128):
                for j in range(128):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
        ```
        """
        loop_kind.parallel(self._resolve(loop, LoopRV))

    @primitive(keeps_ops=True)
    def vectorize(self, loop: LoopRV) -> None:
        """Make a loop a vector loop (`T.vectorized`): the lowering emits vector instructions for
        it.

        Parameters
        ----------
        loop : LoopRV
            A loop under which every block binds it only to spatial iterators (usually the innermost
            loop, over contiguous elements).

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
        sch.vectorize(j)
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            for i in range(128):
                for j in T.vectorized(128):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
        ```
        """
        loop_kind.vectorize(self._resolve(loop, LoopRV))

    @primitive(keeps_ops=True)
    def unroll(self, loop: LoopRV) -> None:
        """Unroll a loop fully (`T.unroll`).

        Parameters
        ----------
        loop : LoopRV
            The loop; its extent should be small, every iteration becomes code.

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
        j_0, j_1 = sch.split(j, factors=[None, 4])
        sch.unroll(j_1)
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            for i, j_0 in T.grid(128, 32):
                for j_1 in T.unroll(4):
                    with T.block("B"):
                        vi = T.axis.spatial(128, i)
                        vj = T.axis.spatial(128, j_0 * 4 + j_1)
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
        ```
        """
        loop_kind.unroll(self._resolve(loop, LoopRV))

    @primitive(keeps_ops=True)
    def bind(self, loop: LoopRV, thread_axis: str) -> None:
        """Bind a loop to a GPU thread axis (`T.thread_binding`).

        Parameters
        ----------
        loop : LoopRV
            A loop whose iterations are independent.
        thread_axis : str
            `"blockIdx.x"`, `"threadIdx.x"` (and their `y`, `z`), or `"vthread.x"`.

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
        sch.bind(i, "blockIdx.x")
        sch.bind(j, "threadIdx.x")
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            for i in T.thread_binding(128, thread="blockIdx.x"):
                for j in T.thread_binding(128, thread="threadIdx.x"):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
        ```
        """
        loop_kind.bind(self._resolve(loop, LoopRV), thread_axis)

    @primitive(keeps_ops=True)
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

    @primitive(keeps_ops=True)
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

    @primitive(macro=True)
    def tile(self, *loops: LoopRV, factors: Sequence[Sequence[Optional[int]]]) -> List[LoopRV]:
        """tir_mlir only: split every loop by its factor list and reorder level by level.
        `tile(i, j, factors=[[None, 32], [None, 32]])` returns [i_0, j_0, i_1, j_1]. Recorded
        in the trace as the splits and the reorder."""
        _tile.check(len(loops), factors)
        for lp in loops:
            self._resolve(lp, LoopRV)
        parts = [self.split(lp, list(f)) for lp, f in zip(loops, factors)]
        ordered = [p[level] for level in range(len(factors[0])) for p in parts]
        self.reorder(*ordered)
        return ordered
