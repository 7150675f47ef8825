"""The CPU rules that shape reductions and their producers as TVM's do: AutoInline's
disallow_op (the llvm default keeps `exp` stored once instead of recomputed in each
consumer) and disallow_if_then_else (a padding block is computed at a loop of the
convolution rather than inlined into its innermost loop), AddRFactor on any long reduction
that is not tiled (a row max or sum), with RandomComputeLocation placing the rfactor block;
TVM's best tuned softmax schedule is in the default design space and computes numpy's
numbers."""

import sys
from pathlib import Path

import numpy as np

import tir_mlir
import tir_mlir.meta_schedule as ms
from schedule_check import check_numerics, parse
from tir_mlir.meta_schedule.tune_context import TuneContext
from tir_mlir.schedule.trace import SAMPLING_INSTRUCTIONS

sys.path.insert(0, str(Path(__file__).parent.parent.parent / "benchmarks"))
from programs import conv2d_tvmscript, softmax_tvmscript  # noqa: E402

TARGET = "llvm -num-cores=2"
SOFTMAX = softmax_tvmscript(64, 256)

ROW_MEAN = """
@T.prim_func
def main(A: T.Buffer((64, 512), "float32"), C: T.Buffer((64,), "float32")):
    s = T.alloc_buffer((64,))
    for i, k in T.grid(64, 512):
        with T.block("s"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                s[vi] = T.float32(0)
            s[vi] = s[vi] + A[vi, vk]
    for i in range(64):
        with T.block("C"):
            vi = T.axis.spatial(64, i)
            C[vi] = s[vi] * T.float32(0.001953125)
"""


def sketches(mod, rules, seed=0):
    space = ms.space_generator.PostOrderApply(sch_rules=rules, postprocs=[], mutator_probs={})
    return ms.generate_design_space(mod, TARGET, space=space, seed=seed)


def test_auto_inline_keeps_a_disallowed_operator():
    mod = parse(SOFTMAX)
    (inlined,) = sketches(mod, [ms.schedule_rule.AutoInline()])
    assert "exp" not in inlined.get_block_names()
    (kept,) = sketches(mod, [ms.schedule_rule.AutoInline(disallow_op=["tir.exp"])])
    assert "exp" in kept.get_block_names()
    (kept,) = sketches(mod, [ms.schedule_rule.AutoInline(disallow_op=["exp"])])
    assert "exp" in kept.get_block_names()
    (other,) = sketches(mod, [ms.schedule_rule.AutoInline(disallow_op=["tir.log"])])
    assert "exp" not in other.get_block_names()


def test_padding_block_is_kept_and_computed_at_the_convolution():
    mod = parse(conv2d_tvmscript(1, 8, 10, 8, 3))
    (inlined,) = sketches(mod, [ms.schedule_rule.AutoInline(disallow_if_then_else=False)])
    assert inlined.get_block_names() == ["conv"]
    (kept,) = sketches(mod, [ms.schedule_rule.AutoInline()])
    assert kept.get_block_names() == ["pad", "conv"]
    spaces = ms.generate_design_space(mod, TARGET, seed=2)
    assert len(spaces) == 3
    for s in spaces:
        trace = str(s.trace)
        assert "compute_inline" not in trace
        assert 'sch.get_block(name="pad", func_name="conv2d")' in trace
        assert "sch.sample_compute_location(block=" in trace
        check_numerics(mod, s.mod, "conv2d")


def test_add_rfactor_on_a_long_row_reduction():
    """64 rows already give 32 parallel jobs; TVM still splits a 512-long reduction that
    MultiLevelTiling does not tile, and places the rfactor block with its consumer."""
    mod = parse(ROW_MEAN)
    rules = [
        ms.schedule_rule.AddRFactor(max_jobs_per_core=16, max_innermost_factor=64),
        ms.schedule_rule.RandomComputeLocation(),
    ]
    spaces = sketches(mod, rules)
    assert len(spaces) == 3
    text = str(spaces[2].trace)
    assert (
        text
        == """\
# from tvm import tir
def apply_trace(sch: tir.Schedule) -> None:
  b0 = sch.get_block(name="s", func_name="main")
  b1 = sch.get_block(name="C", func_name="main")
  b2 = sch.get_block(name="root", func_name="main")
  l3, = sch.get_loops(block=b1)
  l4, l5 = sch.get_loops(block=b0)
  l6, l7 = sch.get_loops(block=b0)
  v8, v9 = sch.sample_perfect_tile(loop=l7, n=2, max_innermost_factor=64, decision=[256, 2])
  l10, l11 = sch.split(loop=l7, factors=[v8, v9], preserve_unit_iters=True, disable_predication=False)
  b12 = sch.rfactor(loop=l11, factor_axis=1)
  sch.annotate(block_or_loop=b0, ann_key="meta_schedule.random_compute_producer", ann_val=1)
  l13, l14 = sch.get_loops(block=b0)
  b15, = sch.get_consumers(block=b0)
  b16, = sch.get_producers(block=b0)
  sch.unannotate(block_or_loop=b0, ann_key="meta_schedule.random_compute_producer")
  l17 = sch.sample_compute_location(block=b0, decision=0)
  sch.compute_at(block=b0, loop=l17, preserve_unit_loops=True, index=-1)
  l18, l19, l20 = sch.get_loops(block=b16)
  b21, = sch.get_consumers(block=b16)
  l22 = sch.sample_compute_location(block=b16, decision=0)
  sch.compute_at(block=b16, loop=l22, preserve_unit_loops=True, index=-1)"""
    )
    assert [str(s.trace).count("sch.rfactor(") for s in spaces] == [0, 1, 1]
    for s in spaces:
        assert "meta_schedule.random_compute_producer" not in s.mod.script()
        check_numerics(mod, s.mod, "main")
    # TVM 0.21 splits any untiled reduction longer than 1 (checked against TVM: a row of 2 on
    # 2 cores gets both rfactor sketches); a reduction of 1 has nothing to split
    short = parse(ROW_MEAN.replace("512", "2").replace("0.001953125", "0.5"))
    assert len(sketches(short, rules)) == 3
    unit = parse(ROW_MEAN.replace("512", "1").replace("0.001953125", "1.0"))
    assert len(sketches(unit, rules)) == 1


def _with_decisions(trace, decisions):
    it = iter(decisions)
    for inst in list(trace.insts):
        if inst.name in SAMPLING_INSTRUCTIONS:
            trace = trace.with_decision(inst, next(it), remove_postproc=True)
    return trace


def test_default_space_holds_tvms_best_softmax():
    """TVM 0.21's tuner picked, for a 256x1024 softmax: both row reductions rfactored into 16
    vector lanes (left at the root, rows in parallel), exp stored once and computed with the
    row max, the normalisation with the row sum (benchmarks/README.md)."""
    mod = parse(SOFTMAX)
    ctx = TuneContext(mod, TARGET, search_strategy="replay-trace", rand_state=0)
    spaces = ctx.generate_design_space()
    assert [str(s.trace).count("sch.rfactor(") for s in spaces] == [0, 1, 1, 1, 2, 2, 1, 2, 2]
    assert all("compute_inline" not in str(s.trace) for s in spaces)  # exp stays
    # decisions, rule by rule: the expsum and maxelem tiles; the function's unroll (on the
    # root); expsum at norm's row loop, its rfactor block at the root; exp at the root;
    # maxelem at exp's row loop, its rf at the root
    trace = _with_decisions(spaces[8].trace, [[16, 16], [16, 16], 0, 0, -1, -1, 0, -1])
    strategy = ctx.search_strategy
    strategy.pre_tuning(1, 1, spaces)
    cand = strategy.replay(trace)
    assert cand is not None, dict(strategy.failures)
    text = cand.mod.script()
    assert text.count("for i in T.parallel(64):") == 4
    assert text.count("for k_1 in T.vectorized(16):") == 2  # the two rfactor updates
    assert text.count("for k_1_init in T.vectorized(16):") == 2
    a = np.random.default_rng(0).uniform(-4, 4, (64, 256)).astype("float32")
    b = np.zeros_like(a)
    tir_mlir.build(cand.mod)["softmax"](a, b)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(b, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
