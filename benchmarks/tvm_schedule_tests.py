"""Run TVM 0.21's own tir-schedule unit tests with tir_mlir doing the scheduling.

    python benchmarks/tvm_schedule_tests.py DIR|FILE [--show] [-k EXPR]

DIR holds TVM's tests/python/tir-schedule/test_tir_schedule_*.py (from apache/tvm v0.21; not
shipped here). Each file runs twice under pytest: once as written (TVM schedules), once with
`tvm.tir.Schedule` replaced by `AdaptedSchedule`, a thin adapter: TVM builds the program, we
parse its printed text and schedule it, `sch.mod` is TVM's parse of our printed result, so
TVM's own assertions (structural equality, expected refusals) judge us; `sch.get(rv)` and
`sch.get_sref(rv).stmt` are the matching nodes of that parse (one parse per printed text, so
two gets of one block are the same object, as in TVM). Printed: per file,
the tests that pass under TVM and build a schedule, and how many of them pass adapted
(`--show`: each failing one with the first error line of its report).
Needs TVM 0.21 (`pip install -e '.[tvm]'`); a benchmark, not a unit test.
"""

import json
import os
import sys

import tvm_test_harness as harness


# --- the adapter (imported inside the pytest subprocess) ---------------------------------------
def _adapter_classes():
    import tvm
    import tir_mlir
    from tir_mlir.schedule.handles import BlockRV, LoopRV, _RV

    def to_tvm_error(e):
        """TVM's ScheduleError, also an IndexError / ValueError where ours is one (TVM raises
        those for unknown handles and an undecided function, and asserts buffer indices)."""
        extra = tuple(c for c in (IndexError, ValueError, AssertionError) if isinstance(e, c))
        cls = (
            type("ScheduleError", (tvm.tir.ScheduleError,) + extra, {})
            if extra
            else tvm.tir.ScheduleError
        )
        return cls(str(e))

    def ours(v):
        """A TVM argument as tir_mlir takes it (IntImm -> int, a Buffer -> its name, lists
        recursively)."""
        if isinstance(v, tvm.tir.IntImm):
            return int(v.value)
        if isinstance(v, tvm.tir.Buffer):
            return v.name
        if isinstance(v, (list, tuple, tvm.ir.container.Array)):
            return [ours(x) for x in v]
        return v

    parses = {}  # our printed text -> TVM's parse: one object per text, so same_as holds

    def tvm_mod(text: str):
        if text not in parses:
            mod = tvm.script.from_source(text)
            parses[text] = tvm.IRModule({"main": mod}) if isinstance(mod, tvm.tir.PrimFunc) else mod
        return parses[text]

    def tvm_node(sch, op):
        """The tvm.tir.Block / For of TVM's parse of our module standing for our `op`: the
        same position among the blocks (loops) of the function in pre-order."""
        from tir_mlir.dialect.ops import Block
        from tir_mlir.ir.ir_walk import walk_all

        func = op
        while func.name != "func.func":
            func = func.parent
        name = ir_str(func.attributes["sym_name"])
        theirs = tvm_mod(sch.mod.script())
        tfunc = (
            theirs[name]
            if name in [g.name_hint for g in theirs.get_global_vars()]
            else theirs["main"]
        )
        if op == func:
            return tfunc.body.block
        kind = tvm.tir.Block if op.name == Block.OP_NAME else tvm.tir.For
        mine = [o for o in walk_all(func) if o.name == op.name]
        found = []

        def visit(n):
            if isinstance(n, kind):
                found.append(n)
            return True

        tvm.tir.stmt_functor.pre_order_visit(tfunc.body.block.body, visit)
        return found[mine.index(op)] if len(found) == len(mine) else None

    def nodes_of(root, cls):
        """The `cls` nodes (tvm.tir.Block / For) under `root`, in pre-order."""
        found = []

        def visit(n):
            if isinstance(n, cls):
                found.append(n)
            return True

        tvm.tir.stmt_functor.pre_order_visit(root, visit)
        return found

    def our_node(sch, stmt):
        """Our op standing for `stmt`, a tvm.tir.Block / For of TVM's parse of our module (the
        inverse of tvm_node): the same position among the function's blocks (loops)."""
        from tir_mlir.dialect.ops import Block, Loop
        from tir_mlir.ir.ir_walk import walk_all

        theirs = tvm_mod(sch.mod.script())
        for gv in theirs.get_global_vars():
            tfunc, func = theirs[gv], sch.mod.functions.get(gv.name_hint)
            if func is None or not isinstance(tfunc, tvm.tir.PrimFunc):
                continue
            if stmt.same_as(tfunc.body.block):
                return func
            kind = Block.OP_NAME if isinstance(stmt, tvm.tir.Block) else Loop.OP_NAME
            found = nodes_of(tfunc.body.block.body, type(stmt))
            mine = [o for o in walk_all(func) if o.name == kind]
            hit = [k for k, n in enumerate(found) if n.same_as(stmt)]
            if hit and len(found) == len(mine):
                return mine[hit[0]]
        return None

    def ir_str(attr):
        from mlir import ir

        return ir.StringAttr(attr).value

    class SRef:
        """get_sref's answer: `stmt` is TVM's node; identity is our sref's."""

        def __init__(self, ours_sref, stmt):
            self._ours, self.stmt = ours_sref, stmt

        def same_as(self, other):
            return isinstance(other, SRef) and self._ours.same_as(other._ours)

        __eq__ = same_as

        def __hash__(self):
            return hash(self._ours)

    class State:
        def __init__(self, sch):
            self._sch = sch
            self.mod = sch.mod

        def get_sref(self, stmt):
            """The sref of a Block / For of `mod`; None when it is not one of its nodes."""
            from tir_mlir.schedule.views import StmtSRef

            with _context():
                op = our_node(self._sch._s, stmt)
            return None if op is None else SRef(StmtSRef(op), stmt)

    class InstView:
        """TVM's Instruction face over ours: hashable (a key of `decisions`), one per
        instruction object, as TVM's are."""

        _views = {}

        def __new__(cls, inst):
            view = cls._views.get(id(inst))
            if view is None or view._inst is not inst:
                view = cls._views[id(inst)] = super().__new__(cls)
                view._inst = inst
            return view

        def __getattr__(self, name):
            if name.startswith("_"):
                raise AttributeError(name)
            return getattr(self._inst, name)

    class TraceView:
        """TVM's Trace face over ours: `insts`, and `decisions` keyed by instruction (TVM's
        Map<Instruction, ObjectRef>; integer decisions as IntImm, as TVM's)."""

        def __init__(self, trace):
            self._t = trace

        @property
        def insts(self):
            return [InstView(i) for i in self._t.insts]

        @property
        def decisions(self):
            def tvm_value(v):
                if isinstance(v, int):
                    return tvm.tir.IntImm("int64", v)
                return [tvm_value(x) for x in v] if isinstance(v, list) else v

            return {InstView(self._t.insts[k]): tvm_value(v) for k, v in self._t.decisions.items()}

        def __getattr__(self, name):
            if name.startswith("_"):
                raise AttributeError(name)
            return getattr(self._t, name)

        def __str__(self):
            return str(self._t)

        def __len__(self):
            return len(self._t)

    def bridge_intrin(name):
        """A tensor intrinsic registered with TVM only (the tests register theirs, and TVM ships
        x86/ARM/Hexagon/CUDA ones) registers with ours from its printed desc and impl."""
        from tir_mlir.schedule.tensor_intrin import TensorIntrin, _registry

        if not isinstance(name, str) or name in _registry():
            return
        theirs = tvm.tir.TensorIntrin.get(name, allow_missing=True)
        if theirs is None:
            return
        try:
            TensorIntrin.register(name, theirs.desc.script(), theirs.impl.script())
        except (tir_mlir.TIRError, ValueError) as e:
            raise _Unsupported(f"tir_mlir cannot read tensor intrinsic {name}: {e}") from e

    class AdaptedSchedule:
        """tvm.tir.Schedule's face over a tir_mlir.Schedule."""

        def __init__(
            self,
            mod,
            *,
            seed=None,
            debug_mask="none",
            error_render_level="detail",
            enable_check=True,
            _ours=None,
        ):
            _note_schedule_built()
            if _ours is not None:
                self._s = _ours
                return
            if isinstance(mod, tvm.tir.PrimFunc):
                mod = tvm.IRModule({"main": mod})
            try:
                parsed = tir_mlir.parse(mod.script())
            except tir_mlir.TIRError as e:  # (symbolic programs parse as IR too)
                raise _Unsupported(f"tir_mlir cannot parse the program: {e}") from e
            self._s = tir_mlir.Schedule(
                parsed,
                seed=seed,
                debug_mask=debug_mask,
                error_render_level=error_render_level,
                enable_check=enable_check,
            )
            text = self._s.mod.script()
            if text not in parses and tvm.ir.structural_equal(tvm_mod(text), mod):
                parses[text] = mod  # unscheduled, our program is TVM's input, as in TVM

        @property
        def mod(self):
            return tvm_mod(self._s.mod.script())

        @property
        def state(self):
            return State(self)

        @property
        def func_working_on(self):
            """TVM gives the GlobalVar (we give its name)."""
            name = self._s.func_working_on
            return None if name is None else self.mod.get_global_var(name)

        @property
        def trace(self):
            return TraceView(self._s.trace)

        def copy(self):
            return AdaptedSchedule(None, _ours=self._s.copy())

        def get(self, rv):
            """TVM's node for a block or loop handle (see tvm_node) or an sref, the value of an
            ExprRV."""
            if isinstance(rv, SRef):
                return rv.stmt
            if isinstance(rv, _RV) or not hasattr(rv, "__int__"):
                got = self._call("get", rv)
                if isinstance(rv, (BlockRV, LoopRV)):
                    with _context():
                        node = tvm_node(self._s, self._s._resolve(rv))
                    return got if node is None else node
                return got
            return rv

        def get_sref(self, rv):
            sref = self._call("get_sref", rv)
            with _context():
                node = tvm_node(self._s, sref.op)
            return SRef(sref, sref.stmt if node is None else node)

        def _call(self, _primitive, *args, **kwargs):
            fn = getattr(self._s, _primitive)  # not `name`: get_block(name=...) passes one
            if _primitive == "tensorize":
                bridge_intrin(args[1] if len(args) > 1 else kwargs.get("tensor_intrin"))
            try:
                return fn(
                    *[ours(a) for a in args],
                    **{k: v if k == "pad_value" else ours(v) for k, v in kwargs.items()},
                )
            except tir_mlir.ScheduleError as e:
                raise to_tvm_error(e) from e

        def sample_perfect_tile(self, *args, **kwargs):
            """TVM's binding gives None for a factor decided -1 (the free factor of a loop of
            unknown extent); ours gives a value handle holding -1."""
            got = self._call("sample_perfect_tile", *args, **kwargs)
            return [None if self._s.get(v) == -1 else v for v in got]

        def __getattr__(self, name):
            if name.startswith("_"):
                raise AttributeError(name)
            attr = getattr(self._s, name)
            if not callable(attr):
                return attr
            return lambda *a, **k: self._call(name, *a, **k)

    def verify_trace_roundtrip(sch, mod, *, debug_mask="all", text_format=("python", "json")):
        """Our trace replayed on a fresh schedule of `mod` (and through JSON) gives the same
        module."""
        want = sch._s.mod.script()
        for fmt in [text_format] if isinstance(text_format, str) else text_format:
            trace = sch._s.trace
            if fmt == "json":
                trace = tir_mlir.Trace.from_json(json.dumps(trace.as_json()))
            new = AdaptedSchedule(mod, debug_mask=debug_mask)
            trace.apply_to_schedule(new._s)
            got = new._s.mod.script()
            assert got == want, f"trace replay ({fmt}) differs:\n{got}\n--- vs ---\n{want}"
        return new

    def _context():
        from tir_mlir.context import get_context

        return get_context()

    def adapt_analysis():
        """tvm.tir.schedule.analysis's functions given an adapted schedule answer through
        tir_mlir.schedule.analysis (the desc printed and parsed by us; the answers in TVM's
        objects: srefs whose `stmt` is TVM's node, the desc's own For nodes, IndexMaps)."""
        from tir_mlir.schedule import analysis as ours_analysis

        theirs = tvm.tir.schedule.analysis
        originals = {
            n: getattr(theirs, n)
            for n in (
                "has_block",
                "is_output_block",
                "get_tensorize_loop_mapping",
                "get_auto_tensorize_mapping_info",
            )
        }

        class TensorizeInfo:
            def __init__(self, loop_map, desc_loop_indexer, block_iter_paddings):
                self.loop_map, self.desc_loop_indexer = loop_map, desc_loop_indexer
                self.block_iter_paddings = block_iter_paddings

        class AutoTensorizeMappingInfo:
            def __init__(self, mappings):
                self.mappings = mappings

        def via_ours(name, convert):
            def fn(sch, *args, **kwargs):
                if not isinstance(sch, AdaptedSchedule):
                    return originals[name](sch, *args, **kwargs)
                try:
                    return convert(sch, *args, **kwargs)
                except tir_mlir.ScheduleError as e:
                    raise to_tvm_error(e) from e

            return fn

        def loop_mapping(sch, block, desc_func, allow_padding=False):
            info = ours_analysis.get_tensorize_loop_mapping(
                sch._s, block, desc_func.script(), allow_padding
            )
            if info is None:
                return None
            loops = nodes_of(desc_func.body, tvm.tir.For)
            with _context():
                loop_map = {
                    SRef(k, tvm_node(sch._s, k.op)): loops[info.desc_loop_indexer[v]]
                    for k, v in info.loop_map.items()
                }
            return TensorizeInfo(
                loop_map, {lp: k for k, lp in enumerate(loops)}, info.block_iter_paddings
            )

        def auto_mapping(sch, block, desc_func):
            info = ours_analysis.get_auto_tensorize_mapping_info(sch._s, block, desc_func.script())
            if info is None:
                return None
            return AutoTensorizeMappingInfo(
                [tvm.tir.IndexMap.from_func(eval(m)) for m in info.mappings]
            )  # our lambda text

        theirs.has_block = via_ours(
            "has_block", lambda sch, name: ours_analysis.has_block(sch._s, name)
        )
        theirs.is_output_block = via_ours(
            "is_output_block", lambda sch, block: ours_analysis.is_output_block(sch._s, block)
        )
        theirs.get_tensorize_loop_mapping = via_ours("get_tensorize_loop_mapping", loop_mapping)
        theirs.get_auto_tensorize_mapping_info = via_ours(
            "get_auto_tensorize_mapping_info", auto_mapping
        )
        theirs.TensorizeInfo = TensorizeInfo
        theirs.AutoTensorizeMappingInfo = AutoTensorizeMappingInfo

        # tvm.tir.schedule.transform.tile_with_tensor_intrin, given an adapted schedule: ours,
        # with TVM's registered desc (its impl need not be readable by us)
        from tir_mlir.schedule import transform as ours_transform

        tile = tvm.tir.schedule.transform.tile_with_tensor_intrin

        def tile_with_tensor_intrin(sch, block, intrin_name, allow_padding=False):
            if not isinstance(sch, AdaptedSchedule):
                return tile(sch, block, intrin_name, allow_padding)
            desc = tvm.tir.TensorIntrin.get(intrin_name).desc.script()
            try:
                return ours_transform.tile_with_tensor_intrin(sch._s, block, desc, allow_padding)
            except tir_mlir.ScheduleError as e:
                raise to_tvm_error(e) from e

        tvm.tir.schedule.transform.tile_with_tensor_intrin = tile_with_tensor_intrin

    return AdaptedSchedule, verify_trace_roundtrip, adapt_analysis


class _Unsupported(Exception):
    """The program is beyond what tir_mlir parses (counted as a failure)."""


_built = [False]


def _note_schedule_built():
    _built[0] = True


# --- the pytest plugin (loaded with -p in the subprocess) ---------------------------------------
def pytest_configure(config):
    import tvm
    import tvm.testing  # noqa: F401  (TVM's conftest imports it; some test files rely on it)

    if os.environ.get(harness.MODE) == "adapter":
        install_adapter()
    else:
        original = tvm.tir.Schedule.__init__

        def init(self, *args, **kwargs):
            _note_schedule_built()
            original(self, *args, **kwargs)

        tvm.tir.Schedule.__init__ = init


def install_adapter():
    """Replace tvm.tir.Schedule (and TVM's trace round-trip check, and replays of TVM traces on
    it) by the adapter; returns (AdaptedSchedule, verify_trace_roundtrip)."""
    import tvm
    import tvm.tir.schedule.testing as testing

    adapted, roundtrip, adapt_analysis = _adapter_classes()
    adapt_analysis()
    for owner in (tvm.tir, tvm.tir.schedule, tvm.tir.schedule.schedule):
        owner.Schedule = adapted
    testing.verify_trace_roundtrip = roundtrip
    _adapt_traces(adapted)
    return adapted, roundtrip


def _adapt_traces(adapted):
    """A TVM Trace (or its JSON) applied to an adapted schedule replays through ours (the
    JSON form, which tir_mlir.Trace.from_json reads)."""
    import tvm
    import tir_mlir

    cls = tvm.tir.schedule.Trace
    apply_to, apply_json = cls.apply_to_schedule, cls.apply_json_to_schedule

    def plain(v):  # TVM's JSON holds IntImm / FloatImm / String objects
        if isinstance(v, tvm.tir.IntImm):
            return int(v.value)
        if isinstance(v, tvm.tir.FloatImm):
            return float(v.value)
        if isinstance(v, (list, tuple, tvm.ir.container.Array)):
            return [plain(x) for x in v]
        return str(v) if isinstance(v, str) else v

    def replay(obj, sch, remove_postproc=True):
        trace = tir_mlir.Trace.from_json(plain(obj))
        try:
            trace.apply_to_schedule(sch._s, remove_postproc=remove_postproc)
        except tir_mlir.ScheduleError as e:
            raise tvm.tir.ScheduleError(str(e)) from e

    def apply_to_schedule(self, sch, remove_postproc=True, decision_provider=None):
        if not isinstance(sch, adapted) or decision_provider is not None:
            return apply_to(self, sch, remove_postproc, decision_provider)
        replay(self.as_json(remove_postproc), sch, remove_postproc)

    def apply_json_to_schedule(json_obj, sch):
        if not isinstance(sch, adapted):
            return apply_json(json_obj, sch)
        replay(json_obj, sch, False)

    cls.apply_to_schedule = apply_to_schedule
    cls.apply_json_to_schedule = staticmethod(apply_json_to_schedule)


def pytest_runtest_setup(item):
    _built[0] = False


def pytest_runtest_logreport(report):
    harness.record(report, built=_built[0])


# --- the driver ---------------------------------------------------------------------------------
def main(argv) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    show = "--show" in argv
    argv = [a for a in argv if a != "--show"]
    files, extra = harness.files_in(argv[0], ("test_tir_schedule_",)), argv[1:]
    theirs, adapted = (
        harness.run("tvm_schedule_tests", m, files, extra) for m in ("tvm", "adapter")
    )
    # (a test that never builds a schedule tests nothing of ours)
    harness.print_table(files, theirs, adapted, show, lambda r: r["passed"] and r["built"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
