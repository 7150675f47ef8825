"""Tuning a symbolic function over sizes: one schedule of the symbolic program (its tiles
from sample_categorical over constants, guarded where they do not divide), measured at every
size, cost = the weighted geometric mean of the times; the best schedule applies to the
symbolic program and its one kernel gives numpy's numbers at any size."""

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import tir_mlir
from tir_mlir import meta_schedule as ms
from tir_mlir.cli import main
from tir_mlir.errors import TIRError
from tir_mlir.meta_schedule.runner.runner import RunnerResult
from tir_mlir.meta_schedule.sizes import (
    SizesRunner,
    feature_size,
    geometric_mean,
    parse_sizes,
    parse_weights,
)

from symbolic_programs import SOURCES, program


def test_parse_sizes_and_weights():
    assert parse_sizes(["n=128,1024"]) == [{"n": 128}, {"n": 1024}]
    assert parse_sizes(["n=8,16 m=4"]) == [{"n": 8, "m": 4}, {"n": 16, "m": 4}]
    with pytest.raises(TIRError, match="expected NAME=V1,V2"):
        parse_sizes(["128"])
    with pytest.raises(TIRError, match="m has 2 values, the others 3"):
        parse_sizes(["n=1,2,3", "m=1,2"])
    assert parse_weights("1,2", 2) == [1.0, 2.0]
    with pytest.raises(TIRError, match="one positive number per size"):
        parse_weights("1,0", 2)
    assert feature_size([{"n": 16}, {"n": 64}]) == {"n": 32}


class _Fixed:
    """A runner whose k-th measurement takes times[k] (or fails when None)."""

    def __init__(self, times):
        self.times, self.calls = list(times), []

    def run(self, inputs):
        out = []
        for inp in inputs:
            self.calls.append(inp.reference)
            t = self.times[len(self.calls) - 1]
            result = RunnerResult(None, "RunError: boom") if t is None else RunnerResult(t)
            out.append(
                type("F", (), {"result": lambda self, r=result: r, "done": lambda self: True})()
            )
        return out


def test_cost_is_the_weighted_geometric_mean_and_a_failure_names_its_size():
    from tir_mlir.meta_schedule.runner import RunnerInput

    inner = _Fixed([[1e-3, 3e-3], [8e-3], [1e-3], None])
    runner = SizesRunner(inner, [{"n": 8}, {"n": 64}], ["r8.npz", "r64.npz"], [1, 2])
    (fut,) = runner.run([RunnerInput("a.so")])
    assert inner.calls == ["r8.npz", "r64.npz"]
    assert fut.result().run_secs == [
        pytest.approx(math.exp((math.log(2e-3) + 2 * math.log(8e-3)) / 3))
    ]
    (fut,) = runner.run([RunnerInput("b.so")])
    assert fut.result().error_msg == "RunError: boom (at n = 64)"
    assert geometric_mean([1, 4], [1, 1]) == pytest.approx(2)


def test_a_symbolic_function_tunes_over_sizes(tmp_path):
    mod = program("matmul")
    db = ms.tune_tir(
        mod,
        "llvm",
        str(tmp_path),
        max_trials_global=4,
        num_trials_per_iter=4,
        sizes=[{"n": 5}, {"n": 37}],
        seed=0,
        cost_model="random",
    )
    records = db.get_all_tuning_records()
    assert len(records) == 4 and all(r.is_valid for r in records)
    assert sorted(p.name for p in tmp_path.glob("reference_*.npz")) == [
        "reference_n37.npz",
        "reference_n5.npz",
    ]
    # the first round also measured the unscheduled program; of the scheduled ones, the tiles
    # of the symbolic loop are sampled constants: one kernel runs at any size
    scheduled = [r for r in records if "sample_categorical" in str(r.trace)]
    assert len(scheduled) == 3
    best = min(scheduled, key=lambda r: r.mean_sec)
    sch = tir_mlir.Schedule(mod)
    best.trace.apply_to_schedule(sch, remove_postproc=False)
    assert "n = T.int32()" in sch.mod.script()
    lib = tir_mlir.build(sch.mod)
    rng = np.random.default_rng(1)
    for n in (1, 13, 100):
        a, b = rng.random((n, 64), dtype="float32"), rng.random((64, 64), dtype="float32")
        c = np.zeros((n, 64), "float32")
        lib["matmul"](a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def test_sizes_are_checked(tmp_path):
    with pytest.raises(
        TIRError,
        match=r"each size gives n \(the sizes and integer parameters "
        r"of matmul\), got m",
    ):
        ms.tune_tir(program("matmul"), "llvm", str(tmp_path), max_trials_global=1, sizes=[{"m": 5}])


def test_cli_tunes_at_sizes_and_the_schedule_applies(tmp_path):
    src = tmp_path / "mm.tir"
    src.write_text(SOURCES["matmul"])
    work = tmp_path / "work"
    result = CliRunner().invoke(
        main,
        [
            "tune",
            str(src),
            "--sizes",
            "n=5,37",
            "--weights",
            "1,3",
            "--trials",
            "2",
            "--trials-per-iter",
            "2",
            "--work-dir",
            str(work),
            "--seed",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "best:" in result.output
    applied = CliRunner().invoke(
        main, ["schedule", str(src), "--transform", str(work / "best_schedule.py")]
    )
    assert applied.exit_code == 0, applied.output
    assert "n = T.int32()" in applied.output
    # the symbolic loop split into sampled constant tiles (unless the unscheduled program,
    # measured in the first round too, was the fastest)
    splits = "sch.split(" in (work / "best_schedule.py").read_text()
    assert splits == ("T.where(" in applied.output)


WORKLOAD = sorted((Path(__file__).parent.parent / "data" / "symbolic").glob("*.tir"))


@pytest.mark.parametrize("path", WORKLOAD, ids=lambda p: p.stem)
def test_every_symbolic_workload_has_a_design_space_that_replays(path):
    """The CPU rules and postprocessors on each shared symbolic program: a space, and
    candidates of it that replay with the postprocessors (what the search measures)."""
    from tir_mlir.meta_schedule.search_strategy.replay_jobs import replay
    from tir_mlir.meta_schedule.tune_context import TuneContext

    mod = tir_mlir.parse(path.read_text())
    ctx = TuneContext(
        mod,
        "llvm",
        space_generator="post-order-apply",
        search_strategy="evolutionary",
        task_name=list(mod)[0],
        rand_state=1,
        num_threads=1,
    )
    spaces = ctx.generate_design_space()
    assert spaces
    for seed in (1, 2):
        got = replay(mod, ctx.search_strategy.postprocs, spaces[0].trace, seed)
        if path.stem == "triangular":
            # a loop bounded by an outer loop: DisallowDynamicLoop refuses it, as TVM's does
            assert not isinstance(got, tir_mlir.Schedule) and "DisallowDynamicLoop" in str(got)
        else:
            assert isinstance(got, tir_mlir.Schedule), got


def test_a_triangular_nest_is_not_tuned_and_the_log_says_why(tmp_path):
    """A loop bounded by an outer loop (`range(i, n)`) is refused by DisallowDynamicLoop, as
    TVM's tuner refuses any loop without a constant extent: no candidate, no record but the
    unscheduled program's (trial 0), and a warning that names the postprocessor (loops over
    a size alone are tuned: the point of `sizes`)."""
    src = (Path(__file__).parent.parent / "data" / "symbolic" / "triangular.tir").read_text()
    db = ms.tune_tir(
        tir_mlir.parse(src),
        "llvm",
        str(tmp_path),
        max_trials_global=2,
        num_trials_per_iter=2,
        sizes=[{"n": 16}, {"n": 33}],
        seed=0,
    )
    (record,) = db.get_all_tuning_records()
    assert record.trace.insts == [] and record.is_valid, record.error_msg
    assert "every sampled schedule failed" in (tmp_path / "tuning.log").read_text()
    assert "DisallowDynamicLoop" in (tmp_path / "tuning.log").read_text()


def test_scalar_parameters_are_passed_at_each_size(tmp_path):
    """scale_add(a, b, alpha: float32, offset: int32, k: int32): the integer parameters are
    part of each size, the float one is drawn; every candidate is checked at each size."""
    mod = tir_mlir.parse(
        (Path(__file__).parent.parent / "data" / "symbolic" / "scale_add.tir").read_text()
    )
    db = ms.tune_tir(
        mod,
        "llvm",
        str(tmp_path),
        max_trials_global=2,
        num_trials_per_iter=2,
        sizes=[{"n": 5, "k": 8, "offset": 3}, {"n": 33, "k": 6, "offset": -1}],
        seed=0,
        cost_model="random",
    )
    records = db.get_all_tuning_records()
    assert len(records) == 2 and all(r.is_valid for r in records), [r.error_msg for r in records]


@pytest.mark.parametrize("path", WORKLOAD, ids=lambda p: p.stem)
def test_every_symbolic_workload_has_a_gpu_design_space(path):
    """The CUDA rules too (no GPU needed: nothing is built): a candidate replays, or a
    postprocessor (VerifyGPUCode) rejects it, never an error of ours."""
    from tir_mlir.meta_schedule.search_strategy.replay_jobs import replay
    from tir_mlir.meta_schedule.tune_context import TuneContext

    mod = tir_mlir.parse(path.read_text())
    ctx = TuneContext(
        mod,
        "cuda",
        space_generator="post-order-apply",
        search_strategy="evolutionary",
        task_name=list(mod)[0],
        rand_state=1,
        num_threads=1,
    )
    names = {type(p).__name__ for p in ctx.search_strategy.postprocs}
    for space in ctx.generate_design_space():
        got = replay(mod, ctx.search_strategy.postprocs, space.trace, 1)
        assert isinstance(got, tir_mlir.Schedule) or got in names, got
