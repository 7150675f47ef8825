"""Run TVM 0.21's meta-schedule unit tests with tir_mlir.meta_schedule doing the work.

    python benchmarks/tvm_ms_tests.py DIR|FILE [--show] [--tvm-cache F.json] [-k EXPR]

DIR holds TVM's tests/python/meta_schedule/ (from apache/tvm v0.21; not shipped here); the
files run are test_meta_schedule_schedule_rule_*, *space_generator*, *postproc_*, *mutator_*
and *database*. Each file runs twice under pytest: once as written (TVM tunes), once with
`tvm.meta_schedule`'s pieces replaced by ours (benchmarks/tvm_schedule_tests.py's adapter
does the same for `tvm.tir.Schedule`, which is replaced too). TVM builds the program; our
rule / postprocessor / mutator / database runs on its printed text; what the test reads back
is TVM's parse of our printed result (`sch.mod`, `workload.mod`), so TVM's own assertions
judge it. `check_sketches` keeps TVM's algorithm (match a sketch by its sampling kinds, set
the expected decisions, replay, compare with structural equality, replay through JSON) over
our sketches and our traces.

The replacement is a thin proxy layer: `ms.X.Y(...)` builds our class of the same name (TVM
objects in the arguments converted: a module to our parse of its text, a Target to its string,
an adapted schedule to ours); what our objects return is converted back (a Schedule to an
adapted schedule, a module to TVM's parse, a trace to a view with TVM's `insts[i].kind.name`
and `decisions[inst]`). A test's subclass of a `Py*` class is bridged: our code calls its
overridden methods. Printed: per file, the tests that pass under TVM and how many of them
pass adapted (`--show`: each failing one with the first error line of its report;
`--tvm-cache F.json` keeps TVM's results in F.json and reuses them on the next run).
Needs TVM 0.21 (`pip install -e '.[tvm]'`); a benchmark, not a unit test.
"""

import json
import os
import sys

import tvm_schedule_tests as sched_adapter
import tvm_test_harness as harness

_PATTERNS = (
    "test_meta_schedule_schedule_rule_",
    "test_meta_schedule_space_generator",
    "test_meta_schedule_postproc_",
    "test_meta_schedule_mutator_",
    "test_meta_schedule_database",
)

# TVM's ms namespaces and the names in them that are ours (the rest stay TVM's).
_NAMESPACES = {
    "schedule_rule": "tir_mlir.meta_schedule.schedule_rule",
    "postproc": "tir_mlir.meta_schedule.postproc",
    "mutator": "tir_mlir.meta_schedule.mutator",
    "space_generator": "tir_mlir.meta_schedule.space_generator",
    "database": "tir_mlir.meta_schedule.database",
    "arg_info": "tir_mlir.meta_schedule.arg_info",
}


# --- the meta-schedule proxies (built inside the pytest subprocess) ----------------------------
def _traced_schedule(base, trace_view):
    """The schedule adapter whose `trace` has TVM's face (TraceView)."""

    class AdaptedSchedule(base):
        @property
        def trace(self):
            return trace_view(self._s.trace)

        def copy(self):
            return AdaptedSchedule(None, _ours=self._s.copy())

    return AdaptedSchedule


def _ms_adapter(Base, tvm_mod):
    import importlib
    import types

    import tvm
    import tir_mlir
    from tir_mlir.module import IRModule as OurModule
    from tir_mlir.schedule.schedule import Schedule as OurSchedule
    from tir_mlir.schedule.trace import Instruction, Trace as OurTrace
    from tir_mlir.schedule.tvm_trace import _KINDS

    kind_of = {method: kind for kind, (method, _, _) in _KINDS.items()}
    inputs_of = {method: ins for _, (method, ins, _) in _KINDS.items()}
    parsed = {}

    def our_module(mod):
        if isinstance(mod, tvm.tir.PrimFunc):
            mod = tvm.IRModule({"main": mod})
        text = mod.script()
        if text not in parsed:
            try:
                parsed[text] = tir_mlir.parse(text)
            except tir_mlir.TIRError as e:
                raise sched_adapter._Unsupported(f"tir_mlir cannot parse the program: {e}") from e
        return parsed[text]

    class Kind:
        def __init__(self, name):
            self.name = name

    class InstView:
        """TVM's Instruction face over ours: `kind.name` is TVM's kind (SamplePerfectTile)."""

        def __init__(self, inst):
            self._inst = inst
            self.kind = Kind(kind_of.get(inst.name, inst.name))
            self.outputs = inst.output_list()
            self.attrs = [v for k, v in inst.args.items() if k != "decision"]
            # TVM's inputs: the arguments its instruction kind takes as inputs, in its order
            names = inputs_of.get(inst.name, ())
            self.inputs = [inst.args.get(n.lstrip("*")) for n in names]

        def __eq__(self, other):
            return isinstance(other, InstView) and other._inst is self._inst

        def __hash__(self):
            return id(self._inst)

    class TraceView:
        """TVM's Trace face over ours (insts, decisions keyed by instruction, str, JSON)."""

        def __init__(self, trace):
            self._t = trace
            self.insts = [InstView(i) for i in trace.insts]

        @property
        def decisions(self):
            return {
                v: self._t.insts[k].args["decision"]
                for k, v in enumerate(self.insts)
                if k in self._t.decisions
            }

        def get_decision(self, inst):
            return self._t.get_decision(inst._inst)

        def simplified(self, remove_postproc):
            return TraceView(self._t.simplified(remove_postproc))

        def with_decision(self, inst, decision, remove_postproc):
            return TraceView(self._t.with_decision(inst._inst, decision, remove_postproc))

        def apply_to_schedule(self, sch, remove_postproc, decision_provider=None):
            self._t.apply_to_schedule(to_ours(sch), remove_postproc=remove_postproc)

        def as_json(self, remove_postproc=False):
            t = self._t.without_postproc() if remove_postproc else self._t
            return t.as_json()

        def __str__(self):
            return str(self._t)

        def __len__(self):
            return len(self._t)

    AdaptedSchedule = _traced_schedule(Base, TraceView)
    shims = {}  # our class -> its proxy class

    def to_ours(v):
        if isinstance(v, Proxy):
            return object.__getattribute__(v, "_obj")
        if isinstance(v, Base):
            return v._s
        if isinstance(v, TraceView):
            return v._t
        if isinstance(v, InstView):
            return v._inst
        if isinstance(v, (tvm.IRModule, tvm.tir.PrimFunc)):
            return our_module(v)
        if isinstance(v, tvm.target.Target):
            return str(v)
        if isinstance(v, tvm.tir.IntImm):
            return int(v.value)
        if isinstance(v, tvm.tir.FloatImm):
            return float(v.value)
        if isinstance(v, (list, tuple, tvm.ir.container.Array)):
            return (
                type(v)(to_ours(x) for x in v)
                if isinstance(v, (list, tuple))
                else [to_ours(x) for x in v]
            )
        if isinstance(v, (dict, tvm.ir.container.Map)):
            return {to_ours(k): to_ours(x) for k, x in v.items()}
        if isinstance(v, (types.FunctionType, types.MethodType)) and not getattr(
            v, "__module__", ""
        ).startswith("tir_mlir"):
            fn = v  # a test's function: give it TVM's objects
            return lambda *a, **k: to_ours(fn(*to_tvm(a), **to_tvm(k)))
        return v

    def to_tvm(v):
        if isinstance(v, OurSchedule):
            return AdaptedSchedule(None, _ours=v)
        if isinstance(v, OurTrace):
            return TraceView(v)
        if isinstance(v, Instruction):
            return InstView(v)
        if isinstance(v, OurModule):
            return tvm_mod(v.script())
        if isinstance(v, Bridged):
            return v._user
        if isinstance(v, (list, tuple)):
            return type(v)(to_tvm(x) for x in v)
        if isinstance(v, dict):
            return {to_tvm(k): to_tvm(x) for k, x in v.items()}
        if type(v).__module__.startswith("tir_mlir.meta_schedule") and not isinstance(v, type):
            return proxy_of(v)
        return v

    def call(fn, a, k):
        try:
            return to_tvm(fn(*to_ours(a), **to_ours(k)))
        except tir_mlir.ScheduleError as e:
            raise tvm.tir.ScheduleError(str(e)) from e
        except NotImplementedError as e:  # TVM: a Py* method left to the subclass
            raise tvm.base.TVMError(str(e)) from e

    def proxy_of(obj):
        for c in type(obj).__mro__:
            if c in shims:
                p = object.__new__(shims[c])
                object.__setattr__(p, "_obj", obj)
                return p
        p = object.__new__(Proxy)
        object.__setattr__(p, "_obj", obj)
        return p

    class Bridged:
        """Marks our-side objects standing for a test's subclass of a Py* class."""

    class ProxyMeta(type):
        """Class attributes (static methods: ArgInfo.from_prim_func, Database.current) are
        our class's, converted like methods."""

        def __getattr__(cls, name):
            if name.startswith("__") or cls.__dict__.get("_cls") is None and name == "_cls":
                raise AttributeError(name)
            v = getattr(type.__getattribute__(cls, "_cls"), name)
            if callable(v) and not isinstance(v, type):
                return lambda *a, **k: call(v, a, k)
            return to_tvm(v)

    class Proxy(metaclass=ProxyMeta):
        _cls = None

        def __init__(self, *a, **k):
            cls = object.__getattribute__(self, "_cls")
            if type(self) is not shims.get(cls):  # a test's subclass: bridge it
                cls = bridge_class(type(self), cls)
                obj = cls.__new__(cls)
                obj._user = self
                try:
                    cls.__init__(obj, *to_ours(a), **to_ours(k))
                except TypeError:
                    cls.__init__(obj)
            else:
                obj = cls(*to_ours(a), **to_ours(k))
            object.__setattr__(self, "_obj", obj)

        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            v = getattr(object.__getattribute__(self, "_obj"), name)
            if callable(v) and not isinstance(v, type):
                return lambda *a, **k: call(v, a, k)
            if name == "run_secs" and v is not None:  # TVM gives FloatImms
                return [tvm.tir.FloatImm("float64", x) for x in v]
            return to_tvm(v)

        def __setattr__(self, name, value):
            if type(self) is not shims.get(object.__getattribute__(self, "_cls")):
                object.__setattr__(self, name, value)  # a test's own state
            else:
                setattr(object.__getattribute__(self, "_obj"), name, to_ours(value))

        def __repr__(self):
            return repr(object.__getattribute__(self, "_obj"))

        def __len__(self):
            return len(object.__getattribute__(self, "_obj"))

        def __enter__(self):
            object.__getattribute__(self, "_obj").__enter__()
            return self

        def __exit__(self, *exc):
            return object.__getattribute__(self, "_obj").__exit__(*exc)

    bridges = {}

    def bridge_class(user_cls, base):
        """Our-side subclass of `base` whose methods the test's class overrides call the
        test's methods (TVM's objects in, ours out)."""
        if user_cls in bridges:
            return bridges[user_cls]
        methods = {}
        for klass in user_cls.__mro__:
            if klass in shims.values() or klass is Proxy or klass is object:
                break
            for name, fn in vars(klass).items():
                if callable(fn) and name not in methods and name != "__init__":
                    methods[name] = name

        def forward(name):
            def m(self, *a, **k):
                return to_ours(getattr(self._user, name)(*to_tvm(a), **to_tvm(k)))

            return m

        ns = {n: forward(n) for n in methods}
        ns["_user"] = None
        bridges[user_cls] = type(f"Bridged{user_cls.__name__}", (base, Bridged), ns)
        return bridges[user_cls]

    def shim(cls):
        if cls not in shims:
            shims[cls] = type(cls.__name__, (Proxy,), {"_cls": cls})
        return shims[cls]

    def missing(name):
        class Missing:
            def __init__(self, *a, **k):
                raise NotImplementedError(f"tir_mlir.meta_schedule has no {name}")

        Missing.__name__ = name
        return Missing

    def namespace(module_name, tvm_name):
        """TVM's submodule with its public classes and functions replaced by ours (a class
        we lack by one that refuses to be built)."""
        mod = importlib.import_module(module_name)
        ns = importlib.import_module(f"tvm.meta_schedule.{tvm_name}")
        for name in dir(ns):
            if (
                not name.startswith("_")
                and isinstance(getattr(ns, name), type)
                and not hasattr(mod, name)
            ):
                setattr(ns, name, missing(name))
        for name in dir(mod):
            v = getattr(mod, name)
            if name.startswith("_"):
                continue
            if isinstance(v, type) and v.__module__.startswith("tir_mlir.meta_schedule"):
                setattr(ns, name, shim(v))
            elif callable(v):
                setattr(ns, name, lambda *a, _f=v, **k: call(_f, a, k))
        return ns

    for module_name in _NAMESPACES.values():
        for cls_name, v in vars(importlib.import_module(module_name)).items():
            if isinstance(v, type) and v.__module__.startswith("tir_mlir.meta_schedule"):
                shim(v)
    spaces = {k: namespace(m, k) for k, m in _NAMESPACES.items()}
    rules = spaces["schedule_rule"]
    rules.ReuseType = rules.ReuseConfig  # TVM's name
    return spaces, shim, AdaptedSchedule, our_module, OurSchedule, kind_of, call, to_ours


def _install(AdaptedSchedule, tvm_mod, verify_roundtrip):
    """Replace tvm.meta_schedule's pieces (and the space-generation test helpers) by ours."""
    import tvm
    import tvm.meta_schedule as tms
    import tvm.meta_schedule.testing.space_generation as spacegen
    import tir_mlir
    from tir_mlir.meta_schedule.tune_context import TuneContext
    from tir_mlir.schedule.trace import SAMPLING_INSTRUCTIONS, Trace

    from tir_mlir.meta_schedule.tune import tune_tir as ours_tune_tir

    spaces, shim, AdaptedSchedule, our_module, OurSchedule, kind_of, call, to_ours = _ms_adapter(
        AdaptedSchedule, tvm_mod
    )
    for owner in (tvm.tir, tvm.tir.schedule, tvm.tir.schedule.schedule):
        owner.Schedule = AdaptedSchedule
    for name, ns in spaces.items():
        setattr(tms, name, ns)
    tms.TuneContext = shim(TuneContext)
    tms.ScheduleRule = spaces["schedule_rule"].ScheduleRule
    tms.Mutator = spaces["mutator"].Mutator
    tms.Postproc = spaces["postproc"].Postproc
    tms.derived_object = tms.utils.derived_object = lambda cls: cls
    tms.ScheduleRule.create = staticmethod(lambda kind: spaces["schedule_rule"].create(kind))
    tms.tune_tir = lambda *a, **k: call(ours_tune_tir, a, k)

    register = tvm.register_func

    def register_func(func_name, f=None, override=False):
        """TVM's registry; a `meta_schedule.*` function (a custom rule) is ours too."""

        def reg(fn):
            if isinstance(func_name, str) and func_name.startswith("meta_schedule."):
                tir_mlir.register_func(func_name, to_ours(fn), override=True)
            return register(func_name, fn, override)

        return reg if f is None else reg(f)

    tvm.register_func = register_func

    def names(types):
        types = types if isinstance(types, tuple) else (types,)
        return {t.__name__ for t in types}

    def get_rules(kind, types):
        return [r for r in spaces["schedule_rule"].create(kind) if type(r).__name__ in names(types)]

    def generate_design_space(kind, mod, target, types, sch_rules=None):
        if sch_rules is None:
            sch_rules = get_rules(kind, types)
        return tms.TuneContext(
            mod=mod,
            target=target,
            space_generator=spaces["space_generator"].PostOrderApply(
                sch_rules=sch_rules, postprocs=[], mutator_probs={}
            ),
            task_name="test",
        ).generate_design_space()

    def find_match(mod, sketches, expected_mod, expected_decision, debug_mask="all"):
        for sketch_id, sketch in enumerate(sketches):
            trace = sketch._s.trace
            i, insts = 0, list(trace.insts)
            for k, inst in enumerate(insts):
                if inst.name not in SAMPLING_INSTRUCTIONS:
                    continue
                assert i < len(expected_decision)
                if kind_of[inst.name] == expected_decision[i][0]:
                    d = expected_decision[i][1]
                    d = [int(x) for x in d] if isinstance(d, (list, tuple)) else int(d)
                    insts[k] = type(inst)(inst.name, {**inst.args, "decision": d}, inst.outputs)
                    i += 1
            if i != len(expected_decision):
                continue
            sch = OurSchedule(our_module(mod), debug_mask=debug_mask)
            try:
                Trace(insts).apply_to_schedule(sch, remove_postproc=True)
            except tir_mlir.ScheduleError:
                continue
            got = tvm_mod(sch.mod.script())
            if os.environ.get("TIR_MLIR_MS_DEBUG"):  # what a mismatch looks like
                print(
                    f"--- sketch {sketch_id} replayed ---\n{got.script()}\n--- expected "
                    f"---\n{expected_mod.script()}"
                )
                try:
                    tvm.ir.assert_structural_equal(got, expected_mod)
                except ValueError as e:
                    print(str(e)[:3000])
            if spacegen.structural_equal_no_gs(got, expected_mod):
                verify_roundtrip(
                    AdaptedSchedule(None, _ours=sch), mod, debug_mask=debug_mask, text_format="json"
                )
                return sketch_id
        return None

    def check_sketches(mod, sketches, expected_mods, expected_decisions, *, debug_mask="all"):
        assert len(expected_mods) == len(expected_decisions)
        assert len(sketches) == len(expected_mods)
        expected_mods = [
            tvm.IRModule({"main": m}) if not isinstance(m, tvm.IRModule) else m
            for m in expected_mods
        ]
        sketches = list(sketches)
        for expected_id, (expected_mod, expected_decision) in enumerate(
            zip(expected_mods, expected_decisions)
        ):
            sketch_id = find_match(
                mod, sketches, expected_mod, expected_decision, debug_mask=debug_mask
            )
            if sketch_id is None:
                raise AssertionError(
                    f"Expected sketch #{expected_id} doesn't exist in the generated sketches."
                )
            sketches.pop(sketch_id)

    spacegen.get_rules = get_rules
    spacegen.generate_design_space = generate_design_space
    spacegen.check_sketches = check_sketches


# --- the pytest plugin (loaded with -p in the subprocess) ---------------------------------------
def pytest_configure(config):
    import tvm
    import tvm.testing  # noqa: F401

    if os.environ.get(harness.MODE) == "adapter":
        adapted, roundtrip = sched_adapter.install_adapter()

        def tvm_parse(text):
            mod = tvm.script.from_source(text)
            return tvm.IRModule({"main": mod}) if isinstance(mod, tvm.tir.PrimFunc) else mod

        _install(adapted, _memo(tvm_parse), roundtrip)


def _memo(fn):
    cache = {}

    def get(text):
        if text not in cache:
            cache[text] = fn(text)
        return cache[text]

    return get


def pytest_runtest_logreport(report):
    harness.record(report)


# --- the driver ---------------------------------------------------------------------------------
def _run(mode: str, files, extra) -> dict:
    return harness.run("tvm_ms_tests", mode, files, extra, ["--continue-on-collection-errors"])


def main(argv) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    show = "--show" in argv
    argv = [a for a in argv if a != "--show"]
    cache = None
    if "--tvm-cache" in argv:
        k = argv.index("--tvm-cache")
        cache, argv = argv[k + 1], argv[:k] + argv[k + 2 :]
    files, extra = harness.files_in(argv[0], _PATTERNS), argv[1:]
    if cache and os.path.exists(cache):
        with open(cache) as f:
            theirs = json.load(f)
    else:
        theirs = _run("tvm", files, extra)
        if cache:
            with open(cache, "w") as f:
                json.dump(theirs, f)
    harness.print_table(files, theirs, _run("adapter", files, extra), show)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
