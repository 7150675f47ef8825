"""The search's shortcuts give what the long way gives: a loop's iter type found through the
loop variable's uses, mutated traces keyed by their own text, the best measured schedules
kept instead of replayed each round."""
import random

import pytest

import tir_mlir.meta_schedule as ms
from schedule_check import parse
from test_meta_schedule_tune import MATMUL, TARGET
from tir_mlir.context import get_context
from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.meta_schedule.runner import RunnerResult
from tir_mlir.meta_schedule.tune_context import TuneContext
from tir_mlir.passes.schedule import analysis
from tir_mlir.schedule.handles import LoopRV

CONV = '''
@T.prim_func
def main(X: T.Buffer((1, 8, 10, 10), "float32"), W: T.Buffer((8, 8, 3, 3), "float32"), Y: T.Buffer((1, 8, 8, 8), "float32")):
    for n, f, y, x, c, ry, rx in T.grid(1, 8, 8, 8, 8, 3, 3):
        with T.block("conv"):
            vn, vf, vy, vx, vc, vry, vrx = T.axis.remap("SSSSRRR", [n, f, y, x, c, ry, rx])
            with T.init():
                Y[vn, vf, vy, vx] = T.float32(0)
            Y[vn, vf, vy, vx] = Y[vn, vf, vy, vx] + X[vn, vc, vy + vry, vx + vrx] * W[vf, vc, vry, vrx]
'''


def _walked_iter_type(loop) -> str:
    """GetLoopIterType over every block under the loop (the definition)."""
    iv = Loop(loop).iv
    kinds = {Block(b).iter_types[r] for b in analysis.blocks_under(loop)
             for r in analysis.dim_exprs_using(b, iv)}
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
            loops = [op for op in analysis.walk_all(sch.mod[next(iter(sch.mod.functions))])
                     if analysis.is_loop(op)]
            for op in loops:
                kinds.add(analysis.loop_iter_type(op))
                assert analysis.loop_iter_type(op) == _walked_iter_type(op)
    assert kinds == {"S", "R"}


def _search(mod, population=16):
    search = ms.search_strategy.EvolutionarySearch(population_size=population,
                                                   init_measured_ratio=0.25,
                                                   genetic_num_iters=2)
    ctx = TuneContext(mod, TARGET, search_strategy=search, rand_state=0)
    search.pre_tuning(64, 8, ctx.generate_design_space(), cost_model=ms.cost_model.RandomModel())
    return search


def test_mutated_trace_key_is_its_text():
    """_replay_once keys a replayed mutated trace by the trace's text: the replayed
    schedule's key must be that text."""
    search = _search(parse(CONV))
    key = ms.search_strategy.evolutionary_search._key
    rng = random.Random(0)
    checked = 0
    for k in range(12):
        parent = search.sample(search.design_spaces[k % len(search.design_spaces)])
        if parent is None:
            continue
        for mutator in search.mutator_probs:
            trace = mutator.apply(parent.trace, rng)
            if trace is None:
                continue
            got = search._replay_once(trace, {})
            if got is not None:
                assert got[0] == key(got[1]) == str(trace)
                checked += 1
    assert checked >= 5


def test_best_measured_schedules_are_kept_not_replayed():
    search = _search(parse(MATMUL))
    key = ms.search_strategy.evolutionary_search._key
    for _ in range(2):
        cands = search.generate_measure_candidates()
        secs = [[1e-3 * (1 + random.Random(key(c.sch)).random())] for c in cands]
        search.notify_runner_results(cands, [RunnerResult(s) for s in secs])
    k = int(search.population_size * search.init_measured_ratio)
    assert 0 < len(search._kept) <= k
    best = search._best_measured(k)
    want = [trace for _, (trace, _) in search._ranked(k)]
    assert [key(s) for s in best] == [str(t.without_postproc()) for t in want]
    for sch, trace in zip(best, want):
        assert str(sch.mod) == str(search.replay(trace).mod)


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
        same = [b for b in accesses if a.buffer is not None and b.buffer is not None
                and a.buffer == b.buffer and sr._same_address(a, b)]
        slots = [sr._slot(b, loop) for b in same]
        if (any(b.store for b in same) and all(s is not None for s in slots)
                and any(s is not None and s == b.op for s, b in zip(slots, same))
                and not any(may_conflict(a, b) for b in accesses if b not in same)):
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
    for src in (MATMUL.replace("64", "128"), CONV):   # (the 128 one has overlapping tiles)
        mod = parse(src)
        ctx = TuneContext(mod, TARGET, search_strategy="replay-trace", rand_state=5)
        spaces = ctx.generate_design_space()
        ctx.search_strategy.pre_tuning(4, 4, spaces)
        for k in range(4):
            cand = ctx.search_strategy.sample(spaces[k % len(spaces)].trace)
            if cand is not None:
                tir_mlir.build(cand.mod, target=TARGET)
    assert sum(seen) > 10
