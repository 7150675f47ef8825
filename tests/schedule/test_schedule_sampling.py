"""Sampling instructions: distributions, determinism under a seed, decisions in the trace
(printed, JSON), replay with changed decisions, numerics, bad decisions, and a trace
sampled and printed by TVM 0.21 replayed here."""

import collections
import json

import pytest

from schedule_check import check_numerics, check_replay, parse
from tir_mlir import Schedule, ScheduleError, Trace
from workloads import matmul

MATMUL = matmul(64)

PRODUCER = """
@T.prim_func
def main(A: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
    B = T.alloc_buffer((32, 32))
    for i, j in T.grid(32, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(32, 32):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""


def _tiled(seed, decision=None):
    sch = Schedule(parse(MATMUL), seed=seed)
    i, j, k = sch.get_loops(sch.get_block("C"))
    factors = sch.sample_perfect_tile(i, n=3, max_innermost_factor=8, decision=decision)
    return sch, factors, sch.split(i, factors)


def test_perfect_tile_distribution_and_constraints():
    seen = collections.Counter()
    for seed in range(300):
        sch, factors, _ = _tiled(seed)
        dec = [sch.get(f) for f in factors]
        assert dec[0] * dec[1] * dec[2] == 64 and dec[2] <= 8
        seen[tuple(dec)] += 1
    # every innermost factor allowed (1..8, divisors of 64) occurs; many tilings are drawn
    assert {d[2] for d in seen} == {1, 2, 4, 8}
    assert len(seen) >= 15


def test_seed_determinism_and_trace_decision():
    a, fa, _ = _tiled(7)
    b, fb, _ = _tiled(7)
    assert [a.get(f) for f in fa] == [b.get(f) for f in fb]
    dec = [a.get(f) for f in fa]
    line = str(a.trace).splitlines()[4]
    assert line == (
        f"  v4, v5, v6 = sch.sample_perfect_tile(loop=l1, n=3, "
        f"max_innermost_factor=8, decision={dec})"
    )
    assert a.trace.decisions == {2: dec}
    assert len({tuple(_tiled(s)[0].trace.decisions[2]) for s in range(20)}) > 1


def test_with_decision_replays_the_changed_program():
    sch, factors, loops = _tiled(3)
    inst = sch.trace.insts[2]
    new = sch.trace.with_decision(inst, [2, 4, 8], remove_postproc=True)
    fresh = Schedule(parse(MATMUL))
    new.apply_to_schedule(fresh)
    assert fresh.trace.decisions[2] == [2, 4, 8]
    outer = fresh.get_loops(fresh.get_block("C"))
    assert [fresh.get(lp).extent for lp in outer] == [2, 4, 8, 64, 64]
    check_numerics(parse(MATMUL), fresh.mod, "main")
    # the JSON round trip keeps the changed decision
    back = Trace.from_json(json.loads(json.dumps(new.as_json())))
    assert back.decisions == {2: [2, 4, 8]}
    check_replay(fresh, parse(MATMUL))


def test_bad_decision_is_a_schedule_error():
    with pytest.raises(ScheduleError, match="multiplies to 63"):
        _tiled(0, decision=[7, 9, 1])
    sch = Schedule(parse(MATMUL))
    with pytest.raises(ScheduleError, match="not an index"):
        sch.sample_categorical([1, 2], [0.5, 0.5], decision=5)
    assert len(sch.trace) == 0


def test_categorical_distribution_and_replay():
    counts = collections.Counter()
    sch = Schedule(parse(MATMUL), seed=1)
    for _ in range(2000):
        counts[sch.get(sch.sample_categorical([10, 20, 30], [0.6, 0.3, 0.1]))] += 1
    assert abs(counts[10] / 2000 - 0.6) < 0.05 and abs(counts[30] / 2000 - 0.1) < 0.03
    s = Schedule(parse(MATMUL), seed=2)
    v = s.sample_categorical([0, 16, 64], [1 / 3] * 3)
    s.annotate(s.get_block("C"), "pragma_auto_unroll_max_step", v)
    text = str(s.trace)
    assert f"decision={[0, 16, 64].index(s.get(v))})" in text
    assert "ann_val=v0)" in text
    check_replay(s, parse(MATMUL))


def test_sample_compute_location_decisions():
    mod = parse(PRODUCER)
    results = set()
    for decision in (-1, 0, 1):
        sch = Schedule(mod)
        b = sch.get_block("B")
        loc = sch.sample_compute_location(b, decision=decision)
        sch.compute_at(b, loc)
        results.add(sch.mod.script())
        assert f"decision={decision})" in str(sch.trace)
        check_numerics(mod, sch.mod, "main")
        check_replay(sch, mod)
    assert len(results) == 3  # root (unchanged), under i, under j
    sch = Schedule(mod, seed=0)
    b = sch.get_block("B")
    sch.compute_at(b, sch.sample_compute_location(b, decision=-2))  # inline
    assert 'T.block("B")' not in sch.mod.script()
    check_numerics(mod, sch.mod, "main")


def test_partitioned_tile():
    sch = Schedule(parse(MATMUL), seed=5)
    i = sch.get_loops(sch.get_block("C"))[0]
    for _ in range(30):
        fs = [
            sch.get(v)
            for v in sch.sample_partitioned_tile(i, n=3, partition_pos=1, innerpart_factor=4)
        ]
        assert fs[0] * fs[1] * fs[2] == 64 and (fs[1] * fs[2]) % 4 == 0


def test_fork_seed_and_copy():
    a = Schedule(parse(MATMUL), seed=11)
    b = Schedule(parse(MATMUL), seed=11)
    assert a.fork_seed() == b.fork_seed()
    a.seed(3)
    b.seed(3)
    va = a.sample_categorical(list(range(100)), [1] * 100)
    vb = b.sample_categorical(list(range(100)), [1] * 100)
    assert a.get(va) == b.get(vb)


def _tvm_sampled(tvm):
    """TVM samples and schedules MATMUL (seed 4): its schedule."""
    theirs = tvm.tir.Schedule(tvm.script.from_source(MATMUL), seed=4)
    blk = theirs.get_block("C")
    i, j, k = theirs.get_loops(blk)
    ti = theirs.sample_perfect_tile(i, n=4, max_innermost_factor=16)
    tj = theirs.sample_perfect_tile(j, n=2, max_innermost_factor=16)
    i0, i1, i2, i3 = theirs.split(i, ti)
    j0, j1 = theirs.split(j, tj)
    theirs.reorder(i0, j0, i1, k, i2, j1, i3)
    v = theirs.sample_categorical([0, 16, 64], [0.2, 0.3, 0.5])
    theirs.annotate(blk, "pragma_auto_unroll_max_step", v)
    return theirs


# the trace TVM 0.21 prints for _tvm_sampled (recorded; test_tvm_prints_the_sampled_trace checks it)
TVM_SAMPLED_TRACE = """# from tvm import tir
def apply_trace(sch: tir.Schedule) -> None:
  b0 = sch.get_block(name="C", func_name="main")
  l1, l2, l3 = sch.get_loops(block=b0)
  v4, v5, v6, v7 = sch.sample_perfect_tile(loop=l1, n=4, max_innermost_factor=16, decision=[1, 4, 1, 16])
  v8, v9 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=16, decision=[8, 8])
  l10, l11, l12, l13 = sch.split(loop=l1, factors=[v4, v5, v6, v7], preserve_unit_iters=True, disable_predication=False)
  l14, l15 = sch.split(loop=l2, factors=[v8, v9], preserve_unit_iters=True, disable_predication=False)
  sch.reorder(l10, l14, l11, l3, l12, l15, l13)
  v16 = sch.sample_categorical(candidates=[0, 16, 64], probs=[0.20000000000000001, 0.29999999999999999, 0.5], decision=2)
  sch.annotate(block_or_loop=b0, ann_key="pragma_auto_unroll_max_step", ann_val=v16)"""


def _exec_printed_trace(text):
    """Our schedule after exec'ing a printed trace on it, the way a TVM user replays one."""
    env = {}
    exec(
        compile(
            text.replace("# from tvm import tir", "").replace("tir.Schedule", "object"),
            "<tvm trace>",
            "exec",
        ),
        env,
    )
    ours = Schedule(parse(MATMUL))
    env["apply_trace"](ours)
    return ours


def test_tvm_printed_sampled_trace_replays():
    """TVM's printed trace of a sampled schedule, exec'd on our Schedule, gives the same trace
    and the unscheduled program's numbers."""
    ours = _exec_printed_trace(TVM_SAMPLED_TRACE)
    ours_text = str(ours.trace).replace('func_name="main"', "")
    assert ours_text == TVM_SAMPLED_TRACE.replace('func_name="main"', "")
    check_numerics(parse(MATMUL), ours.mod, "main")


@pytest.mark.tvm
def test_tvm_prints_the_sampled_trace_and_schedules_as_we_replay_it():
    import tvm

    theirs = _tvm_sampled(tvm)
    assert str(theirs.trace) == TVM_SAMPLED_TRACE
    again = tvm.script.from_source(_exec_printed_trace(TVM_SAMPLED_TRACE).mod.script())
    tvm.ir.assert_structural_equal(
        again.with_attr("global_symbol", "main") if hasattr(again, "with_attr") else again,
        theirs.mod["main"],
        map_free_vars=True,
    )


# TVM's tiled_conv2d_with_padding (test_tir_schedule_sampling.py): 22 loops around the conv
TILED_CONV_PAD = """
@T.prim_func
def main(inputs: T.Buffer((1, 224, 224, 3), "float32"), weight: T.Buffer((7, 7, 3, 64), "float32"), conv2d_nhwc: T.Buffer((1, 112, 112, 64), "float32")):
    PadInput = T.alloc_buffer((1, 230, 230, 3))
    for i0, i1, i2, i3 in T.grid(1, 230, 230, 3):
        with T.block("PadInput"):
            i0_1, i1_1, i2_1, i3_1 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            PadInput[i0_1, i1_1, i2_1, i3_1] = T.if_then_else(3 <= i1_1 and i1_1 < 227 and 3 <= i2_1 and i2_1 < 227, inputs[i0_1, i1_1 - 3, i2_1 - 3, i3_1], T.float32(0))
    for i0_0, i1_0, i2_0, i3_0, i0_1_1, i1_1_1, i2_1_1, i3_1_1, i4_0, i5_0, i6_0, i0_2, i1_2, i2_2, i3_2, i4_1, i5_1, i6_1, i0_3, i1_3, i2_3, i3_3 in T.grid(1, 1, 4, 1, 1, 2, 4, 1, 7, 7, 1, 1, 1, 1, 1, 1, 1, 3, 1, 56, 7, 64):
        with T.block("conv2d_nhwc"):
            n = T.axis.spatial(1, 0)
            h = T.axis.spatial(112, i1_1_1 * 56 + i1_3)
            w = T.axis.spatial(112, i2_0 * 28 + i2_1_1 * 7 + i2_3)
            co, rh, rw, rc = T.axis.remap("SRRR", [i3_3, i4_0, i5_0, i6_1])
            with T.init():
                conv2d_nhwc[n, h, w, co] = T.float32(0)
            conv2d_nhwc[n, h, w, co] = conv2d_nhwc[n, h, w, co] + PadInput[n, h * 2 + rh, w * 2 + rw, co // 64 * 3 + rc] * weight[rh, rw, rc, co]
"""


def test_sample_compute_location_has_tvms_candidates():
    """TVM's CollectComputeLocation: inline (-2), the root (-1), and the consumer's loops by
    their position among its loops: unit loops skipped, the reduction loops 8, 9 and 17
    kept, the data-parallel loops after them (19-21) not; drawn uniformly (TVM's test)."""
    sch = Schedule(parse(TILED_CONV_PAD), seed=42)
    assert sch.compute_location_decisions(sch.get_block("PadInput")) == [-2, -1, 2, 5, 6, 8, 9, 17]
    counts = collections.Counter()
    for _ in range(400):
        sch.sample_compute_location(sch.get_block("PadInput"))
        counts[sch.trace.insts[-1].args["decision"]] += 1
    assert sorted(counts) == [-2, -1, 2, 5, 6, 8, 9, 17]
    assert all(abs(c / 400 - 1 / 8) < 0.06 for c in counts.values())
    with pytest.raises(
        ScheduleError,
        match=r"decision 3 is not one of the block's "
        r"locations \[-2, -1, 2, 5, 6, 8, 9, 17\]",
    ):
        sch.sample_compute_location(sch.get_block("PadInput"), decision=3)
