"""`Schedule`: TVM 0.21's tir.Schedule API over an MLIR module.

The primitives are grouped by concern in tir_mlir/schedule/primitives/ (as TVM's
schedule/primitive/: loops, loop kinds, caches, compute location, reduction,
blockize/tensorize, layout, annotation, sampling, queries), each group a base class of
`Schedule`, each primitive a method wrapped by `@primitive` (primitive.py: trace record, one
transaction of the schedule's `Rewriter`, verification) over a rewrite in
`tir_mlir/passes/schedule/<name>.py`. This module holds the schedule's state and the handle
bookkeeping the primitives share.
"""

import contextlib
import random
from typing import Any, List, Optional, Sequence, Union, overload

from mlir import ir

from tir_mlir.ir.mlir_error import MLIRError
from tir_mlir.analysis import structure as analysis
from tir_mlir.analysis.structure import SID
from tir_mlir.context import get_context, serialized
from tir_mlir.errors import HandleError, NoFunctionError, ScheduleError
from tir_mlir.module import IRModule
from tir_mlir.schedule.handles import BlockOrLoop, BlockRV, ExprRV, HandleTable, LoopRV, _RV
from tir_mlir.schedule.primitives.annotation import Annotation
from tir_mlir.schedule.primitives.blockize_tensorize import BlockizeTensorize
from tir_mlir.schedule.primitives.caches import Caches
from tir_mlir.schedule.primitives.compute_location import ComputeLocation
from tir_mlir.schedule.primitives.layout import Layout
from tir_mlir.schedule.primitives.loop_kinds import LoopKinds
from tir_mlir.schedule.primitives.loops import Loops
from tir_mlir.schedule.primitives.queries import Queries, check_debug_mask, check_render_level
from tir_mlir.schedule.primitives.reduction import Reduction
from tir_mlir.schedule.primitives.sampling import Sampling
from tir_mlir.schedule.rewriter import Rewriter
from tir_mlir.schedule.rule_queries import RuleQueries
from tir_mlir.schedule.trace import Instruction, Trace
from tir_mlir.schedule.views import StmtSRef, view


class Schedule(
    Queries,
    Loops,
    LoopKinds,
    Caches,
    ComputeLocation,
    Reduction,
    BlockizeTensorize,
    Layout,
    Annotation,
    Sampling,
    RuleQueries,
):
    """A schedule over a copy of `mod`: `sch.mod` is the scheduled module, `sch.trace` the
    primitives applied so far. `seed` seeds the sampling instructions (None or -1: random).
    `debug_mask`, `error_render_level` and `enable_check` are TVM's, validated and kept
    (`sch.state`): the module is verified after every primitive and every legality check runs
    whatever they say."""

    @serialized
    def __init__(
        self,
        mod: IRModule,
        *,
        seed: Optional[int] = None,
        debug_mask: Union[str, int] = "none",
        error_render_level: str = "detail",
        enable_check: bool = True,
    ):
        if not isinstance(mod, IRModule):
            raise TypeError(f"Schedule expects an IRModule, got {type(mod).__name__}")
        self._rw = Rewriter(mod.copy())  # the module, its op index, the running transaction
        with get_context():
            first_sid = 1 + max(self._rw.index.ops, default=-1)
        self._rvs = HandleTable(first_sid)  # the handles given out, and the sampled values
        self._trace = Trace()
        self._calls: List[Optional[Instruction]] = []  # the running primitives, outermost
        #   first: the instruction each records (None: recorded by a caller, or a macro)
        self._rng = random.Random(None if seed is None or seed < 0 else seed)
        self._trusted = False  # trusted replay: no per-step snapshot / verification
        self._working_on: Optional[str] = None  # work_on's function name
        self._debug_mask = check_debug_mask(debug_mask)
        self._error_render_level = check_render_level(error_render_level)
        self._enable_check = bool(enable_check)

    @property
    def mod(self) -> IRModule:
        return self._rw.mod

    @property
    def _mod(self) -> IRModule:
        return self._rw.mod

    @property
    def trace(self) -> Trace:
        return self._trace

    @serialized
    def copy(self) -> "Schedule":
        """An independent schedule with the same module, trace and handles; its random state
        is forked from this one's."""
        new = Schedule.__new__(Schedule)
        new.__dict__.update(self.__dict__)
        new._rw = Rewriter(self._rw.mod.copy())
        new._rvs = self._rvs.copy()
        new._trace = self._trace.copy()
        new._calls = []
        new._rng = random.Random(self.fork_seed())
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
            sid = self._rvs.new_sid()
            attrs[SID] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), sid)
            self._rw.add(sid, op)
        cls = cls or (BlockRV if analysis.is_block(op) else LoopRV)
        return cls(sid, schedule=self._rvs.identity)

    def _resolve_many(self, rvs, kind=None) -> List[ir.Operation]:
        return [self._resolve(rv, kind) for rv in rvs]

    def _resolve(self, rv, kind=None) -> ir.Operation:
        """The op a handle stands for; ScheduleError if it was consumed or is gone."""
        if kind is not None and not isinstance(rv, kind):
            want = " or ".join(k.KIND for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise ScheduleError(f"expected a {want} handle, got {rv!r}")
        if not isinstance(rv, _RV):
            raise ScheduleError(f"expected a block or loop handle, got {rv!r}")
        rvs = self._rvs
        if rvs.foreign(rv):
            raise HandleError(
                f"{rv.describe()} belongs to another Schedule; get the "
                f"{rv.KIND} from this one (sch.get_block / sch.get_loops)"
            )
        if rv.sid in rvs.consumed:
            prim, step = rvs.consumed[rv.sid]
            raise ScheduleError(f"{rv.describe()} was consumed by {prim} at trace step {step}")
        if id(rv) in rvs.removed:
            raise HandleError(f"{rv.describe()} was removed by remove_rv")
        op = self._rw.index.lookup(rv.sid)
        if op is not None:
            return op
        raise HandleError(f"{rv.describe()} no longer exists in the module")

    def _consume(self, rv: _RV, by: str):
        """Mark a handle's op as gone (erased by primitive `by`)."""
        self._rvs.consumed[rv.sid] = (by, len(self._trace))

    def _consume_gone(self, sids: Sequence[int], by: str):
        """Mark the handles of those of `sids` whose op the running primitive erased."""
        for sid in self._rw.index.missing(sids):
            self._rvs.consumed[sid] = (by, len(self._trace))

    def _note(self, **args):
        """Canonicalize recorded arguments (e.g. get_block's resolved func_name)."""
        inst = self._calls[-1] if self._calls else None
        if inst is not None:
            inst.args.update(args)

    def _verify(self, prim: str):
        try:
            ok = self._mod.module.operation.verify()
        except MLIRError as e:
            raise ScheduleError(f"{prim}: internal error: produced invalid IR: {e}") from e
        if not ok:
            raise ScheduleError(f"{prim}: internal error: produced invalid IR")

    @overload
    def get(self, rand_var_or_sref: ExprRV) -> int: ...
    @overload
    def get(self, rand_var_or_sref: Union[BlockOrLoop, StmtSRef]) -> Any: ...
    def get(self, rand_var_or_sref: Union[BlockOrLoop, ExprRV, StmtSRef]):
        """A view of the block / loop a handle (or sref) stands for, with TVM's attribute names
        (tir_mlir/schedule/views.py; it prints as TVMScript); the value of a sampled ExprRV."""
        if isinstance(rand_var_or_sref, ExprRV):
            return self._int(rand_var_or_sref)
        if isinstance(rand_var_or_sref, StmtSRef):
            return rand_var_or_sref.stmt
        return view(self._resolve(rand_var_or_sref))

    def _func(self, func_name: Optional[str]) -> str:
        funcs = list(self._mod.functions)
        working = self._working_on
        if func_name is None and working is not None and working in funcs:
            return working
        if func_name is None:
            if len(funcs) == 1:
                return funcs[0]
            if "main" in funcs:
                return "main"
            raise NoFunctionError(
                f"The schedule does not know which function to be working "
                f"on: the module has several functions ({', '.join(funcs)})"
                f" and none is 'main'; call work_on or pass func_name"
            )
        if func_name not in funcs:
            raise ScheduleError(
                f"no function named {func_name!r}; the module has {', '.join(funcs) or 'none'}"
            )
        return func_name

    def _block(self, block: Union[BlockRV, str]) -> ir.Operation:
        if isinstance(block, str):
            block = self.get_block(block)
        op = self._resolve(block, BlockRV)
        if op.name == "func.func":
            raise ScheduleError("this primitive does not apply to the root block")
        return op
