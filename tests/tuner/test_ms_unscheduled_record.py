"""The unscheduled program is a tuning candidate like any other: the task scheduler measures
every CPU task's program as given (trial 0) and stores it with the empty trace, so the
database's best, compile_tir and the scripts `tir-mlir tune` writes never pick a schedule
slower than the input, and a schedule that is faster still wins."""

import json

import numpy as np
from schedule_check import parse

import tir_mlir
import tir_mlir.meta_schedule as ms
from tir_mlir.meta_schedule.database import MemoryDatabase, TuningRecord
from tir_mlir.meta_schedule.search_strategy.replay_jobs import schedule_key
from tir_mlir.meta_schedule.tune_context import TuneContext
from tir_mlir.meta_schedule.tune_model import model_schedule_script
from tir_mlir.meta_schedule.tune_report import schedule_script
from tir_mlir.meta_schedule.unscheduled import has_decisions, is_unscheduled
from tir_mlir.schedule.trace import Trace
from workloads import matmul

TARGET = "llvm -num-cores=2"
ADD = """
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = A[vi] + B[vi]
"""


def parallel_overhead(sch):
    """A space whose every schedule wakes a thread pool to add 64 numbers: slower than the
    plain loop by the pool's microseconds."""
    (i,) = sch.get_loops(sch.get_block("C"))
    i0, _ = sch.split(i, factors=sch.sample_perfect_tile(i, n=2))
    sch.parallel(i0)


def vectorized(sch):
    """One schedule, tens of times faster than the unscheduled matmul (k no longer strides
    B's rows innermost)."""
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    j0, j1 = sch.split(j, factors=[None, 16])
    sch.reorder(i, j0, k, j1)
    sch.vectorize(j1)


def _tune(mod, space, work_dir, trials=5, **kwargs):
    return ms.tune_tir(
        mod,
        TARGET,
        str(work_dir),
        trials,
        num_trials_per_iter=trials,
        space=ms.space_generator.ScheduleFn(space),
        seed=0,
        num_tuning_cores=1,
        **kwargs,
    )


def _numbers(mod, shapes):
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype("float32") for s in shapes]
    tir_mlir.build(mod)["main"](*args)
    return args


def _records(db):
    return sorted(db.get_all_tuning_records(), key=lambda r: r.timestamp)


def test_unscheduled_program_wins_and_compile_tir_keeps_it(tmp_path):
    mod = parse(ADD)
    db = _tune(mod, parallel_overhead, tmp_path)
    records = _records(db)
    assert len(records) == 5
    first = records[0]  # trial 0, stored with the empty trace
    assert first.trace.insts == [] and first.is_valid
    assert sum(is_unscheduled(r.trace) for r in records) == 1
    assert all("parallel" in str(r.trace) for r in records[1:])
    assert db.query_best(mod, TARGET) is not None
    assert db.query_best(mod, TARGET).trace.insts == []
    sch = ms.tir_integration.compile_tir(db, mod, TARGET)
    assert sch.mod.script() == mod.script()
    a, b, c = _numbers(sch.mod, [(64,)] * 3)
    np.testing.assert_allclose(c, a + b, rtol=1e-6)
    # TVM's JSON form of the record: an empty trace is [[], []]
    lines = (tmp_path / "database_tuning_record.json").read_text().splitlines()
    assert sum(json.loads(line)[1][0] == [[], []] for line in lines) == 1


def test_a_faster_schedule_wins(tmp_path):
    mod = parse(matmul(128))
    db = _tune(mod, vectorized, tmp_path, trials=4)
    records = _records(db)
    # the unscheduled program, then the space's one schedule; the search has no other
    assert [is_unscheduled(r.trace) for r in records] == [True, False]
    best = db.query_best(mod, TARGET)
    assert not is_unscheduled(best.trace)
    assert best.mean_sec < records[0].mean_sec / 2
    sch = ms.tir_integration.compile_tir(db, mod, TARGET)
    assert "T.vectorized" in sch.mod.script()
    a, b, c = _numbers(sch.mod, [(128, 128)] * 3)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_resumed_tuning_does_not_measure_it_again(tmp_path):
    mod = parse(ADD)
    _tune(mod, parallel_overhead, tmp_path, trials=2)
    db = _tune(mod, parallel_overhead, tmp_path, trials=2)
    records = _records(db)
    assert len(records) == 4
    assert [is_unscheduled(r.trace) for r in records] == [True, False, False, False]


def test_trial_0_counts_toward_the_budget(tmp_path):
    two = parse(
        ADD.replace("def main", "def add")
        + ADD.replace("def main", "def add2").replace("A[vi] + B[vi]", "A[vi] * B[vi]")
    )
    db = ms.tune_tir(
        two,
        TARGET,
        str(tmp_path),
        1,
        database="memory",
        num_trials_per_iter=1,
        task_scheduler="round-robin",
        seed=0,
        num_tuning_cores=1,
    )
    (record,) = db.get_all_tuning_records()  # a budget of 1: add's trial 0, nothing more
    assert record.trace.insts == []


def test_search_counts_the_stored_unscheduled_program_as_measured_never_as_a_parent():
    mod = parse(matmul(32))
    db = MemoryDatabase()
    workload = db.commit_workload(mod)
    db.commit_tuning_record(TuningRecord(Trace([]), workload, [1e-9], TARGET))  # fastest
    search = ms.search_strategy.EvolutionarySearch(
        population_size=8, init_min_unmeasured=4, genetic_num_iters=1
    )
    ctx = TuneContext(mod, TARGET, search_strategy=search, rand_state=0)
    search.pre_tuning(8, 4, ctx.generate_design_space(), db)
    assert list(search.measured) == [str(Trace([]))]
    assert search._best_measured(4) == []  # nothing to mutate: no decision
    first = search.generate_measure_candidates()
    assert first and all(not is_unscheduled(c.trace) for c in first)  # not measured again
    assert all(has_decisions(c.trace) for c in first)
    assert all(c.key != schedule_key(tir_mlir.Schedule(mod)) for c in first)


def test_empty_trace_replays_to_the_program_as_given():
    mod = parse(matmul(16))
    for trace in (Trace([]), Trace.from_json(json.loads(json.dumps(Trace([]).as_json())))):
        sch = tir_mlir.Schedule(mod)
        trace.apply_to_schedule(sch, remove_postproc=False)
        assert sch.mod.script() == mod.script()
        assert not has_decisions(trace)


def _record(trace, sec=2e-6):
    mod = parse(ADD)
    return TuningRecord(trace, MemoryDatabase().commit_workload(mod), [sec], TARGET)


def test_best_schedule_scripts_say_the_unscheduled_program_won():
    text = schedule_script(_record(Trace([])), "add.tir", "main", None)
    body = text.split("def schedule(sch):\n", 1)[1]
    assert body == ("  # the unscheduled program was the fastest: it is left unscheduled\n  pass\n")
    namespace: dict = {}
    exec(compile(text, "best_schedule.py", "exec"), namespace)  # noqa: S102 - ours
    sch = tir_mlir.Schedule(parse(ADD))
    namespace["schedule"](sch)
    assert sch.mod.script() == parse(ADD).script()

    extracted = ms.extract_tasks(parse(ADD), TARGET)
    text = model_schedule_script(extracted, {"main": _record(Trace([]))}, "add.tir", TARGET, 2e-6)
    assert text.endswith(
        "def schedule(sch):\n"
        "  # task main (weight 1): 0.0020 ms\n"
        "  # the unscheduled program was the fastest: left unscheduled\n"
        "  pass\n"
    )


def test_cli_reports_the_unscheduled_program_as_best(tmp_path):
    """`tir-mlir tune --trials 1`: trial 0 alone, so the unscheduled program is the best, and
    the report and best_schedule.py say so."""
    from click.testing import CliRunner

    from tir_mlir.cli import main

    (tmp_path / "add.tir").write_text(ADD)
    work = tmp_path / "w"
    r = CliRunner().invoke(
        main,
        ["tune", str(tmp_path / "add.tir"), "--trials", "1", "--work-dir", str(work)],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    assert ", the unscheduled program: no schedule measured was faster after 1 trials" in r.output
    assert "it is left unscheduled" in (work / "best_schedule.py").read_text()
