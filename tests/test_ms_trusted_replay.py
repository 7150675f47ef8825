"""Trusted replay (the search's fast mode: no per-step snapshot or verification) builds the
same program as the checked replay users get."""
from pathlib import Path

import pytest

from schedule_check import parse
from tir_mlir import Schedule
from tir_mlir.meta_schedule.tune_context import TuneContext

PROGRAMS = Path(__file__).parent / "data" / "programs"


@pytest.mark.parametrize("name", ["matmul", "conv2d_pad", "softmax", "layernorm"])
def test_trusted_replay_gives_the_checked_program(name):
    mod = parse((PROGRAMS / f"{name}.tir").read_text())
    ctx = TuneContext(mod, "llvm -num-cores=2", search_strategy="replay-trace", rand_state=1)
    spaces = ctx.generate_design_space()
    strategy = ctx.search_strategy
    strategy.pre_tuning(8, 8, spaces)
    compared = 0
    for k in range(6):
        cand = strategy.sample(spaces[k % len(spaces)].trace)   # trusted, with postprocessors
        if cand is None:
            continue
        for remove_postproc in (True, False):
            checked, trusted = Schedule(mod), Schedule(mod)
            cand.trace.apply_to_schedule(checked, remove_postproc=remove_postproc)
            cand.trace.apply_to_schedule(trusted, remove_postproc=remove_postproc,
                                         trusted=True)
            assert str(trusted.mod) == str(checked.mod)
            assert str(trusted.trace) == str(checked.trace)
        assert str(checked.mod) == str(cand.mod)
        compared += 1
    assert compared >= 3

