"""Where the database holds no record of the unscheduled program (the task scheduler's trial
0 stores one for every CPU task: test_ms_unscheduled_record.py; not for a GPU task, or a
search run alone as here), the evolutionary search measures the program as given once, in its
first round (the empty trace and the postprocessors): tuning never returns a program slower
than its input, even when no sketch of the design space contains the input (TVM's spaces do
not)."""

import tir_mlir.meta_schedule as ms
from schedule_check import parse
from tir_mlir.meta_schedule.runner import RunnerResult
from tir_mlir.meta_schedule.search_strategy.replay_jobs import schedule_key
from tir_mlir.meta_schedule.tune_context import TuneContext
from workloads import matmul

TARGET = "llvm -num-cores=2"


def _search(mod, **kwargs):
    search = ms.search_strategy.EvolutionarySearch(
        population_size=8, init_min_unmeasured=4, genetic_num_iters=1, **kwargs
    )
    ctx = TuneContext(mod, TARGET, search_strategy=search, rand_state=0)
    search.pre_tuning(8, 4, ctx.generate_design_space())
    return search


def test_first_round_measures_the_unscheduled_program_once():
    mod = parse(matmul(32))
    search = _search(mod)
    first = search.generate_measure_candidates()
    assert len(first) == 4  # the round's budget, the unscheduled program included
    assert not first[0].sch.trace.without_postproc().insts  # the empty trace
    text = first[0].sch.mod.script()
    assert "for k in range(32):" in text and "T.parallel" not in text  # untiled, no rule ran
    assert sum(not c.sch.trace.without_postproc().insts for c in first) == 1
    search.notify_runner_results(first, [RunnerResult([1e-3])] * len(first))
    second = search.generate_measure_candidates()
    assert second and all(c.sch.trace.without_postproc().insts for c in second)


def test_an_unscheduled_program_already_measured_is_not_measured_again():
    mod = parse(matmul(32))
    search = _search(mod)
    (unscheduled,) = search._run([("replay", "[[], []]", 1)]) or [None]
    assert unscheduled is not None
    search.measured[unscheduled.key] = (unscheduled, 1e-3)  # as a resumed tuning finds it
    first = search.generate_measure_candidates()
    assert all(c.sch.trace.without_postproc().insts for c in first)
    assert unscheduled.key == schedule_key(unscheduled.sch)
