"""The everyday schedule generator of the random performance differential
(tests/support/schedule_everyday.py, used by benchmarks/bench_random_vs_tvm.py): its draws are
deterministic, mostly legal on our side, replayable, and keep the numbers (small shapes, no timing)."""

import pytest
from schedule_check import check_numerics, check_replay
from schedule_everyday import draw, nests, schedule_fn, workloads

import tir_mlir
from tir_mlir import Schedule, ScheduleError

SMALL = workloads(small=True)


def test_every_workload_has_its_loop_nests_read():
    for name, src in SMALL.items():
        blocks = nests(src)
        assert blocks, name
        assert src.count("T.block(") == len(blocks), name
    assert [k for _, k in nests(SMALL["softmax256x1024"])[0][1]] == ["S", "R"]


def test_draw_is_deterministic_and_varies_with_the_seed():
    src = SMALL["conv2d_nchw32x28"]
    assert draw(src, 7) == draw(src, 7)
    assert len({draw(src, seed) for seed in range(10)}) >= 8


def test_draws_are_mostly_legal_and_refusals_are_schedule_errors():
    accepted = refused = 0
    for src in SMALL.values():
        mod = tir_mlir.parse(src)
        for seed in range(6):
            try:
                schedule_fn(draw(src, seed))(Schedule(mod))
                accepted += 1
            except ScheduleError:
                refused += 1
    assert accepted >= 0.85 * (accepted + refused)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_a_draw_replays_and_keeps_the_numbers(name):
    """The first draw we accept (of the first few seeds): run again from its code and from its
    trace it gives the same program, which computes what the unscheduled one does."""
    mod = tir_mlir.parse(SMALL[name])
    for seed in range(5):
        code = draw(SMALL[name], seed)
        sch = Schedule(mod)
        try:
            schedule_fn(code)(sch)
        except ScheduleError:
            continue
        again = Schedule(mod)
        schedule_fn(code)(again)
        assert again.mod.script() == sch.mod.script()
        check_replay(sch, mod)
        check_numerics(mod, sch.mod, "main")
        return
    pytest.fail(f"no draw of seeds 0-4 applies to {name}")
