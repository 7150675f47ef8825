"""The parts of TVM 0.21's tuner API a user extends, written as TVM users write them:
`@derived_object` subclasses of PyScheduleRule / PyPostproc / PyMutator / PyCostModel /
PySearchStrategy / PyMeasureCallback, the built-in measure callbacks, SpaceGeneratorUnion and
ApplyCustomRule (a block's `schedule_rule` annotation dispatched to a registered function)."""

import logging
import os
import pickle
from typing import ClassVar

import numpy as np
import pytest
from schedule_check import check_numerics, parse

import tir_mlir
import tir_mlir.meta_schedule as ms
from tir_mlir.meta_schedule.arg_info import ArgInfo
from tir_mlir.meta_schedule.cost_model import PyCostModel
from tir_mlir.meta_schedule.measure_callback import PyMeasureCallback
from tir_mlir.meta_schedule.mutator import PyMutator
from tir_mlir.meta_schedule.postproc import PyPostproc
from tir_mlir.meta_schedule.schedule_rule import PyScheduleRule
from tir_mlir.meta_schedule.search_strategy import MeasureCandidate, PySearchStrategy
from tir_mlir.meta_schedule.tune_context import TuneContext
from tir_mlir.runtime.packed import register_func
from workloads import matmul

TARGET = "llvm -num-cores=2"
MATMUL = matmul(64)


@ms.derived_object
class TileRule(PyScheduleRule):
    """TVM's test_meta_schedule_post_order_apply rule, with a sampled tile."""

    def _initialize_with_tune_context(self, context) -> None:
        self.initialized_for = context.task_name

    def apply(self, sch, block) -> list:
        if sch.get(block).name_hint == "root":
            return [sch]
        new_sch = sch.copy()
        i, j, k = new_sch.get_loops(block=block)
        i_0, i_1 = new_sch.split(loop=i, factors=new_sch.sample_perfect_tile(i, n=2))
        j_0, j_1 = new_sch.split(loop=j, factors=[16, 4])
        new_sch.reorder(i_0, j_0, k, i_1, j_1)
        return [new_sch]


@ms.derived_object
class VectorizeInner(PyPostproc):
    def _initialize_with_tune_context(self, context) -> None:
        self.calls = 0

    def apply(self, sch) -> bool:
        self.calls += 1
        *_, inner = sch.get_loops(sch.get_block("C"))
        sch.vectorize(inner)
        return True


@ms.derived_object
class HalveFirstTile(PyMutator):
    def _initialize_with_tune_context(self, context) -> None:
        pass

    def apply(self, trace, _):
        inst = next(i for i in trace.insts if i.name == "sample_perfect_tile")
        outer, inner = trace.get_decision(inst)
        if inner % 2:
            return None
        return trace.with_decision(inst, [outer * 2, inner // 2], remove_postproc=True)


@ms.derived_object
class CountingModel(PyCostModel):
    def __init__(self):
        self.updates, self.predictions = 0, 0

    def update(self, context, candidates, results) -> None:
        self.updates += len(candidates)

    def predict(self, context, candidates) -> np.ndarray:
        self.predictions += len(candidates)
        return np.arange(len(candidates), dtype="float64")


@ms.derived_object
class Recorder(PyMeasureCallback):
    def __init__(self):
        self.calls = []

    def apply(
        self, task_scheduler, task_id, measure_candidates, builder_results, runner_results
    ) -> None:
        self.calls.append(
            (
                task_id,
                len(measure_candidates),
                list(builder_results),
                list(runner_results),
                task_scheduler.tasks_[task_id].ctx.task_name,
            )
        )


def test_derived_rule_postproc_mutator_cost_model_callback_tune(tmp_path):
    mod = parse(MATMUL)
    rule, postproc, mutator = TileRule(), VectorizeInner(), HalveFirstTile()
    assert rule._outer() is rule
    # they pickle: the search replays candidates in worker processes with them
    assert type(pickle.loads(pickle.dumps(postproc))) is VectorizeInner
    space = ms.space_generator.PostOrderApply(
        sch_rules=[rule], postprocs=[postproc], mutator_probs={mutator: 1.0}
    )
    model, recorder = CountingModel(), Recorder()
    db = ms.tune_tir(
        mod,
        TARGET,
        str(tmp_path),
        max_trials_global=4,
        num_trials_per_iter=2,
        space=space,
        cost_model=model,
        database="memory",
        seed=0,
        num_tuning_cores=1,
        strategy=ms.search_strategy.EvolutionarySearch(population_size=8, genetic_num_iters=2),
        measure_callbacks=[*ms.measure_callback.MeasureCallback.create("default"), recorder],
    )
    records = db.get_all_tuning_records()
    assert len(records) == 4 and any(r.is_valid for r in records)
    # trial 0: the unscheduled program (the empty trace); then the search's candidates
    assert sum(not r.trace.insts for r in records) == 1
    for r in records:  # the rule's split and the postprocessor's vectorize
        text = str(r.trace)
        assert not r.trace.insts or ("factors=[16, 4]" in text and "sch.vectorize(" in text)
    best = ms.tir_integration.compile_tir(db, mod, TARGET)
    if db.query_best(mod, TARGET).trace.insts:
        assert "T.vectorized(4)" in best.mod.script()
    else:  # the unscheduled program was the fastest
        assert best.mod.script() == mod.script()
    check_numerics(mod, best.mod, "main")
    # the cost model learned from every measured candidate (each built) and ranked some
    assert model.updates == 4 and model.predictions > 0
    # the callback saw trial 0 and both rounds, after RemoveBuildArtifact deleted the
    # shared objects
    assert [(c[0], c[1], c[4]) for c in recorder.calls] == [
        (0, 1, "main"),
        (0, 2, "main"),
        (0, 1, "main"),
    ]
    for _, n, built, ran, _ in recorder.calls:
        assert len(built) == len(ran) == n
        assert all(b.artifact_path and not os.path.exists(b.artifact_path) for b in built)


def test_without_add_to_database_nothing_is_stored(tmp_path):
    """TVM's behaviour: the database is written by the AddToDatabase callback."""
    recorder = Recorder()
    db = ms.tune_tir(
        parse(MATMUL),
        TARGET,
        str(tmp_path),
        max_trials_global=2,
        num_trials_per_iter=2,
        database="memory",
        cost_model="random",
        strategy="replay-trace",
        measure_callbacks=recorder,
        seed=0,
    )
    assert len(db.get_all_tuning_records()) == 0
    assert [c[1] for c in recorder.calls] == [1, 1]  # trial 0, the unscheduled program; a round
    # no RemoveBuildArtifact either: the artifacts stay
    assert all(os.path.exists(b.artifact_path) for b in recorder.calls[0][2])


@ms.derived_object
class EachSketchOnce(PySearchStrategy):
    """TVM's PySearchStrategy protocol: measure every design space once, then stop.
    (tune_tir gives each task its own copy of the strategy: `used` lists those.)"""

    used: ClassVar[list] = []

    def _initialize_with_tune_context(self, context) -> None:
        self.task = context.task_name

    def pre_tuning(
        self, max_trials, num_trials_per_iter, design_spaces, database=None, cost_model=None
    ) -> None:
        self.spaces, self.done, self.notified, self.post = design_spaces, False, [], False
        self.used.append(self)

    def post_tuning(self) -> None:
        self.post = True

    def generate_measure_candidates(self):
        if self.done:
            return None
        self.done = True
        return [MeasureCandidate(s, ArgInfo.from_entry_func(s.mod)) for s in self.spaces]

    def notify_runner_results(self, measure_candidates, results) -> None:
        self.notified += list(results)


def _split_by(factor):
    def fn(sch):
        i, _, _ = sch.get_loops(sch.get_block("C"))
        sch.split(i, [None, factor])

    return fn


def test_derived_search_strategy_and_space_union(tmp_path):
    mod = parse(MATMUL)
    union = ms.space_generator.SpaceGeneratorUnion(
        [ms.space_generator.ScheduleFn(_split_by(8)), ms.space_generator.ScheduleFn(_split_by(16))],
        postprocs=[],
        mutator_probs={},
    )
    db = ms.tune_tir(
        mod,
        TARGET,
        str(tmp_path),
        max_trials_global=8,
        space=union,
        strategy=EachSketchOnce(),
        database="memory",
        cost_model="random",
        seed=0,
    )
    (strategy,) = EachSketchOnce.used
    assert strategy.task == "main" and strategy.post
    assert len(strategy.notified) == 2
    records = db.get_all_tuning_records()
    assert sum(not r.trace.insts for r in records) == 1  # trial 0, the unscheduled program
    texts = sorted(str(r.trace) for r in records if r.trace.insts)
    assert len(texts) == 2
    assert "factors=[None, 16]" in texts[0] and "factors=[None, 8]" in texts[1]


def test_space_union_concatenates_and_initializes_each():
    mod = parse(MATMUL)
    rule = TileRule()
    inner = ms.space_generator.PostOrderApply(sch_rules=[rule], postprocs=[], mutator_probs={})
    union = ms.space_generator.SpaceGeneratorUnion(
        [ms.space_generator.ScheduleFn(_split_by(8)), inner]
    )
    ctx = TuneContext(mod, TARGET, space_generator=union, task_name="t", rand_state=0)
    spaces = ctx.generate_design_space()
    assert len(spaces) == 2
    assert "factors=[None, 8]" in str(spaces[0].trace)
    assert "factors=[16, 4]" in str(spaces[1].trace)
    assert rule.initialized_for == "t"
    # the union's own postprocessors (from the target) are what the search runs
    assert [type(p).__name__ for p in union.postprocs] == [
        type(p).__name__ for p in ms.postproc.create("llvm")
    ]


def test_derived_object_refuses_a_class_that_is_not_a_py_class():
    with pytest.raises(TypeError, match="user-facing method overriding class"):

        @ms.derived_object
        class NotPy(ms.schedule_rule.ScheduleRule):
            pass


ANNOTATED = MATMUL.replace(
    'vi, vj, vk = T.axis.remap("SSR", [i, j, k])',
    'vi, vj, vk = T.axis.remap("SSR", [i, j, k])\n'
    '            T.block_attr({"schedule_rule": "RULE"})',
)


@register_func("meta_schedule.cpu.test_tile_by_8")
def _custom_tile(sch, block):
    i, _, _ = sch.get_loops(block)
    a, b = sch.copy(), sch
    a.split(a.get_loops(a.get_block("C"))[0], [None, 8])
    b.split(i, [None, 16])
    return [a, b]


def _spaces(text):
    mod = parse(text)
    return mod, ms.generate_design_space(mod, TARGET, seed=0)


def test_apply_custom_rule_dispatches_on_the_annotation():
    mod, spaces = _spaces(ANNOTATED.replace("RULE", "test_tile_by_8"))
    texts = [str(s.trace) for s in spaces]
    assert len(texts) == 2
    assert sorted("factors=[None, 16]" in t for t in texts) == [False, True]
    assert sorted("factors=[None, 8]" in t for t in texts) == [False, True]
    # no other default rule touched the annotated block (ParallelizeVectorizeUnroll
    # annotates the root block, as in TVM)
    assert all("sample_perfect_tile" not in t for t in texts)
    for s in spaces:
        root = s.get_block("root")
        assert set(s.get(root).annotations) == {
            "meta_schedule.parallel",
            "meta_schedule.vectorize",
            "meta_schedule.unroll_explicit",
        }
        assert not any(k.startswith("meta_schedule") for k in s.get(s.get_block("C")).annotations)
    for s in spaces:
        check_numerics(mod, s.mod, "main")


def test_apply_custom_rule_none_leaves_the_block_alone():
    mod, spaces = _spaces(ANNOTATED.replace("RULE", "None"))
    assert len(spaces) == 1 and "sch.split" not in str(spaces[0].trace)
    sch = spaces[0]
    root = sch.get_block("root")
    for key in sch.get(root).annotations:  # ParallelizeVectorizeUnroll's, on the root
        sch.unannotate(root, key)
    assert sch.mod.script() == mod.script()


def test_apply_custom_rule_unknown_name_warns_and_the_other_rules_apply(caplog):
    with caplog.at_level(logging.WARNING, logger="tir_mlir.meta_schedule"):
        _, spaces = _spaces(ANNOTATED.replace("RULE", "no_such_rule"))
    assert 'Unknown schedule rule "no_such_rule"' in caplog.text
    assert "meta_schedule.cpu.no_such_rule" in caplog.text
    assert len(spaces) > 1  # MultiLevelTiling's sketches
    assert all("schedule_rule" not in s.mod.script() for s in spaces)
    assert all("sample_perfect_tile" in str(s.trace) for s in spaces)


def test_apply_custom_rule_keys_come_from_the_target():
    assert ms.target.Target("llvm").keys == ["cpu"]
    assert ms.target.Target("cuda").keys == ["cuda", "gpu"]
    assert ms.target.Target("llvm -keys=arm_cpu,cpu").keys == ["arm_cpu", "cpu"]
    rule = ms.schedule_rule.ApplyCustomRule()
    with pytest.raises(ValueError, match="not initialized with TuneContext"):
        rule.apply(tir_mlir.Schedule(parse(ANNOTATED)), None)
