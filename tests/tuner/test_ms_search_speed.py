"""The search's shortcuts give what the long way gives: a loop's iter type found through the
loop variable's uses, mutated traces keyed by their own text, replays in worker processes,
scalar replacement's groups looked up instead of compared pairwise."""

import random

import numpy as np
import pytest

import tir_mlir.meta_schedule as ms
from schedule_check import parse
from workloads import matmul
from tir_mlir.context import get_context
from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.meta_schedule.runner import RunnerResult
from tir_mlir.meta_schedule.search_strategy import MeasureCandidate
from tir_mlir.meta_schedule.tune_context import TuneContext
from tir_mlir.analysis import structure as analysis

MATMUL = matmul(64)
TARGET = "llvm -num-cores=2"

CONV = """
@T.prim_func
def main(X: T.Buffer((1, 8, 10, 10), "float32"), W: T.Buffer((8, 8, 3, 3), "float32"), Y: T.Buffer((1, 8, 8, 8), "float32")):
    for n, f, y, x, c, ry, rx in T.grid(1, 8, 8, 8, 8, 3, 3):
        with T.block("conv"):
            vn, vf, vy, vx, vc, vry, vrx = T.axis.remap("SSSSRRR", [n, f, y, x, c, ry, rx])
            with T.init():
                Y[vn, vf, vy, vx] = T.float32(0)
            Y[vn, vf, vy, vx] = Y[vn, vf, vy, vx] + X[vn, vc, vy + vry, vx + vrx] * W[vf, vc, vry, vrx]
"""


def _walked_iter_type(loop) -> str:
    """GetLoopIterType over every block under the loop (the definition)."""
    iv = Loop(loop).iv
    kinds = {
        Block(b).iter_types[r]
        for b in analysis.blocks_under(loop)
        for r in analysis.dim_exprs_using(b, iv)
    }
    return "O" if "O" in kinds else "R" if "R" in kinds else "S"


@pytest.mark.parametrize("src", [MATMUL, CONV])
def test_loop_iter_type_through_uses_matches_the_walk(src):
    mod = parse(src)
    ctx = TuneContext(mod, TARGET, search_strategy="replay-trace", rand_state=3)
    spaces = ctx.generate_design_space()
    ctx.search_strategy.pre_tuning(4, 4, spaces)
    kinds = set()
    for k in range(4):
        cand = ctx.search_strategy.sample(spaces[k % len(spaces)].trace)
        if cand is None:
            continue
        sch = cand
        with get_context():
            loops = [
                op
                for op in analysis.walk_all(sch.mod[next(iter(sch.mod.functions))])
                if analysis.is_loop(op)
            ]
            for op in loops:
                kinds.add(analysis.loop_iter_type(op))
                assert analysis.loop_iter_type(op) == _walked_iter_type(op)
    assert kinds == {"S", "R"}


class _FlopsModel(ms.cost_model.CostModel):
    """A deterministic model that ranks: the sum of the program vector."""

    extractor = ms.feature_extractor.PerStoreFeature()

    def update(self, context, candidates, results):
        pass

    def predict(self, context, candidates):
        return self.extractor.program_vectors(context, candidates).sum(axis=1)


def _search(mod, population=16, workers=2, model=None):
    search = ms.search_strategy.EvolutionarySearch(
        population_size=population, init_measured_ratio=0.25, genetic_num_iters=2
    )
    ctx = TuneContext(mod, TARGET, search_strategy=search, rand_state=0, num_threads=workers)
    search.pre_tuning(64, 8, ctx.generate_design_space(), cost_model=model or _FlopsModel())
    return search


def _rounds(search, n=2):
    keys = []
    for _ in range(n):
        cands = search.generate_measure_candidates()
        keys.append([c.key for c in cands])
        secs = [[1e-3 * (1 + random.Random(c.key).random())] for c in cands]
        search.notify_runner_results(cands, [RunnerResult(s) for s in secs])
    return keys


def test_search_workers_take_the_path_of_the_search_in_one_process():
    """The replays run in worker processes; the candidates (and so the tuning) are those of
    the same search run in this process, and each candidate's features and key are those of
    its schedule replayed here."""
    mod = parse(CONV)
    parallel, local = _search(mod, workers=2), _search(mod, workers=1)
    assert parallel._replayer.blob is not None and local._replayer.blob is None
    got = _rounds(parallel)
    assert got == _rounds(local) and all(len(r) == 8 for r in got)
    extractor = ms.feature_extractor.PerStoreFeature()
    key = ms.search_strategy.replay_jobs.schedule_key
    for c in parallel._random_samples(4):
        assert c.key == key(c.sch)
        np.testing.assert_array_equal(
            c.features, extractor.program_vectors(None, [MeasureCandidate(c.sch)])[0]
        )


def test_mutated_trace_key_is_its_text():
    """A mutated child's key is its trace's text (mutation results are remembered by it):
    it must be the key of the replayed schedule."""
    search = _search(parse(CONV), workers=1)
    key = ms.search_strategy.replay_jobs.schedule_key
    parents = [c for c in search._random_samples(12)]
    checked = 0
    for k, parent in enumerate(parents):
        for m in range(len(search.mutator_probs)):
            child = search._run([("mutate", parent.trace_json, m, k + 1)])[0]
            if child is not None:
                assert child.key == key(child.sch)
                checked += 1
    assert checked >= 5


def test_before_the_model_ranks_a_round_measures_random_walks(monkeypatch):
    """An untrained model scores at random; evolving by such scores picks random samples and
    their mutants: a round measures that directly (samples mutated 0 to genetic_num_iters
    times), without replaying the whole population."""
    search = _search(parse(MATMUL), model=ms.cost_model.XGBModel(num_warmup_samples=1000))
    jobs, mutants = [], set()
    run = search._replayer.run

    def spy(js):
        results = run(js)
        jobs.extend(js)
        mutants.update(r[1] for j, r in zip(js, results) if j[0] == "mutate" and r[0] == "ok")
        return results

    monkeypatch.setattr(search._replayer, "run", spy)
    cands = search.generate_measure_candidates()
    # budget 8: the unscheduled program (the first round's extra candidate, replayed from
    # the empty trace) and 7 walks, from 7 samples and some spare
    k = 7 + max(8, 7 // 4)
    kinds = [j[0] for j in jobs]
    assert kinds[0] == "replay" and not cands[0].sch.trace.without_postproc().insts
    assert len(cands) == 8 and len({c.key for c in cands}) == 8
    assert kinds.count("sample") == k
    assert 0 < kinds.count("mutate") <= k * search.genetic_num_iters
    assert any(c.key in mutants for c in cands)


def test_a_task_that_does_not_pickle_is_searched_in_this_process():
    class Lambdas(ms.postproc.Postproc):
        check = staticmethod(lambda sch: True)  # lambdas do not pickle

        def apply(self, sch):
            return self.check(sch)

    mod = parse(MATMUL)
    search = ms.search_strategy.EvolutionarySearch(population_size=8, genetic_num_iters=1)
    space = ms.space_generator.PostOrderApply(postprocs=[Lambdas()])
    ctx = TuneContext(
        mod, TARGET, space_generator=space, search_strategy=search, rand_state=0, num_threads=2
    )
    search.pre_tuning(8, 4, ctx.generate_design_space(), cost_model=_FlopsModel())
    assert search._replayer.blob is None
    assert len(search.generate_measure_candidates()) == 4


def _pairwise_groups(loop, accesses):
    """scalar-replace's carried groups by their definition: every pair of accesses compared."""
    from tir_mlir.passes.lowering import scalar_replace as sr

    def may_conflict(a, b):
        if a.buffer is None or b.buffer is None:
            return True
        if a.buffer == b.buffer:
            return not sr._disjoint(a, b)
        return a.shared and b.shared

    groups = []
    for a in accesses:
        if not sr._invariant(a, loop) or any(a in g for g in groups):
            continue
        same = [
            b
            for b in accesses
            if a.buffer is not None
            and b.buffer is not None
            and a.buffer == b.buffer
            and a.index is not None
            and a.index == b.index
            and sr._value_type(a) == sr._value_type(b)
        ]
        slots = [sr._slot(b, loop) for b in same]
        if (
            any(b.store for b in same)
            and all(s is not None for s in slots)
            and any(s is not None and s == b.op for s, b in zip(slots, same))
            and not any(may_conflict(a, b) for b in accesses if b not in same)
        ):
            groups.append(same)
    return groups


def test_scalar_replace_groups_match_the_pairwise_definition(monkeypatch):
    """The tuner's builds look a carried group's conflicts up by buffer root and offset:
    the same groups as comparing every pair, on sampled candidates (unrolled tiles)."""
    import tir_mlir
    from tir_mlir.passes.lowering import scalar_replace as sr

    fast, seen = sr._groups, []

    def both(loop, accesses):
        got = fast(loop, accesses)
        want = _pairwise_groups(loop, accesses)
        assert [[id(a) for a in g] for g in got] == [[id(a) for a in g] for g in want]
        seen.append(len(got))
        return got

    monkeypatch.setattr(sr, "_groups", both)
    for src in (MATMUL.replace("64", "128"), CONV):  # (the 128 one has overlapping tiles)
        mod = parse(src)
        ctx = TuneContext(mod, TARGET, search_strategy="replay-trace", rand_state=5)
        spaces = ctx.generate_design_space()
        ctx.search_strategy.pre_tuning(4, 4, spaces)
        for k in range(4):
            cand = ctx.search_strategy.sample(spaces[k % len(spaces)].trace)
            if cand is not None:
                tir_mlir.build(cand.mod, target=TARGET)
    assert sum(seen) > 10
