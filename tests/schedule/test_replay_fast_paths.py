"""The shortcuts that make trusted trace replay fast give what the general code gives: the
linear path of `index.from_affine`, the plain-variable path of `LoopSpace.split`, the index
walked once for the handles compute_at erases; and a trusted replay with a changed decision
still builds the checked program, or raises ScheduleError when the decision is illegal."""

import random
from pathlib import Path

import pytest
from mlir import ir

from schedule_check import parse
from tir_mlir import Schedule, ScheduleError
from tir_mlir.context import get_context
from tir_mlir.meta_schedule.tune_context import TuneContext
from tir_mlir.analysis import index
from tir_mlir.analysis.index import Lin
from tir_mlir.analysis.region_cover import LoopSpace

PROGRAMS = Path(__file__).parent.parent / "data" / "programs"


def _random_linear(rng, ndims):
    """A random linear AffineExpr over ndims dims (dims may repeat: terms can cancel)."""

    def leaf():
        if rng.random() < 0.2:
            return ir.AffineConstantExpr.get(rng.randint(-5, 5))
        return ir.AffineDimExpr.get(rng.randrange(ndims))

    def expr(depth):
        if depth == 0 or rng.random() < 0.3:
            return leaf()
        if rng.random() < 0.35:
            return expr(depth - 1) * rng.choice([-3, -1, 2, 4, 16])
        return expr(depth - 1) + expr(depth - 1)

    return expr(4)


def _random_dim_lin(rng, nvars):
    """What a dim stands for: a variable (maybe scaled and shifted), sometimes a floordiv
    atom or a sum sharing variables with other dims."""
    r = rng.random()
    v = rng.randrange(nvars)
    if r < 0.6:
        return index.var(v).scale(rng.choice([1, 1, 2, -1])) + index.const(rng.randint(0, 3))
    if r < 0.8:
        return Lin(((("div", index.var(v), 4), 1),))
    return index.var(v) + index.var(rng.randrange(nvars))


def test_linear_from_affine_matches_the_recursive_conversion(monkeypatch):
    rng = random.Random(0)
    with get_context():
        cases = []
        for _ in range(400):
            ndims = rng.randint(1, 5)
            dims = [_random_dim_lin(rng, 6) for _ in range(ndims)]
            cases.append((_random_linear(rng, ndims), dims))
        ranges = {k: (0, 7) for k in range(6)}
        fast = [index.from_affine(e, dims, ranges) for e, dims in cases]
        # (the shortcut must be taken, and turned down, often enough to mean something)
        taken = sum(index._linear_of(e, d) is not None for e, d in cases)
        monkeypatch.setattr(index, "_linear_of", lambda expr, dims: None)
        slow = [index.from_affine(e, dims, ranges) for e, dims in cases]
    assert fast == slow
    assert 100 < taken < 390, taken


def test_split_of_plain_variables_matches_the_term_by_term_split():
    rng = random.Random(1)
    space = LoopSpace([])
    space.n_outer = 3
    for k in range(6):  # vars 0-2 outer (var 1 of extent 1), 3-5 inner
        space.values.append(None)
        space.ranges[k] = (0, 0) if k == 1 else (rng.randint(0, 2), rng.randint(3, 9))
    for relaxed in (frozenset(), frozenset({2})):
        space.relaxed = relaxed
        for _ in range(300):
            e = Lin()
            for _ in range(rng.randint(0, 5)):
                e = e + index.var(rng.randrange(6)).scale(rng.choice([-2, -1, 1, 3]))
            e = e + index.const(rng.randint(-4, 4))
            assert space._split_plain(e) == space._split_terms(e)
            assert space.split(e) == space._split_terms(e)


def test_compute_at_consumes_the_handles_of_the_loops_it_erased():
    mod = parse((PROGRAMS / "conv2d_pad.tir").read_text())
    for trusted in (False, True):
        sch = Schedule(mod)
        with sch.trusted_mode() if trusted else _nothing():
            pad = sch.get_block("Apad")
            pad_loops = sch.get_loops(pad)
            loops = sch.get_loops(sch.get_block("B"))
            sch.compute_at(pad, loops[2])
            with pytest.raises(ScheduleError, match="consumed by compute_at"):
                sch.get(pad_loops[1])
            # under n, f, y: one loop per non-unit iter var of the region (c, h, w)
            assert [sch.get(lp).loop_var.name for lp in sch.get_loops(pad)] == [
                "n",
                "f",
                "y",
                "ax0",
                "ax1",
                "ax2",
            ]


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _matmul_candidate(seed=0):
    mod = parse((PROGRAMS / "matmul.tir").read_text())
    ctx = TuneContext(mod, "llvm -num-cores=2", search_strategy="replay-trace", rand_state=seed)
    spaces = ctx.generate_design_space()
    ctx.search_strategy.pre_tuning(4, 4, spaces)
    cand = None
    while cand is None:
        cand = ctx.search_strategy.sample(spaces[0].trace)
    return mod, cand.trace.without_postproc()


def _tiles(trace):
    return [i for i in trace.insts if i.name == "sample_perfect_tile"]


def test_trusted_replay_of_changed_decisions_builds_the_checked_program():
    mod, trace = _matmul_candidate()
    inst = _tiles(trace)[0]
    extent = 1
    for f in trace.get_decision(inst):
        extent *= f
    new = (
        [1] * (len(trace.get_decision(inst)) - 2) + [extent // 2, 2]
        if extent % 2 == 0
        else [1] * (len(trace.get_decision(inst)) - 1) + [extent]
    )
    changed = trace.with_decision(inst, new)
    checked, trusted = Schedule(mod), Schedule(mod)
    changed.apply_to_schedule(checked)
    changed.apply_to_schedule(trusted, trusted=True)
    assert str(trusted.mod) == str(checked.mod)
    assert str(trusted.mod) != str(_replayed(mod, trace))


def _replayed(mod, trace):
    sch = Schedule(mod)
    trace.apply_to_schedule(sch, trusted=True)
    return sch.mod


def test_trusted_replay_of_an_illegal_decision_raises_schedule_error():
    mod, trace = _matmul_candidate()
    inst = _tiles(trace)[0]
    short = [1] * (len(trace.get_decision(inst)) - 1) + [3]  # product 3 < the extent
    changed = trace.with_decision(inst, short)
    for trusted in (False, True):
        with pytest.raises(ScheduleError, match="multiplies to 3"):
            changed.apply_to_schedule(Schedule(mod), trusted=trusted)


def test_precedes_is_the_order_of_a_walk():
    from tir_mlir.ir.ir_walk import walk_all
    from tir_mlir.passes.schedule.compute_at import _precedes

    mod, trace = _matmul_candidate()
    sch = Schedule(mod)
    trace.apply_to_schedule(sch)
    rng = random.Random(2)
    with get_context():
        for func in sch.mod.functions.values():
            ops = [
                o
                for o in walk_all(func)
                if o.name in ("affine.for", "tir.block", "memref.store", "memref.load")
            ]
            assert len(ops) > 10
            for _ in range(300):
                i, j = rng.sample(range(len(ops)), 2)
                assert _precedes(ops[i], ops[j]) == (i < j)


@pytest.mark.parametrize("kind", ["compute_at", "reverse_compute_at"])
def test_compute_at_keeps_the_index_of_its_lookups_current(kind, monkeypatch):
    """compute_at / reverse_compute_at keep the schedule's op index current as they erase
    and recreate ops: no walk for the handles they consumed, and the index stays the
    module's (sid -> op) for the primitives after them."""
    from tir_mlir.analysis import op_index
    from tir_mlir.analysis.op_index import OpIndex

    for trusted in (False, True):
        if kind == "compute_at":
            sch = Schedule(parse((PROGRAMS / "conv2d_pad.tir").read_text()))
            moved = sch.get_block("Apad")
            gone = sch.get_loops(moved)
            at = sch.split(sch.get_loops(sch.get_block("B"))[2], [None, 7])[0]
        else:
            sch = Schedule(parse((PROGRAMS / "matmul.tir").read_text()))
            block = sch.get_block("C")
            at = sch.split(sch.get_loops(block)[1], [None, 16])[0]
            moved = sch.cache_write(block, 0, "local")
            gone = sch.get_loops(moved)
        with sch.trusted_mode() if trusted else _nothing():
            before = sch._rw.index
            walks = []
            monkeypatch.setattr(op_index, "CHECK", False)  # (its check walks: below)
            monkeypatch.setattr(
                OpIndex, "_walk", lambda self, orig=OpIndex._walk: walks.append(1) or orig(self)
            )
            getattr(sch, kind)(moved, at)
            monkeypatch.undo()
            assert walks == [] and sch._rw.index is before
            assert sch._rw.index.stale() is None
            with pytest.raises(ScheduleError, match=f"consumed by {kind}"):
                sch.get(gone[-1])
            assert sch.get(at) is not None and sch.get(moved) is not None


def test_a_replayed_sketch_walks_the_module_once(monkeypatch):
    """Every primitive keeps the op index (the rewrites report what they erase and recreate):
    replaying a tuning candidate walks the module once, when the schedule is made."""
    from tir_mlir.analysis import op_index
    from tir_mlir.analysis.op_index import OpIndex

    mod, trace = _matmul_candidate()
    monkeypatch.setattr(op_index, "CHECK", False)  # (its check walks)
    for trusted in (False, True):
        walks = []
        monkeypatch.setattr(
            OpIndex, "_walk", lambda self, orig=OpIndex._walk: walks.append(1) or orig(self)
        )
        sch = Schedule(mod)
        trace.apply_to_schedule(sch, trusted=trusted)
        monkeypatch.undo()
        monkeypatch.setattr(op_index, "CHECK", False)
        assert len(walks) == 1 and sch._rw.index.stale() is None
