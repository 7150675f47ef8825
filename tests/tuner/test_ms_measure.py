"""Builder and runner: candidates that raise, abort, hang or compute wrong numbers are recorded
with their reason, never chosen, and the rest of the run goes on."""

import os
import time
from pathlib import Path

import numpy as np
import pytest

import tir_mlir
from tir_mlir.meta_schedule.arg_info import ArgInfo, TensorInfo
from tir_mlir.meta_schedule.builder import BuilderInput, LocalBuilder
from tir_mlir.meta_schedule.database import MemoryDatabase, TuningRecord
from tir_mlir.meta_schedule.runner import EvaluatorConfig, LocalRunner, RunnerInput, make_reference
from crash_programs import SEGFAULT

ROOT = Path(__file__).parent.parent.parent
MM_RELU = (ROOT / "examples" / "mm_relu.tir").read_text()
FAULTS = str(Path(__file__).parent.parent / "support" / "ms_helpers")

ENDLESS = """
@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i, j in T.grid(2000000000, 2000000000):
            with T.block("B"):
                vi, vj = T.axis.remap("RR", [i, j])
                B[0] = B[0] + A[0] * T.float32(1.0001)
"""


def _split(mod, factor):
    sch = tir_mlir.Schedule(mod)
    i, j, k = sch.get_loops(sch.get_block("Y"))
    sch.split(j, factors=[None, factor])
    return sch


@pytest.fixture
def faults_on_path(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([FAULTS, os.environ.get("PYTHONPATH", "")]))


def test_arg_info_from_func_and_json():
    mod = tir_mlir.parse(MM_RELU)
    infos = ArgInfo.from_entry_func(mod)
    assert infos == [TensorInfo("float32", (128, 128))] * 3
    assert infos[0].as_json() == ["TENSOR", "float32", [128, 128]]
    assert ArgInfo.from_json(["TENSOR", "int8", [4]]) == TensorInfo("int8", (4,))
    with pytest.raises(ValueError, match="not an argument info"):
        ArgInfo.from_json(["SCALAR", "int32"])


def test_faulty_candidates_are_recorded_and_never_chosen(faults_on_path):
    mod = tir_mlir.parse(MM_RELU)
    good = _split(mod, 4)
    wrong = tir_mlir.parse(MM_RELU.replace("T.max(Y[vi, vj], T.float32(0))", "Y[vi, vj]"))
    renamed = {
        n: tir_mlir.parse(MM_RELU.replace("mm_relu", n)) for n in ("abort_build", "hang_build")
    }
    candidates = {
        "good": BuilderInput(good.mod),
        "wrong": BuilderInput(wrong),
        "raises": BuilderInput(mod, target="cuda"),  # unbound loops: a BuildError
        "aborts": BuilderInput(renamed["abort_build"]),
        "hangs": BuilderInput(renamed["hang_build"]),
    }
    builder = LocalBuilder(max_workers=2, timeout_sec=20, f_build="ms_faults:build_with_faults")
    start = time.monotonic()
    built = dict(zip(candidates, builder.build(list(candidates.values()))))
    assert time.monotonic() - start < 60
    assert built["good"].artifact_path and built["wrong"].artifact_path
    assert built["raises"].error_msg.startswith("BuildError:")
    assert "bind" in built["raises"].error_msg
    assert built["aborts"].error_msg.startswith("BuildCrash:")
    assert "SIGABRT" in built["aborts"].error_msg
    assert built["hangs"].error_msg == "BuildTimeout: timed out after 20 s"

    # measured: the good one, the wrong one, and two whose generated code crashes or never ends
    bad = {"segfault": tir_mlir.parse(SEGFAULT), "endless": tir_mlir.parse(ENDLESS)}
    bad_built = dict(zip(bad, builder.build([BuilderInput(m) for m in bad.values()])))
    reference = make_reference(mod)
    runner = LocalRunner(
        timeout_sec=5, evaluator_config=EvaluatorConfig(number=2, repeat=2, min_repeat_ms=5)
    )
    infos = ArgInfo.from_entry_func(mod)
    inputs = {
        "good": RunnerInput(built["good"].artifact_path, "cpu", infos, reference),
        "wrong": RunnerInput(built["wrong"].artifact_path, "cpu", infos, reference),
    }
    inputs.update(
        {
            k: RunnerInput(b.artifact_path, "cpu", ArgInfo.from_entry_func(bad[k]))
            for k, b in bad_built.items()
        }
    )
    futures = dict(zip(inputs, runner.run(list(inputs.values()))))
    results = {k: f.result() for k, f in futures.items()}
    assert all(f.done() for f in futures.values())
    assert len(results["good"].run_secs) == 2 and results["good"].error_msg is None
    assert results["wrong"].error_msg.startswith("WrongResult: buffer 'C' differs")
    assert results["segfault"].error_msg.startswith("RunCrash:")
    assert "SIGSEGV" in results["segfault"].error_msg
    assert results["endless"].error_msg == "RunTimeout: timed out after 5 s"

    db = MemoryDatabase()
    w = db.commit_workload(mod)
    traces = {"good": good.trace, "wrong": tir_mlir.Schedule(mod).trace}
    for name in candidates:
        res = results.get(name)
        error = built[name].error_msg or (res.error_msg if res else None)
        db.commit_tuning_record(
            TuningRecord(
                traces.get(name, good.trace), w, res.run_secs if res else None, "llvm", infos, error
            )
        )
    assert len(db) == 5
    best = db.get_top_k(w, 5)
    assert [r.error_msg for r in best] == [None]
    assert best[0].run_secs == results["good"].run_secs


def test_runner_checks_every_buffer_against_the_reference(tmp_path):
    mod = tir_mlir.parse(MM_RELU)
    ref = make_reference(mod, str(tmp_path / "ref.npz"), seed=3)
    with np.load(ref) as data:
        a, b, c = data["in0"], data["in1"], data["out2"]
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-5)
    (art,) = LocalBuilder(max_workers=1).build([BuilderInput(_split(mod, 8).mod)])
    (fut,) = LocalRunner().run([RunnerInput(art.artifact_path, "cpu", None, ref)])
    assert fut.result().error_msg is None


@pytest.mark.parametrize("with_reference", [False, True])
def test_a_candidate_slower_than_slow_secs_is_timed_by_its_first_calls(tmp_path, with_reference):
    mod = tir_mlir.parse(MM_RELU)
    ref = make_reference(mod, str(tmp_path / "ref.npz")) if with_reference else None
    (art,) = LocalBuilder(max_workers=1).build([BuilderInput(mod)])
    runner = LocalRunner(evaluator_config=EvaluatorConfig(number=2, repeat=3, min_repeat_ms=0))
    slow, fast = runner.run(
        [
            RunnerInput(art.artifact_path, "cpu", None, ref, slow_secs=1e-9),
            RunnerInput(art.artifact_path, "cpu", None, ref, slow_secs=60.0),
        ]
    )
    slow, fast = slow.result(), fast.result()
    assert slow.error_msg is None and len(slow.run_secs) == 1 and slow.run_secs[0] > 0
    assert fast.error_msg is None and len(fast.run_secs) == 3


def test_runner_rejects_mismatched_args_info_and_missing_artifacts():
    mod = tir_mlir.parse(MM_RELU)
    (art,) = LocalBuilder(max_workers=1).build([BuilderInput(mod)])
    runner = LocalRunner(evaluator_config=EvaluatorConfig(number=1, min_repeat_ms=0))
    wrong_info = [TensorInfo("float32", (64, 64))] * 3
    f1, f2 = runner.run(
        [
            RunnerInput(art.artifact_path, "cpu", wrong_info),
            RunnerInput(str(Path(art.artifact_path).with_name("none.so"))),
        ]
    )
    assert f1.result().error_msg.startswith(
        "RunError: RuntimeCallError: mm_relu: the artifact takes"
    )
    assert "no such library" in f2.result().error_msg


def test_cache_flush_and_thread_count_reach_the_worker(monkeypatch):
    monkeypatch.setenv("TVM_NUM_THREADS", "1")
    mod = tir_mlir.parse(MM_RELU)
    (art,) = LocalBuilder(max_workers=1).build([BuilderInput(mod)])
    config = EvaluatorConfig(number=1, repeat=3, min_repeat_ms=0, enable_cpu_cache_flush=True)
    runner = LocalRunner(evaluator_config=config, cooldown_sec=0.01, affinity=[0])
    assert runner._pool.env == {"OMP_NUM_THREADS": "1"}
    (fut,) = runner.run([RunnerInput(art.artifact_path)])
    res = fut.result()
    assert res.error_msg is None and len(res.run_secs) == 3 and min(res.run_secs) > 0


def test_measurement_starts_while_later_candidates_still_compile(faults_on_path):
    from tir_mlir.meta_schedule.measure_pipeline import build_and_run

    mod = tir_mlir.parse(MM_RELU)
    slow = tir_mlir.parse(MM_RELU.replace("mm_relu", "slow_build"))
    builder = LocalBuilder(max_workers=2, f_build="ms_faults:build_with_faults")
    builder.build([BuilderInput(mod)] * 2)  # both workers started

    class Runner(LocalRunner):
        calls = []

        def run(self, inputs):
            self.calls.append(time.monotonic())
            return super().run(inputs)

    runner = Runner(evaluator_config=EvaluatorConfig(number=1, min_repeat_ms=0))
    start = time.monotonic()
    results = build_and_run(
        builder,
        runner,
        [BuilderInput(mod), BuilderInput(slow)],
        lambda k, path: RunnerInput(path),
        overlap=True,
    )
    assert all(r.error_msg is None for r in results)
    assert Runner.calls[1] - start >= 8  # after the slow compile ...
    assert Runner.calls[0] < Runner.calls[1] - 1  # ... the first was already being measured


def test_without_overlap_each_runner_input_is_made_after_the_results_before_it():
    """(The tuner's slow cut-off uses this round's results: a slow random candidate early in
    a round no longer costs its full repeats.)"""
    from tir_mlir.meta_schedule.measure_pipeline import build_and_run

    mod = tir_mlir.parse(MM_RELU)
    events = []

    def runner_input(k, path):
        events.append(("input", k))
        return RunnerInput(path, slow_secs=1e-9 if k else None)

    runner = LocalRunner(evaluator_config=EvaluatorConfig(number=1, repeat=3, min_repeat_ms=0))
    results = build_and_run(
        LocalBuilder(max_workers=1),
        runner,
        [BuilderInput(mod)] * 3,
        runner_input,
        overlap=False,
        on_result=lambda k, r: events.append(("result", k)),
    )
    assert events == [
        ("input", 0),
        ("result", 0),
        ("input", 1),
        ("result", 1),
        ("input", 2),
        ("result", 2),
    ]
    assert [len(r.run_secs) for r in results] == [3, 1, 1]


def test_builds_overlap_measurement_only_on_cpus_the_builder_leaves_free():
    from tir_mlir.meta_schedule.measure_pipeline import can_overlap

    builder = LocalBuilder(max_workers=1)
    cpus = os.cpu_count()
    assert not can_overlap(builder, LocalRunner())  # shares every CPU
    assert can_overlap(builder, LocalRunner(affinity=list(range(cpus - 1)))) == (cpus >= 2)
    assert not can_overlap(builder, LocalRunner(affinity=list(range(cpus))))
    assert can_overlap(builder, object())  # a runner measuring elsewhere
