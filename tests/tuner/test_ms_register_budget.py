"""The evolutionary search's register budget (meta_schedule/register_budget.py) and
MutateTileShape: random samples and mutants whose accumulator tile must spill are not drawn,
so the conv2d's well-formed wide-row tiles (issue 28) are drawn several times as often, and a
tile of 8 filters x 8 lanes reaches 2 filters x 56 lanes in one mutation."""

import random
import sys
from pathlib import Path

import numpy as np
import pytest

import tir_mlir
import tir_mlir.meta_schedule as ms
from schedule_check import parse
from numpy_refs import conv2d_inputs, conv2d_numpy
from tir_mlir.meta_schedule.mutator import MutateTileShape
from tir_mlir.meta_schedule.mutator.mutate_tile_shape import retile
from tir_mlir.meta_schedule.register_budget import RegisterBudget
from tir_mlir.meta_schedule.search_strategy.replay_jobs import REGISTER_BUDGET, ReplayTask, replay
from tir_mlir.meta_schedule.tune_context import TuneContext

sys.path.insert(0, str(Path(__file__).parent.parent.parent / "benchmarks"))
from programs import conv2d_tvmscript  # noqa: E402

AVX512 = "llvm -mcpu=skylake-avx512 -num-cores=2"
AVX2 = "llvm -mcpu=haswell -num-cores=2"
C, HW, F = 16, 56, 16
ADD = """
@T.prim_func
def add(A: T.Buffer((64, 256), "float32"), B: T.Buffer((64, 256), "float32"),
        C: T.Buffer((64, 256), "float32")):
    for i, j in T.grid(64, 256):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]
"""


def _conv_sketches(target: str):
    mod = parse(conv2d_tvmscript(1, C, HW, F, 3))
    ctx = TuneContext(mod, target, search_strategy="replay-trace", rand_state=0)
    return mod, [s.trace for s in ctx.generate_design_space()]


def _with_tiles(trace, tiles: dict):
    """The trace with the decisions of its k-th sample_perfect_tile set for each k in tiles,
    the pad computed at the root (a location's decision depends on the tiles)."""
    for inst in [i for i in trace.insts if i.name == "sample_compute_location"]:
        trace = trace.with_decision(inst, -1)
    for k, decision in tiles.items():
        inst = [i for i in trace.insts if i.name == "sample_perfect_tile"][k]
        trace = trace.with_decision(inst, decision)
    return trace


def _tile_decisions(sch) -> list:
    return [i.args["decision"] for i in sch.trace.insts if i.name == "sample_perfect_tile"]


def test_budget_of_target():
    assert RegisterBudget.of_target(AVX512) == RegisterBudget(24, 512)
    assert RegisterBudget.of_target(AVX2) == RegisterBudget(12, 256)
    assert RegisterBudget.of_target("cuda") is None
    assert RegisterBudget(24, 512).lanes("float32") == 16
    assert RegisterBudget(12, 256).lanes("float64") == 4


def test_accumulator_registers_of_a_tile():
    mod, sketches = _conv_sketches(AVX512)
    # f 1x1x4x4, y 28x1x2x1, x 1x1x1x56: 4 filters x 1 row x 4 zmm (56 lanes) = 16 registers
    row = _with_tiles(sketches[0], {1: [1, 1, 4, 4], 2: [28, 1, 2, 1], 3: [1, 1, 1, 56]})
    sch = replay(mod, [], row, 0)
    assert not isinstance(sch, str), sch
    assert RegisterBudget(24, 512).tiles(sch) == [("conv", 16)]
    assert RegisterBudget(12, 256).tiles(sch) == [("conv", 28)]  # 4 x 7 ymm
    assert replay(mod, [], row, 0, RegisterBudget(12, 256)) == REGISTER_BUDGET
    # the check reads the IR: nothing is added to the trace (the search's keys are its text)
    checked = replay(mod, [], row, 0, RegisterBudget(24, 512))
    assert not isinstance(checked, str) and str(checked.trace) == str(sch.trace)
    # f 1x1x2x8, y 14x1x2x2, x 1x1x1x56: 8 x 2 x 4 = 64 registers
    spill = _with_tiles(sketches[0], {1: [1, 1, 2, 8], 2: [14, 1, 2, 2], 3: [1, 1, 1, 56]})
    assert RegisterBudget(24, 512).tiles(replay(mod, [], spill, 0)) == [("conv", 64)]
    assert replay(mod, [], spill, 0, RegisterBudget(24, 512)) == REGISTER_BUDGET


@pytest.mark.parametrize("target", [AVX512, AVX2])
def test_samples_never_exceed_the_budget(target):
    mod, sketches = _conv_sketches(target)
    budget = RegisterBudget.of_target(target)
    assert budget is not None
    task = ReplayTask(mod, sketches, [], [], None, budget)
    for seed in range(30):
        sch = task.sample(seed % len(sketches), seed)
        assert not isinstance(sch, str), sch
        assert all(regs <= budget.registers for _, regs in budget.tiles(sch))


def test_budget_draws_more_well_formed_wide_rows():
    """Rows of 28 or 56 lanes within the budget: 2.5% of the unbudgeted samples of the
    conv2d's sketches (200 seeds), 8.5% of the budgeted ones."""
    mod, sketches = _conv_sketches(AVX512)
    budget = RegisterBudget(24, 512)
    shares = []
    for task in (
        ReplayTask(mod, sketches, [], [], None),
        ReplayTask(mod, sketches, [], [], None, budget),
    ):
        good = 0
        for seed in range(200):
            sch = task.sample(seed % len(sketches), seed)
            x_inner = _tile_decisions(sch)[3][-1]
            good += x_inner >= 28 and all(r <= budget.registers for _, r in budget.tiles(sch))
        shares.append(good / 200)
    assert shares[0] < 0.05 and shares[1] > 0.07 and shares[1] > 3 * shares[0], shares


def test_retile_keeps_the_extent():
    rng = random.Random(0)
    for _ in range(50):
        out = retile([1, 1, 7, 8], 56, rng)
        assert out[-1] == 56 and np.prod(out) == 56
        out = retile([1, 2, 4, 8], 2, rng)
        assert out[-1] == 2 and np.prod(out) == 64
    assert retile([3, 1, 1, 4], 6, rng) == [1, 1, 2, 6]  # 2 given up, 3 taken


def test_tile_shape_reaches_wide_rows_in_one_move():
    """From 8 filters x 2 rows x 8 lanes (16 ymm), one move reaches rows of 28 or 56 lanes
    within the budget (e.g. 2 filters x 2 rows x 56 lanes: 16 zmm), only two spatial loops'
    tiles changed."""
    mod, sketches = _conv_sketches(AVX512)
    start = _with_tiles(sketches[0], {1: [1, 1, 2, 8], 2: [14, 1, 2, 2], 3: [1, 1, 7, 8]})
    before = [i.args["decision"] for i in start.insts if i.name == "sample_perfect_tile"]
    budget = RegisterBudget(24, 512)
    reached = []
    for seed in range(300):
        child = MutateTileShape().apply(start, seed)
        if child is None:
            continue
        after = [i.args["decision"] for i in child.insts if i.name == "sample_perfect_tile"]
        changed = [k for k, (a, b) in enumerate(zip(before, after)) if a != b]
        assert len(changed) == 2, (before, after)
        for k in changed:
            assert np.prod(after[k]) == np.prod(before[k])
        assert all(k in (1, 2, 3) for k in changed) or all(k in (4, 5, 6) for k in changed)
        if after[3][-1] >= 28:
            sch = replay(mod, [], child, 0, budget)
            if not isinstance(sch, str):
                reached.append(after)
    assert len(reached) >= 3, reached


def test_short_tune_is_within_budget_and_correct(tmp_path):
    """A short evolutionary tune of a small conv2d: every measured candidate's tile fits the
    budget, and the best computes numpy's numbers."""
    c, hw, f = 8, 14, 16
    mod = parse(conv2d_tvmscript(1, c, hw, f, 3))
    target = "llvm -num-cores=2"
    db = ms.tune_tir(
        mod,
        target,
        str(tmp_path),
        max_trials_global=12,
        num_trials_per_iter=6,
        strategy=ms.search_strategy.EvolutionarySearch(population_size=16, genetic_num_iters=2),
        seed=0,
    )
    budget = RegisterBudget.of_target(target)
    assert budget is not None
    records = [r for r in db.get_all_tuning_records() if r.trace.insts]
    assert records
    for r in records:
        sch = replay(mod, [], r.trace.without_postproc(), 0)
        assert all(regs <= budget.registers for _, regs in budget.tiles(sch)), r.trace
    sch = ms.tir_integration.compile_tir(db, mod, target)
    x, w, out = conv2d_inputs(c, hw, f)
    tir_mlir.build(sch.mod)["conv2d"](x, w, out)
    np.testing.assert_allclose(out, conv2d_numpy(x, w), rtol=1e-4, atol=1e-4)


def _matmul_sketches(n: int, target: str):
    from programs import matmul_tvmscript

    mod = parse(matmul_tvmscript(n))
    ctx = TuneContext(mod, target, search_strategy="replay-trace", rand_state=0)
    return mod, [s.trace for s in ctx.generate_design_space()]


def _whole_k(sch, n: int) -> bool:
    return _tile_decisions(sch)[2] == [1, n]


def test_packing_points_fill_the_budget_over_the_whole_reduction():
    """A packing point's register tile takes half the budget or more, fills a vector and
    accumulates over all of `k`: the 8 x 32 tile over k 1x512 is one; the same tile over k
    4x128, a 16 x 1 column and a 2 x 16 tile are not."""
    mod, sketches = _matmul_sketches(512, AVX512)
    budget = RegisterBudget(24, 512)

    def point(i, j, k):
        sch = replay(mod, [], _with_tiles(sketches[0], {0: i, 1: j, 2: k}), 0)
        assert not isinstance(sch, str), sch
        return sch

    assert budget.packs(point([2, 1, 32, 8], [1, 4, 4, 32], [1, 512]))
    assert not budget.packs(point([2, 1, 32, 8], [1, 4, 4, 32], [4, 128]))
    assert not budget.packs(point([2, 1, 16, 16], [32, 4, 4, 1], [1, 512]))
    assert not budget.packs(point([2, 8, 16, 2], [1, 4, 8, 16], [1, 512]))
    task = ReplayTask(mod, sketches, [], [], None, budget)
    for seed in range(6):
        sch = task.packing_point(seed % len(sketches), seed)
        assert not isinstance(sch, str), sch
        assert budget.packs(sch) and _whole_k(sch, 512), _tile_decisions(sch)
        assert all(12 <= regs <= 24 for _, regs in budget.tiles(sch))
    assert ReplayTask(mod, sketches, [], [], None).packing_point(0, 1) == "NoPackingPoint"


def test_a_sketch_without_a_tiled_block_has_no_packing_point(monkeypatch):
    """A sketch without a multi-level tile (an element-wise program) has no packing point:
    found after one draw, not after PACKING_DRAWS (a task of a model pays that per point)."""
    from tir_mlir.meta_schedule.search_strategy import replay_jobs

    mod = parse(ADD)
    ctx = TuneContext(mod, AVX512, search_strategy="replay-trace", rand_state=0)
    sketches = [s.trace for s in ctx.generate_design_space()]
    draws = []
    applied = replay_jobs._applied
    monkeypatch.setattr(replay_jobs, "_applied", lambda *a: draws.append(1) or applied(*a))
    task = ReplayTask(mod, sketches, [], [], None, RegisterBudget(24, 512))
    assert task.packing_point(0, 1) == "NoPackingPoint" and len(draws) == 1


def test_the_first_round_measures_packing_points():
    """The search's first round (a model that cannot rank yet) measures packing_share of its
    candidates from packing points: with it 4 or more of 32 tile the 1024 matmul's whole `k`
    into registers that fill half the budget; without it (the random walks alone) at most
    one does."""
    from programs import matmul_tvmscript

    mod = parse(matmul_tvmscript(1024))
    budget = RegisterBudget.of_target(AVX512)
    assert budget is not None
    counts = []
    for share in (0.125, 0.0):
        search = ms.search_strategy.EvolutionarySearch(packing_share=share)
        ctx = TuneContext(mod, AVX512, search_strategy=search, rand_state=3)
        model = ms.cost_model.RandomModel(seed=0)  # (cannot rank: a first round)
        search.pre_tuning(32, 32, ctx.generate_design_space(), None, model)
        cands = search.generate_measure_candidates()
        assert cands is not None and len(cands) == 32
        scheds = [replay(mod, [], c.sch.trace.without_postproc(), 0) for c in cands]
        counts.append(sum(budget.packs(s) and _whole_k(s, 1024) for s in scheds))
    assert counts[0] >= 4 and counts[1] <= 1, counts
