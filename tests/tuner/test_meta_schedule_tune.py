"""tune_tir end to end on small programs (real builds and measurements in worker
processes): records in the database, compile_tir's schedule computes the right numbers,
the strategies and cost models, several functions with both task schedulers."""

import numpy as np
import pytest

import tir_mlir.meta_schedule as ms
from schedule_check import check_numerics, parse
from tir_mlir.meta_schedule.tune_context import TuneContext
from workloads import matmul

MATMUL = matmul(64)

TWO_FUNCS = """
@I.ir_module
class Module:
    @T.prim_func
    def mm(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
        for i, j, k in T.grid(32, 32, 32):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    @T.prim_func
    def add(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
        for i in range(256):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] + T.float32(1)
"""
TARGET = "llvm -num-cores=2"


@pytest.mark.parametrize(
    "strategy,cost_model",
    [
        (
            lambda: ms.search_strategy.EvolutionarySearch(population_size=16, genetic_num_iters=2),
            "xgb",
        ),
        (lambda: ms.search_strategy.ReplayTrace(), "random"),
        (lambda: ms.search_strategy.ReplayFunc(), "random"),
    ],
)
def test_tune_tir_matmul(tmp_path, strategy, cost_model):
    mod = parse(MATMUL)
    db = ms.tune_tir(
        mod,
        TARGET,
        str(tmp_path),
        max_trials_global=8,
        num_trials_per_iter=4,
        strategy=strategy(),
        cost_model=cost_model,
        seed=0,
    )
    records = db.get_all_tuning_records()
    assert len(records) == 8
    # every candidate is measured or carries its reason (a compile may time out on a loaded
    # machine: that is recorded, not a crash)
    assert all(r.is_valid or r.error_msg for r in records)
    assert sum(r.is_valid for r in records) >= 4, [r.error_msg for r in records]
    # no program measured twice
    assert len({str(r.trace.without_postproc()) for r in records}) == 8
    assert sum(not r.trace.insts for r in records) == 1  # trial 0: the unscheduled program
    sch = ms.tir_integration.compile_tir(db, mod, TARGET)
    best = min(r.mean_sec for r in records if r.is_valid)
    record = db.query_tuning_record(mod, TARGET, "main")
    assert record.mean_sec == best
    if record.trace.insts:
        assert "sample_perfect_tile" in str(sch.trace)
    else:  # no candidate beat the program as given: compile_tir leaves it unscheduled
        assert sch.mod.script() == mod.script()
    check_numerics(mod, sch.mod, "main")


@pytest.mark.parametrize("scheduler", ["round-robin", "gradient"])
def test_several_functions(tmp_path, scheduler):
    mod = parse(TWO_FUNCS)
    db = ms.tune_tir(
        mod,
        TARGET,
        str(tmp_path),
        max_trials_global=12,
        num_trials_per_iter=3,
        task_scheduler=scheduler,
        database="memory",
        seed=1,
        strategy=ms.search_strategy.ReplayTrace(),
    )
    names = {list(r.workload.mod.functions)[0] for r in db.get_all_tuning_records()}
    assert names == {"mm", "add"}
    sch = ms.tir_integration.compile_tir(db, mod, TARGET)
    for f in ("mm", "add"):
        check_numerics(mod, sch.mod, f)


def test_xgb_model_learns_the_ranking():
    """Trained on measured-like costs (here: a known function of the tile sizes), the model
    ranks unseen candidates better than chance."""
    from tir_mlir.meta_schedule.runner import RunnerResult

    mod = parse(MATMUL)
    ctx = TuneContext(mod, TARGET, search_strategy="replay-trace", rand_state=0)
    st = ctx.search_strategy
    st.pre_tuning(120, 120, ctx.generate_design_space())
    cands = st.generate_measure_candidates()

    def cost(c):  # a synthetic cost: vectorized inner loops are fast, others slow
        text = c.sch.mod.script()
        return 1.0 / (1 + text.count("T.vectorized(") * 4 + text.count("T.parallel("))

    model = ms.cost_model.XGBModel(num_warmup_samples=1)
    train, test = cands[:80], cands[80:]
    model.update(ctx, train, [RunnerResult([cost(c)]) for c in train])
    pred = model.predict(ctx, test)
    truth = np.array([-cost(c) for c in test])
    corr = np.corrcoef(pred, truth)[0, 1]
    assert corr > 0.5


def test_evolutionary_search_resumes_from_the_database():
    """A database already holding records of the task (a resumed tuning): its best records
    count as measured from the start (they seed the population, TVM's get_top_k) and no
    round measures them again; records of another target are ignored."""
    from tir_mlir.meta_schedule.database import MemoryDatabase, TuningRecord

    mod = parse(MATMUL)
    ctx = TuneContext(mod, TARGET, search_strategy="replay-trace", rand_state=0)
    st = ctx.search_strategy
    st.pre_tuning(6, 6, ctx.generate_design_space())
    stored = st.generate_measure_candidates()
    db = MemoryDatabase()
    workload = db.commit_workload(mod)
    db.commit_tuning_records(
        [
            TuningRecord(c.sch.trace, workload, [0.001 * (k + 1)], TARGET)
            for k, c in enumerate(stored[:5])
        ]
    )
    db.commit_tuning_record(
        TuningRecord(stored[5].sch.trace, workload, [1e-6], "llvm -mcpu=skylake -num-cores=2")
    )
    key = ms.search_strategy.replay_jobs.schedule_key
    search = ms.search_strategy.EvolutionarySearch(
        population_size=10, init_measured_ratio=0.4, genetic_num_iters=1
    )
    ctx = TuneContext(mod, TARGET, search_strategy=search, rand_state=1)
    search.pre_tuning(16, 8, ctx.generate_design_space(), db)
    # the 4 best (population 10 x 0.4) of this target's records, with their times
    assert {k: t for k, (_, t) in search.measured.items()} == {
        key(c.sch): 0.001 * (k + 1) for k, c in enumerate(stored[:4])
    }
    assert [c.key for c in search._best_measured(2)] == [key(c.sch) for c in stored[:2]]
    cands = search.generate_measure_candidates()
    assert cands and not {key(c.sch) for c in cands} & set(search.measured)


@pytest.mark.parametrize("cores, threads", [(1, 1), ("3", 3), ("logical", None)])
def test_num_tuning_cores_reaches_the_search(tmp_path, monkeypatch, cores, threads):
    import os
    from tir_mlir.meta_schedule import tune

    seen = []

    def context(*args, **kwargs):
        seen.append(kwargs["num_threads"])
        return TuneContext(*args, **kwargs)

    monkeypatch.setattr(tune, "TuneContext", context)
    ms.tune_tir(
        parse(MATMUL),
        TARGET,
        str(tmp_path),
        max_trials_global=2,
        num_trials_per_iter=2,
        strategy=ms.search_strategy.ReplayTrace(),
        cost_model="random",
        database="memory",
        num_tuning_cores=cores,
        seed=0,
    )
    assert seen == [threads or os.cpu_count()]


class _LuckyRunner(ms.runner.Runner):
    """Times fixed by the order candidates are first measured in, each faster than the one
    before (1 ms, 0.99, ...), except the third, whose first measurement is 0.1 ms (a quiet
    moment of a shared machine) and every later one 5 ms."""

    def __init__(self):
        self.order, self.calls = {}, {}

    def run(self, inputs):
        from concurrent.futures import Future

        out = []
        for inp in inputs:
            k = self.order.setdefault(inp.artifact_path, len(self.order))
            n = self.calls[inp.artifact_path] = self.calls.get(inp.artifact_path, 0) + 1
            secs = (1e-4 if n == 1 else 5e-3) if k == 2 else 1e-3 * (1 - 0.01 * k)
            done = Future()
            done.set_result(ms.runner.RunnerResult([secs]))
            out.append(ms.runner.RunnerFuture(done, lambda f: f.result()))
        return out


def test_a_new_best_is_measured_again_and_keeps_those_times(tmp_path):
    """The fastest of many single measurements is the likeliest to be low by chance (session
    9's tuned conv2d: measured 0.79 ms once, 1.06 when timed again): a candidate faster than
    the task's best so far is measured twice more, and the database keeps those times."""
    mod = parse(MATMUL)
    runner = _LuckyRunner()
    db = ms.tune_tir(
        mod,
        TARGET,
        str(tmp_path),
        max_trials_global=6,
        num_trials_per_iter=5,
        runner=runner,
        database="memory",
        cost_model="random",
        strategy=ms.search_strategy.ReplayTrace(),
        seed=0,
    )
    records = db.get_all_tuning_records()
    assert len(records) == 6 and all(r.is_valid for r in records)
    lucky = [p for p, k in runner.order.items() if k == 2][0]
    assert runner.calls[lucky] == 3  # measured once, then twice more
    assert sorted(r.mean_sec for r in records)[-1] == pytest.approx(5e-3)
    best = db.query_tuning_record(mod, TARGET, "main")
    assert best.run_secs == pytest.approx([1e-3 * (1 - 0.01 * 5)] * 2)
