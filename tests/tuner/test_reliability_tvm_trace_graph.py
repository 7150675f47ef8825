"""A TVM JSON trace's index map is an object graph from a file: a graph whose nodes are shared
(a DAG that doubles at each level) is expanded with bounded work and a long one refused, and a
cyclic one is a TraceError, not a RecursionError."""

import json
import time

import pytest

from schedule_check import parse
from shared_programs import MATMUL_16 as MM
from tir_mlir import Schedule, Trace
from tir_mlir.errors import TraceError
from tir_mlir.schedule.tvm_trace import to_tvm_json


def _tvm_trace():
    sch = Schedule(parse(MM))
    sch.transform_layout(sch.get_block("C"), ("write", 0), lambda i, j: (j, i))
    return to_tvm_json(sch.trace)


def _with_graph(edit):
    """The TVM trace with its index map graph changed by edit(nodes, final_array_node)."""
    tvm = _tvm_trace()
    graph = json.loads(tvm[0][1][1][1])
    nodes = graph["nodes"]
    final = nodes[int(nodes[graph["root"]]["attrs"]["final_indices"])]
    edit(nodes, final)
    tvm[0][1][1][1] = json.dumps(graph)
    return json.dumps(tvm)


def _add_node(nodes, a, b):
    nodes.append(
        {
            "type_key": "tir.Add",
            "attrs": {"a": str(a), "b": str(b), "dtype": "int32", "span": "null"},
        }
    )
    return len(nodes) - 1


def test_doubling_dag_is_refused_quickly():
    def dag(nodes, final):
        k = final["data"][0]
        for _ in range(30):  # 2**30 leaves if expanded as a tree
            k = _add_node(nodes, k, k)
        final["data"][0] = k

    text = _with_graph(dag)
    assert len(text) < 10000
    start = time.perf_counter()
    with pytest.raises(TraceError, match="longer than 100000 characters"):
        Trace.from_json(text)
    assert time.perf_counter() - start < 5


def test_small_dag_is_expanded():
    def dag(nodes, final):
        k = final["data"][0]
        for _ in range(3):
            k = _add_node(nodes, k, k)
        final["data"][0] = k

    trace = Trace.from_json(_with_graph(dag))
    assert trace.insts[1].args["index_map"].endswith("(j + j + (j + j) + (j + j + (j + j)), i,)")


def test_cyclic_graph_is_a_trace_error():
    def cycle(nodes, final):
        k = _add_node(nodes, 0, 0)
        nodes[k]["attrs"]["a"] = nodes[k]["attrs"]["b"] = str(k)
        final["data"][0] = k

    with pytest.raises(TraceError, match="cycle"):
        Trace.from_json(_with_graph(cycle))


def test_long_chain_is_not_a_recursion_error():
    def chain(nodes, final):
        k = final["data"][0]
        for _ in range(20000):
            k = _add_node(nodes, k, final["data"][1])
        final["data"][0] = k

    with pytest.raises(TraceError, match="longer than|nested too deeply"):
        Trace.from_json(_with_graph(chain))
