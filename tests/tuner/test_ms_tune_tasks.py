"""ms.extract_tasks over a module of many functions (identical ones, under other names,
de-duplicated by structural hash; weights = how many functions a task stands for) and
ms.tune_tasks tuning them together with one database and one cost model; compile_tir
schedules every function, duplicates included, from its task's records."""

import numpy as np
from schedule_check import check_numerics, parse

import tir_mlir
import tir_mlir.meta_schedule as ms
from tir_mlir.meta_schedule.cost_model import PyCostModel
from tir_mlir.module import IRModule

TARGET = "llvm -num-cores=2"
MODEL = """
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
    def relu(X: T.Buffer((256,), "float32"), Y: T.Buffer((256,), "float32")):
        for i in range(256):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = T.max(X[vi], T.float32(0))

    @T.prim_func
    def mm_again(P: T.Buffer((32, 32), "float32"), Q: T.Buffer((32, 32), "float32"), R: T.Buffer((32, 32), "float32")):
        for a, b, c in T.grid(32, 32, 32):
            with T.block("C"):
                va, vb, vc = T.axis.remap("SSR", [a, b, c])
                with T.init():
                    R[va, vb] = T.float32(0)
                R[va, vb] = R[va, vb] + P[va, vc] * Q[vc, vb]

    @T.prim_func
    def mm_wider(A: T.Buffer((32, 64), "float32"), B: T.Buffer((64, 32), "float32"), C: T.Buffer((32, 32), "float32")):
        for i, j, k in T.grid(32, 32, 64):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    @T.prim_func
    def relu_2(X: T.Buffer((256,), "float32"), Y: T.Buffer((256,), "float32")):
        for i in range(256):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = T.max(X[vi], T.float32(0))
"""


def test_extract_tasks_deduplicates_identical_functions():
    tasks = ms.extract_tasks(parse(MODEL), TARGET)
    assert [(t.task_name, t.weight, t.func_names) for t in tasks] == [
        ("mm", 2, ["mm", "mm_again"]),
        ("relu", 2, ["relu", "relu_2"]),
        ("mm_wider", 1, ["mm_wider"]),
    ]
    for t in tasks:
        assert list(t.mod.functions) == ["main"] and t.dispatched == [t.mod]
        assert t.target.kind == "llvm"


@ms.derived_object
class PerTask(PyCostModel):
    """Counts what it learns per task: one model shared by every task."""

    def __init__(self):
        self.seen = {}

    def update(self, context, candidates, results) -> None:
        self.seen[context.task_name] = self.seen.get(context.task_name, 0) + len(candidates)

    def predict(self, context, candidates):
        return np.zeros(len(candidates))


def test_tune_tasks_shares_database_and_cost_model(tmp_path):
    mod = parse(MODEL)
    extracted = ms.extract_tasks(mod, TARGET)
    tasks, weights = ms.extracted_tasks_to_tune_contexts(
        extracted, str(tmp_path), strategy="replay-trace", seed=0
    )
    assert weights == [2.0, 2.0, 1.0]
    model = PerTask()
    db = ms.tune_tasks(
        tasks=tasks,
        task_weights=weights,
        work_dir=str(tmp_path),
        max_trials_global=9,
        num_trials_per_iter=3,
        cost_model=model,
        task_scheduler="round-robin",
    )
    records = db.get_all_tuning_records()
    assert len(records) == 9
    assert {r.workload for r in records} == {ms.database.Workload(t.mod) for t in extracted}
    # each task's trial 0 (its unscheduled program), then rounds of 3 in turn: mm, relu
    assert model.seen == {"mm": 4, "relu": 4, "mm_wider": 1}
    sch = ms.tir_integration.compile_tir(db, mod, TARGET)
    assert list(sch.mod.functions) == list(mod.functions)
    for name in ("mm", "mm_again", "relu", "relu_2", "mm_wider"):
        check_numerics(mod, sch.mod, name)
    # the duplicates got their task's best schedule
    best = {t.task_name: db.query_tuning_record(t.mod, TARGET, "main") for t in extracted}
    for task, names in (("mm", ("mm", "mm_again")), ("relu", ("relu", "relu_2"))):
        replay = tir_mlir.Schedule(best[task].workload.mod)
        best[task].trace.apply_to_schedule(replay)
        for name in names:
            assert tir_mlir.structural_equal(IRModule({"main": sch.mod[name]}), replay.mod)
