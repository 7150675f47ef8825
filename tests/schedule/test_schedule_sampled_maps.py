"""An index map over sampled values (TVM's `transform_layout(..., lambda i, j: (i, j // (j1 *
j2), j % (j1 * j2)))` after `sample_perfect_tile`): ExprRV arithmetic, read on the sampled
values when the map is applied; the trace records those constants and replays (also through
JSON); a value from another schedule is refused."""

import json

import pytest

import tir_mlir
from schedule_check import check_numerics, parse
from tir_mlir import Schedule
from tir_mlir.errors import ScheduleError
from tir_mlir.schedule.handles import RVExpr

SRC = """
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128))
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""


def _tiled_layout(sch):
    b = sch.get_block("B")
    _, j1, j2 = sch.sample_perfect_tile(sch.get_loops(b)[-1], 3, decision=[4, 8, 4])
    sch.transform_layout(b, ("write", 0), lambda i, j: (i, j // (j1 * j2), j % (j1 * j2)))
    return j1, j2


def test_map_over_sampled_values():
    mod = parse(SRC)
    sch = Schedule(mod)
    _tiled_layout(sch)
    text = sch.mod.script()
    assert "B = T.alloc_buffer((128, 4, 32))" in text
    assert "B[vi, vj // 32, vj % 32] = A[vi, vj] * T.float32(2.0)" in text
    assert str(sch.trace).endswith(
        "index_map=lambda i, j: (i, j // 32, j % 32,), pad_value=None, "
        "assume_injective_transform=False)"
    )
    check_numerics(mod, sch.mod, "main")
    replay = Schedule(mod)
    tir_mlir.Trace.from_json(json.dumps(sch.trace.as_json())).apply_to_schedule(replay)
    assert replay.mod.script() == text


def test_value_arithmetic():
    sch = Schedule(parse(SRC))
    j1, j2 = _tiled_layout(sch)
    e = (j1 * j2 + 1) // 3 - j1 % 5
    assert isinstance(e, RVExpr)
    assert e.evaluate(sch.get) == (8 * 4 + 1) // 3 - 8 % 5
    assert (2 - j1).evaluate(sch.get) == -6


def test_a_value_of_another_schedule_is_refused():
    mod = parse(SRC)
    j1, j2 = _tiled_layout(Schedule(mod))
    sch = Schedule(mod)
    before = sch.mod.script()
    with pytest.raises(ScheduleError, match="does not belong to this schedule"):
        sch.transform_layout(
            sch.get_block("B"), ("write", 0), lambda i, j: (i, j // (j1 * j2), j % (j1 * j2))
        )
    assert sch.mod.script() == before
