"""The TE schedule API (`s = te.create_schedule(C.op)`, `s[C].split(...)`, `s.cache_read(...)`)
as a thin layer over `tir_mlir.Schedule`.

The TE program becomes a PrimFunc (create_prim_func); a stage is a block (found by name), an
IterVar is a loop handle. Every TE call is one or a few `Schedule` calls, so the rewrites, the
legality checks and the trace are TensorIR's: docs/te_primitives.md lists the mapping.
`lower(s, args)` returns the scheduled module; with other arguments than the schedule was made
for, it builds the PrimFunc for those and replays the trace on it.
"""

from typing import Dict, List

from mlir import ir

from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.schedule.handles import BlockRV, LoopRV
from tir_mlir.schedule.schedule import Schedule as TIRSchedule
from tir_mlir.te.expr import Binary, Const, Expr, Var
from tir_mlir.te.operation import ComputeOp, IterVar, PlaceholderOp, Tensor
from tir_mlir.te.prim_func import prim_func_and_names, reachable_ops
from tir_mlir.te.reduce_parallel import is_reduction_loop, parallel_reduction

# TE pragmas with a TensorIR loop kind; any other pragma is refused (it would be ignored).
PRAGMA_KINDS = {
    "unroll": "unroll",
    "vectorize": "vectorize",
    "parallel": "parallel",
    "parallel_launch_point": "parallel",
}


class _BlockOp:
    """`X.op` / `s[X].op` for a stage whose block TE rewrote or made (rfactor, cache_write,
    cache_read): its axes are read from the block's loops when asked."""

    def __init__(self, stage: "Stage"):
        self.stage = stage

    @property
    def name(self):
        return self.stage.block_name

    @property
    def axis(self):
        return self.stage.sched._view(self.stage)[0]

    @property
    def reduce_axis(self):
        return self.stage.sched._view(self.stage)[1]


class Stage:
    def __init__(self, sched: "Schedule", block: str, op):
        self.sched, self.block_name, self._op = sched, block, op

    # --- handles ------------------------------------------------------------------------------
    @property
    def block(self):
        return self.sched.sch.get_block(self.block_name)

    @property
    def op(self):
        return self._op if self._op is not None else _BlockOp(self)

    def _loop(self, iv):
        if isinstance(iv, Var):
            iv = self.sched._var_axis.get(id(iv), iv)
        rv = self.sched._loops.get(id(iv))
        if rv is None:
            raise ScheduleError(
                f"stage {self.block_name!r}: {iv!r} is not a loop axis of the schedule"
            )
        return rv

    def _axis(self, loop, name, kind="S") -> IterVar:
        return self.sched._iter_var(loop, name, kind)

    # --- loop transformations -------------------------------------------------------------------
    def split(self, parent, factor=None, nparts=None):
        if (factor is None) == (nparts is None):
            raise ScheduleError("split: give exactly one of factor and nparts")
        factors = [None, factor] if factor is not None else [nparts, None]
        outer, inner = self.sched.sch.split(self._loop(parent), factors)
        name = _name(parent)
        return self._axis(outer, f"{name}_outer", parent.kind), self._axis(
            inner, f"{name}_inner", parent.kind
        )

    def fuse(self, *args):
        ivs = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
        loop = self.sched.sch.fuse(*[self._loop(iv) for iv in ivs])
        return self._axis(loop, "_".join(_name(iv) for iv in ivs) + "_fused", ivs[0].kind)

    def reorder(self, *args):
        self.sched.sch.reorder(*[self._loop(iv) for iv in args])

    def tile(self, x_parent, y_parent, x_factor, y_factor):
        xo, xi = self.split(x_parent, factor=x_factor)
        yo, yi = self.split(y_parent, factor=y_factor)
        self.reorder(xo, yo, xi, yi)
        return xo, yo, xi, yi

    def unroll(self, var):
        self.sched.sch.unroll(self._loop(var))

    def vectorize(self, var):
        self.sched.sch.vectorize(self._loop(var))

    def parallel(self, var):
        loop = self._loop(var)
        if is_reduction_loop(self.sched.sch, loop):  # TE raced here; TensorIR: rfactor
            parallel_reduction(self.sched, loop)
        else:
            self.sched.sch.parallel(loop)

    def bind(self, ivar, thread_ivar):
        if not isinstance(thread_ivar, IterVar) or not thread_ivar.kind:
            raise ScheduleError("bind: expected a te.thread_axis(...)")
        loop = self._loop(ivar)
        if thread_ivar.kind.startswith("blockIdx") and is_reduction_loop(self.sched.sch, loop):
            parallel_reduction(self.sched, loop, thread_ivar.kind)  # TE raced here
        else:  # a reduction on threadIdx is a cross-thread reduction, which TensorIR has
            self.sched.sch.bind(loop, thread_ivar.kind)
        self.sched._var_axis[id(thread_ivar.var)] = ivar
        self.sched._var_axis[id(thread_ivar)] = ivar

    def pragma(self, var, pragma_type, pragma_value=None):
        if pragma_type in ("import_llvm", "import_c"):  # code build() links (extern_libs.py)
            if not isinstance(pragma_value, str):
                raise ScheduleError(f"pragma {pragma_type!r} takes the code as a string")
            self.sched.sch.annotate(self._loop(var), f"pragma_{pragma_type}", pragma_value)
            return
        kind = PRAGMA_KINDS.get(pragma_type)
        if kind is None:
            raise ScheduleError(
                f"pragma {pragma_type!r} has no TensorIR counterpart in tir_mlir "
                f"(supported: {', '.join(sorted(PRAGMA_KINDS))}, import_llvm, "
                f"import_c)"
            )
        getattr(self.sched.sch, kind)(self._loop(var))

    def prefetch(self, tensor, var, offset):
        self.sched.sch.prefetch(
            self.block, self.sched._read_index(self.block, tensor), self._loop(var), offset
        )

    def tensorize(self, var, tensor_intrin):
        from tir_mlir.te.intrin import TETensorIntrin

        if not isinstance(tensor_intrin, TETensorIntrin):
            raise ScheduleError("tensorize: expected te.decl_tensor_intrin(...)")
        self.sched.sch.tensorize(self._loop(var), tensor_intrin.register())

    # --- placement ----------------------------------------------------------------------------
    def compute_at(self, parent: "Stage", scope):
        self.sched.sch.compute_at(self.block, parent._loop(scope))

    def compute_inline(self):
        self.sched.sch.compute_inline(self.block)

    def compute_root(self):
        self.sched.sch.compute_root(self.block)

    # --- storage ------------------------------------------------------------------------------
    def set_scope(self, scope):
        self.sched.sch.set_scope(self.block, 0, scope)

    def storage_align(self, axis, factor, offset):
        axes = list(self.op.axis)
        index = next((k for k, a in enumerate(axes) if a is axis), None)
        if index is None:
            raise ScheduleError(
                f"storage_align: {axis!r} is not an axis of stage {self.block_name!r}"
            )
        self.sched.sch.storage_align(self.block, 0, index, factor, offset)

    def set_store_predicate(self, predicate):
        self.sched._store_predicate(self, predicate)


class Group:
    """`s.create_group(outputs, inputs)`: the stages between them, moved together."""

    def __init__(self, stages: List[Stage]):
        self.stages = stages

    def compute_at(self, parent: Stage, scope):
        loop = parent._loop(scope)
        # consumers first: each producer then lands above the consumers already moved
        for stage in reversed(self.stages):
            stage.sched.sch.compute_at(stage.block, loop)


class Schedule:
    """`te.create_schedule(ops)`: a TensorIR Schedule of the PrimFunc the ops make."""

    def __init__(self, ops):
        ops = list(ops) if isinstance(ops, (list, tuple)) else [ops]
        self.outputs = [op.output(0) for op in ops]
        placeholders = [
            op.tensor for op in reachable_ops(self.outputs) if isinstance(op, PlaceholderOp)
        ]
        self.args = placeholders + self.outputs
        func, names = prim_func_and_names(self.args)
        self.sch = TIRSchedule(func)  # symbolic shapes too (the IR holds them)
        self._loops: Dict[int, LoopRV] = {}  # id(IterVar) -> LoopRV
        self._axes: Dict[int, IterVar] = {}  # loop sid -> IterVar
        self._keep = []  # IterVars the maps refer to, kept alive
        self._var_axis: Dict[int, IterVar] = {}  # id(thread var or axis var) -> IterVar
        self.stages: Dict[int, Stage] = {}
        for op in reachable_ops(self.outputs):
            if isinstance(op, ComputeOp):
                stage = Stage(self, names[op.tensor], op)
                self.stages[id(op)] = stage
                for iv, loop in zip(
                    list(op.axis) + list(op.reduce_axis), self.sch.get_loops(stage.block)
                ):
                    self._map(iv, loop)

    def _map(self, iv, loop):
        self._loops[id(iv)] = loop
        self._loops[id(iv.var)] = loop
        self._axes.setdefault(loop.sid, iv)
        self._keep.append(iv)

    def _block(self, rv: BlockRV) -> Block:
        return Block(self.sch.get(rv).op)

    def _loop_op(self, rv: LoopRV) -> Loop:
        return Loop(self.sch.get(rv).op)

    def _iter_var(self, loop, name, kind) -> IterVar:
        iv = self._axes.get(loop.sid)
        mapped = self._loops.get(id(iv)) if iv is not None else None
        if iv is None or mapped is None or mapped.sid != loop.sid:
            iv = IterVar(Var(name), None, kind)
            self._axes[loop.sid] = iv
            self._map(iv, loop)
        return iv

    def __getitem__(self, x) -> Stage:
        stage = self.stages.get(id(x))
        op = x.op if isinstance(x, Tensor) else x
        stage = stage or self.stages.get(id(op))
        if stage is None:
            raise ScheduleError(
                f"{getattr(op, 'name', op)!r} has no stage in this schedule "
                "(placeholders have none)"
            )
        return stage

    def _new_stage(self, block_rv, dtype, shape) -> Tensor:
        stage = Stage(self, self._block(block_rv).name, None)
        tensor = Tensor(_BlockOp(stage), shape, dtype)
        self.stages[id(tensor.op)] = self.stages[id(tensor)] = stage
        return tensor

    def _bound_loops(self, stage: Stage):
        """(block view, [(iter var index, loop handle)]) for the block's iter vars bound to
        exactly one loop variable."""
        block = self._block(stage.block)
        by_value = {self._loop_op(lp).iv: lp for lp in self.sch.get_loops(stage.block)}
        pairs = []
        with block.op.context:
            for k, expr in enumerate(block.bindings.results):
                e = expr.maybe_downcast()
                if isinstance(e, ir.AffineDimExpr) and block.dims[e.position] in by_value:
                    pairs.append((k, by_value[block.dims[e.position]]))
        return block, pairs

    def _view(self, stage: Stage):
        """The op of a rewritten stage: its loops, as spatial or reduce axes by the block's
        iter var each loop is bound to."""
        block, pairs = self._bound_loops(stage)
        axis, reduce_axis = [], []
        for k, lp in pairs:
            kind = block.iter_types[k]
            iv = self._iter_var(lp, self._loop_op(lp).name, kind)
            (reduce_axis if kind == "R" else axis).append(iv)
        return axis, reduce_axis

    # --- buffer stages ------------------------------------------------------------------------
    def _read_index(self, block, tensor) -> int:
        from tir_mlir.analysis.buffer_util import block_reads, buffer_name

        names = [buffer_name(b) for b in block_reads(self._block(block))]
        want = tensor.name if isinstance(tensor, Tensor) else str(tensor)
        if want not in names:
            raise ScheduleError(
                f"block {self._block(block).name!r} does not read {want!r} "
                f"(it reads {', '.join(names)})"
            )
        return names.index(want)

    def cache_read(self, tensor, scope, readers) -> Tensor:
        readers = list(readers) if isinstance(readers, (list, tuple)) else [readers]
        blocks = [self[r].block for r in readers]
        copy = self.sch.cache_read(
            blocks[0], self._read_index(blocks[0], tensor), scope, consumer_blocks=blocks
        )
        return self._new_stage(copy, tensor.dtype, tensor.shape)

    def cache_write(self, tensor, scope) -> Tensor:
        stage = self[tensor]
        copy = self.sch.cache_write(stage.block, 0, scope)
        # TE: the returned tensor is the computation (into the cache), s[tensor] the copy-back
        cache_stage = Stage(self, stage.block_name, stage._op)
        cache = Tensor(stage._op or _BlockOp(cache_stage), tensor.shape, tensor.dtype)
        self.stages[id(cache)] = cache_stage
        if stage._op is None:
            self.stages[id(cache.op)] = cache_stage
        stage.block_name, stage._op = self._block(copy).name, None
        return cache

    def rfactor(self, tensor, axis, factor_axis=0) -> Tensor:
        stage = self[tensor]
        rf = self.sch.rfactor(stage._loop(axis), factor_axis)
        stage._op = None
        return self._new_stage(rf, tensor.dtype, tensor.shape)

    def create_group(self, outputs, inputs, include_inputs=False) -> Group:
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        stop = {id(t.op) for t in inputs}
        ops = [op for op in _ops_between(outputs, stop)]
        if include_inputs:
            ops += [t.op for t in inputs if isinstance(t.op, ComputeOp)]
        order = [op for op in reachable_ops(self.outputs) if any(op is o for o in ops)]
        return Group([self[op] for op in order if isinstance(op, ComputeOp)])

    # --- store predicate ----------------------------------------------------------------------
    def _store_predicate(self, stage: Stage, predicate: Expr):
        """A TE condition over axis and thread variables -> a lambda over the block's iter
        vars, by name. A thread index no loop of the program is bound to is 0 (one thread)."""
        block, pairs = self._bound_loops(stage)
        loop_iter = {lp.sid: block.iter_names[k] for k, lp in pairs}

        def name_of(var):
            axis = self._var_axis.get(id(var))
            rv = self._loops.get(id(axis if axis is not None else var))
            if rv is None:
                if axis is None and var.name.startswith(("threadIdx", "blockIdx", "vthread")):
                    return "0"
                raise ScheduleError(
                    f"set_store_predicate: {var.name!r} is not a loop of stage {stage.block_name!r}"
                )
            if rv.sid not in loop_iter:
                raise ScheduleError(
                    f"set_store_predicate: loop {var.name!r} is not an iter var "
                    f"binding of block {stage.block_name!r}"
                )
            return loop_iter[rv.sid]

        text = _predicate_text(predicate, name_of)
        if not any(n in text for n in block.iter_names):
            if not _constant_truth(predicate):
                raise ScheduleError(f"set_store_predicate: the predicate {text} never holds")
            return  # always true: every store happens, nothing to add
        self.sch.set_store_predicate(stage.block, f"lambda {', '.join(block.iter_names)}: {text}")


def _ops_between(outputs, stop):
    out, seen, stack = [], set(), [t.op for t in outputs]
    while stack:
        op = stack.pop()
        if id(op) in seen or id(op) in stop or not isinstance(op, ComputeOp):
            continue
        seen.add(id(op))
        out.append(op)
        stack += [t.op for t in op.input_tensors]
    return out


def _name(iv):
    return iv.var.name if isinstance(iv, IterVar) else str(iv)


def _predicate_text(e, name_of) -> str:
    """Python text of a TE condition with `&` for `and` (what the Schedule's symbolic
    evaluation reads)."""
    if isinstance(e, IterVar):
        e = e.var
    if isinstance(e, Var):
        return name_of(e)
    if isinstance(e, Const):
        return str(e.value)
    if isinstance(e, Binary):
        op = {"and": "&", "or": "|"}.get(e.op, e.op)
        return f"({_predicate_text(e.a, name_of)} {op} {_predicate_text(e.b, name_of)})"
    raise ScheduleError(f"set_store_predicate: unsupported expression {type(e).__name__}")


_OPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "and": lambda a, b: a and b,
    "or": lambda a, b: a or b,
}


def _constant_truth(e) -> object:
    """The value of a condition whose only variables are unbound thread indices (0)."""
    if isinstance(e, IterVar):
        return 0
    if isinstance(e, Var):
        return 0
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Binary) and e.op in _OPS:
        return _OPS[e.op](_constant_truth(e.a), _constant_truth(e.b))
    raise ScheduleError(f"set_store_predicate: unsupported expression {type(e).__name__}")


def create_schedule(ops) -> Schedule:
    return Schedule(ops)


def lower(sched, args=None, name="main", simple_mode=False):
    """The scheduled module of a TE schedule for the parameters `args` (TVM's `tvm.lower`)."""
    if not isinstance(sched, Schedule):
        from tir_mlir.module import IRModule

        if isinstance(sched, IRModule):
            return sched
        raise TypeError(f"lower expects a te schedule or an IRModule, got {type(sched).__name__}")
    args = list(args) if args is not None else sched.args
    if (
        len(args) == len(sched.args)
        and all(a is b for a, b in zip(args, sched.args))
        and name == "main"
    ):
        return sched.sch.mod
    func, _ = prim_func_and_names(args, name, roots=sched.outputs)
    replay = TIRSchedule(func)
    sched.sch.trace.apply_to_schedule(replay)
    return replay.mod
