"""Trusted replay (the search's fast mode: no per-step snapshot or verification) builds the
same program as the checked replay users get."""

from pathlib import Path

import pytest

from schedule_check import parse
from tir_mlir import Schedule
from tir_mlir.meta_schedule.tune_context import TuneContext

PROGRAMS = Path(__file__).parent.parent / "data" / "programs"


@pytest.mark.parametrize(
    "name",
    [
        "matmul",
        "conv2d_pad",
        "softmax",
        "layernorm",
        "batch_matmul",
        "depthwise_conv2d",
        "conv2d_nhwc",
        "maxpool2d",
        "int8_matmul",
    ],
)
def test_trusted_replay_gives_the_checked_program(name):
    mod = parse((PROGRAMS / f"{name}.tir").read_text())
    ctx = TuneContext(mod, "llvm -num-cores=2", search_strategy="replay-trace", rand_state=1)
    spaces = ctx.generate_design_space()
    strategy = ctx.search_strategy
    strategy.pre_tuning(8, 8, spaces)
    compared = 0
    for k in range(6):
        cand = strategy.sample(spaces[k % len(spaces)].trace)  # trusted, with postprocessors
        if cand is None:
            continue
        for remove_postproc in (True, False):
            checked, trusted = Schedule(mod), Schedule(mod)
            cand.trace.apply_to_schedule(checked, remove_postproc=remove_postproc)
            cand.trace.apply_to_schedule(trusted, remove_postproc=remove_postproc, trusted=True)
            assert str(trusted.mod) == str(checked.mod)
            assert trusted.mod.script() == checked.mod.script()
            assert str(trusted.trace) == str(checked.trace)
        assert str(checked.mod) == str(cand.mod)
        compared += 1
    assert compared >= 3


def test_trusted_replay_of_tensorized_reuse_write_candidates():
    from tensorize_tuning import MM, _reuse_context

    mod = parse(MM.format(n=64))
    ctx = _reuse_context(mod, seed=2)
    spaces = ctx.generate_design_space()
    ctx.search_strategy.pre_tuning(3, 3, spaces)
    for space in spaces:
        cand = ctx.search_strategy.sample(space.trace)
        assert cand is not None
        checked, trusted = Schedule(mod), Schedule(mod)
        cand.trace.apply_to_schedule(checked, remove_postproc=False)
        cand.trace.apply_to_schedule(trusted, remove_postproc=False, trusted=True)
        assert trusted.mod.script() == checked.mod.script() == cand.mod.script()
