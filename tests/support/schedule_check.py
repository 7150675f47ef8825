"""Checks every schedule test runs: numerics against the unscheduled program, trace replay
(Python and JSON), TVM differential (when tvm is installed), module unchanged on error."""

import json

import numpy as np
import pytest

import tir_mlir
from tir_mlir import ScheduleError, Schedule, Trace
from tir_mlir.printer.equality import structural_equal
import tvm_oracle

RNG = np.random.default_rng(0)


def parse(text: str):
    return tir_mlir.parse(text)


def random_args(mod, func):
    from tir_mlir.runtime.signature import signatures
    from tir_mlir.context import get_context

    with get_context():
        params = signatures(mod.module)[func]
    out = []
    for p in params:
        shape, dtype = tuple(p.shape), np.dtype(p.dtype)
        out.append(
            RNG.standard_normal(shape).astype(dtype)
            if dtype.kind == "f"
            else RNG.integers(-4, 4, shape).astype(dtype)
        )
    return out


def debug_build(mod):
    """`tir_mlir.build(mod, debug=True)`, not cached across calls. (An LRU of 64 built modules
    once made the schedule quick lane segfault in tir-to-affine: the stage read ops it had
    erased, and the cache changed how their freed memory was reused.
    tests/lowering/test_lowering_op_lifetimes.py now checks that no stage reads an erased op.)"""
    return tir_mlir.build(mod, debug=True)


def run(mod, func, args):
    """Run the JIT-compiled function, bounds-checked (a wrong schedule must fail, not corrupt
    memory and abort the test process)."""
    args = [a.copy() for a in args]
    debug_build(mod)[func](*args)
    return args


def interp(mod, func, args):
    from tir_mlir.interpreter import interpret

    args = [a.copy() for a in args]
    interpret(mod, func, *args)
    return args


def check_numerics(before, after, func, runner=run):
    """The scheduled program computes what the unscheduled one does (runner: run = JIT,
    interp = reference interpreter, for GPU-only loop kinds)."""
    args = random_args(before, func)
    for x, y in zip(run(before, func, args), runner(after, func, args)):
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-4)


def check_replay(sch: Schedule, original):
    """Replaying the trace (directly and through JSON) gives the same program."""
    text = sch.mod.script()
    for trace in (sch.trace, Trace.from_json(json.loads(json.dumps(sch.trace.as_json())))):
        fresh = Schedule(original)
        trace.apply_to_schedule(fresh, remove_postproc=False)
        assert fresh.mod.script() == text
        assert structural_equal(fresh.mod, sch.mod)
        assert str(fresh.trace) == str(sch.trace)


def check_tvm(src: str, sch: Schedule, schedule_fn):
    """TVM runs the same schedule: our printed result must parse in TVM to the same module.
    An extra oracle: without TVM it returns, and the caller's own assertions still count."""
    try:
        import tvm
    except ImportError:
        return
    from tvm.script import tir as T  # noqa: F401  (from_source resolves `T` itself)

    theirs = tvm.tir.Schedule(tvm.script.from_source(src))
    schedule_fn(theirs)
    ours = tvm.script.from_source(sch.mod.script())
    a = ours[list(ours.functions.keys())[0].name_hint] if hasattr(ours, "functions") else ours
    b = theirs.mod[list(theirs.mod.functions.keys())[0].name_hint]
    a = a.without_attr("global_symbol") if hasattr(a, "without_attr") else a
    b = b.without_attr("global_symbol") if hasattr(b, "without_attr") else b
    tvm.ir.assert_structural_equal(a.body, b.body, map_free_vars=True)


def check_all(src: str, schedule_fn, func: str, tvm_diff: bool = True, runner=run) -> Schedule:
    mod = parse(src)
    sch = Schedule(mod)
    schedule_fn(sch)
    check_numerics(mod, sch.mod, func, runner)
    check_replay(sch, mod)
    if tvm_diff:
        check_tvm(src, sch, schedule_fn)
    return sch


def check_all_regions_reinferred(src: str, schedule_fn, func: str) -> Schedule:
    """schedule_check.check_all, with the TVM differential run on our text without
    T.reads/T.writes (TVM re-infers them; our printer orders some sums differently). An
    extra oracle: without TVM it is left out, and the caller's own assertions still count."""
    sch = check_all(src, schedule_fn, func, tvm_diff=False)
    if not tvm_oracle.installed():
        return sch
    import tvm

    theirs = tvm.tir.Schedule(tvm.script.from_source(src))
    schedule_fn(theirs)
    ours = tvm.script.from_source(without_regions(sch.mod.script()))
    ours = ours[ours.get_global_vars()[0]] if hasattr(ours, "get_global_vars") else ours
    b = theirs.mod[theirs.mod.get_global_vars()[0]]
    tvm.ir.assert_structural_equal(ours.body, b.body, map_free_vars=True)
    return sch


def without_regions(text: str) -> str:
    """Printed text without its T.reads/T.writes lines."""
    return "\n".join(l for l in text.splitlines() if "T.reads" not in l and "T.writes" not in l)


def check_error(sch: Schedule, fn, match: str):
    """`fn(sch)` raises ScheduleError matching `match` and leaves the module as it was."""
    before_text, before_mlir = sch.mod.script(), sch.mod.mlir()
    n = len(sch.trace)
    with pytest.raises(ScheduleError, match=match):
        fn(sch)
    assert sch.mod.script() == before_text
    assert sch.mod.mlir() == before_mlir
    assert len(sch.trace) == n
