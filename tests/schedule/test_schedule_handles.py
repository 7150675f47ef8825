"""A block/loop handle belongs to the Schedule that made it (and that schedule's copies)."""

import pytest

from schedule_check import parse
from workloads import matmul
from tir_mlir import Schedule, ScheduleError

MATMUL = matmul(16, noalias=True)


def test_handle_from_another_schedule_is_refused():
    mod = parse(MATMUL)
    s1, s2 = Schedule(mod), Schedule(mod)
    i1, j1, k1 = s1.get_loops(s1.get_block("C"))
    s2.get_loops(s2.get_block("C"))
    for call in (
        lambda: s2.split(j1, factors=[None, 4]),
        lambda: s2.get_loops(s1.get_block("C")),
        lambda: s2.reorder(k1, i1),
        lambda: s2.parallel(i1),
    ):
        with pytest.raises(ScheduleError, match="belongs to another Schedule"):
            call()
    assert s2.mod.script() == mod.script()
    assert len(s2.trace) == 2


def test_handle_stays_valid_in_a_copy():
    s1 = Schedule(parse(MATMUL))
    i, j, k = s1.get_loops(s1.get_block("C"))
    s2 = s1.copy()
    s2.split(j, factors=[None, 4])
    s1.split(j, factors=[None, 8])
    assert "T.grid(16, 4, 4, 16)" in s2.mod.script()
    assert "T.grid(16, 2, 8, 16)" in s1.mod.script()
