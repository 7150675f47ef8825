"""The trace: TVM's printed format, JSON round trip, replay on a fresh schedule."""

import json

import pytest

from schedule_check import parse
from workloads import matmul
from tir_mlir import Schedule, Trace

MATMUL = matmul(16, noalias=True)


def loops(sch, name="C"):
    return sch.get_loops(sch.get_block(name))


EXPECTED = """# from tvm import tir
def apply_trace(sch: tir.Schedule) -> None:
  b0 = sch.get_block(name="C", func_name="main")
  l1, l2, l3 = sch.get_loops(block=b0)
  l4, l5 = sch.split(loop=l2, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)
  sch.reorder(l4, l3, l5)
  l6 = sch.fuse(l1, l4, preserve_unit_iters=True)
  sch.parallel(loop=l6)
  sch.vectorize(loop=l5)
  sch.unroll(loop=l3)
  sch.annotate(block_or_loop=l6, ann_key="pragma_auto_unroll_max_step", ann_val=16)
  sch.annotate(block_or_loop=b0, ann_key="xx", ann_val="s")
  sch.unannotate(block_or_loop=b0, ann_key="xx")
  l7 = sch.add_unit_loop(block_or_loop=b0)
  sch.bind(loop=l7, thread_axis="threadIdx.x")"""


def schedule(sch):
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    f = sch.fuse(i, j0)
    sch.parallel(f)
    sch.vectorize(j1)
    sch.unroll(k)
    sch.annotate(f, "pragma_auto_unroll_max_step", 16)
    sch.annotate(b, "xx", "s")
    sch.unannotate(b, "xx")
    u = sch.add_unit_loop(b)
    sch.bind(u, "threadIdx.x")


def test_trace_prints_tvm_format():
    sch = Schedule(parse(MATMUL))
    schedule(sch)
    assert str(sch.trace) == EXPECTED


@pytest.mark.tvm
def test_trace_is_tvm_format_exactly():
    """TVM prints the very same trace for the very same schedule."""
    import tvm

    theirs = tvm.tir.Schedule(tvm.script.from_source(MATMUL))
    schedule(theirs)
    assert str(theirs.trace) == EXPECTED


def test_json_roundtrip_and_replay():
    mod = parse(MATMUL)
    sch = Schedule(mod)
    schedule(sch)
    obj = json.loads(json.dumps(sch.trace.as_json()))
    trace = Trace.from_json(obj)
    assert str(trace) == EXPECTED
    assert trace.as_json() == obj
    fresh = Schedule(mod)
    trace.apply_to_schedule(fresh)
    assert fresh.mod.script() == sch.mod.script()
    assert str(fresh.trace) == EXPECTED


def test_failed_primitive_is_not_recorded():
    sch = Schedule(parse(MATMUL))
    i, j, k = loops(sch)
    n = len(sch.trace)
    try:
        sch.vectorize(k)
    except Exception:
        pass
    assert len(sch.trace) == n


def test_handles_survive_rewrites():
    sch = Schedule(parse(MATMUL))
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    sch.split(j, factors=[None, 4])
    sch.reorder(k, i)  # k and i still resolve after split rewrote the block
    assert [sch.get(lp).name for lp in sch.get_loops(b)] == ["k", "j_0", "j_1", "i"]
