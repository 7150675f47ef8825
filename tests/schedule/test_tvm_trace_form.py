"""TVM's JSON trace form without TVM (CI): index maps to TVM's object-graph JSON and back,
and our traces of issue 13's primitives through TVM's form and back to the same program.
(With TVM installed, tests/schedule/test_schedule_tvm_json_traces.py checks TVM reads and writes
them.)"""

import json

import pytest

import tir_mlir
from tir_mlir import Schedule, Trace
from tir_mlir.errors import TraceError
from tir_mlir.schedule.tvm_index_map import lambda_to_tvm, tvm_to_lambda
from tir_mlir.schedule.tvm_trace import from_tvm_json, to_tvm_json

from schedule_cases import block_iters as iters
from schedule_cases import buffer_access as access
from schedule_cases import loop_partition as partition
from schedule_cases import reindex_cache as reindex_cache


@pytest.mark.parametrize(
    "text,pairs",
    [
        ("lambda i, j, k: (i // 4, k, i % 4,)", False),
        ("lambda a, b: (a - (b - 1) * 2, min(a, b), (a + b) // 3,)", False),
        ("lambda a: (a * (-2),)", False),
        ("lambda vi, vj: [(0, 128), (vj, vj + 1)]", True),
    ],
)
def test_index_map_round_trip(text, pairs):
    graph = json.loads(lambda_to_tvm(text, pairs))
    assert graph["nodes"][graph["root"]]["type_key"] == "tir.IndexMap"
    assert tvm_to_lambda(lambda_to_tvm(text, pairs), pairs) == text


@pytest.mark.parametrize(
    "text,match",
    [
        ("lambda i: (i ** 2,)", "not supported"),
        ("(1, 2)", "not a lambda"),
        ("lambda i: (i / 2,)", "not supported"),
    ],
)
def test_index_map_outside_tvm_integer_expressions_refused(text, match):
    with pytest.raises(ValueError, match=match):
        lambda_to_tvm(text)


def test_bad_tvm_index_map_is_a_value_error():
    with pytest.raises(ValueError, match="not a TVM index map"):
        tvm_to_lambda('{"root": 1, "nodes": []}')


CASES = {
    "loop_partition": partition.SCHEDULES[sorted(partition.SCHEDULES)[0]],
    "reindex_cache_read": reindex_cache.SCHEDULES["read_split_map"],
    "annotate_buffer_access": access.SCHEDULES[sorted(access.SCHEDULES)[0]],
    "transform_block_layout": iters.LAYOUTS["split_and_move"],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_trace_through_tvm_form_replays(name):
    src, fn = CASES[name]
    sch = Schedule(tir_mlir.parse(src))
    fn(sch)
    line = json.dumps(to_tvm_json(sch.trace))
    for trace in (from_tvm_json(line), Trace.from_json(line)):
        fresh = Schedule(tir_mlir.parse(src))
        trace.apply_to_schedule(fresh, remove_postproc=False)
        assert fresh.mod.script() == sch.mod.script()
        assert str(fresh.trace) == str(sch.trace)


def test_buffer_by_name_is_recorded_by_index():
    """As TVM: a buffer named in the call is traced as ("read" | "write", index), so the
    trace has TVM's form; a hand-written trace naming it has none."""
    sch = Schedule(tir_mlir.parse(iters.MATMUL))
    sch.reindex(sch.get_block("C"), "A")
    assert to_tvm_json(sch.trace)[0][-1] == ["ReIndex", ["b0"], [0, 0], ["b1"]]
    named = Trace.from_json(
        {
            "insts": [
                {"name": "get_block", "args": {"name": "C", "func_name": "main"}, "outputs": "b0"},
                {
                    "name": "reindex",
                    "args": {"block": {"rv": "b0"}, "buffer": "A"},
                    "outputs": "b1",
                },
            ]
        }
    )
    with pytest.raises(ValueError, match="no TVM JSON form"):
        to_tvm_json(named)


def test_malformed_tvm_trace_is_a_trace_error():
    with pytest.raises(TraceError, match="not a TVM JSON trace"):
        Trace.from_json('[[["ReIndex", ["b0"], [0, 5], ["b1"]]], []]')
