"""MultiLevelTilingWithIntrin + RewriteTensorize (auto-tensorization with the shipped CPU
intrinsic mac16_f32): the sketch it generates (printed), candidates that are tensorized and
compute numpy's numbers, and blocks the intrinsic cannot cover left to the other rules."""

import numpy as np
import pytest

import tir_mlir
import tir_mlir.meta_schedule as ms
from schedule_check import parse
from tir_mlir import ScheduleError
from tir_mlir.meta_schedule.tune_context import TuneContext
from tensorize_tuning import MM, _reuse_context

IMPL = "for j in T.vectorized(16):"  # the body of mac16_f32's impl


def _context(mod, seed=0):
    rules = [
        ms.schedule_rule.MultiLevelTilingWithIntrin("mac16_f32", structure="SSRSRS"),
        ms.schedule_rule.ParallelizeVectorizeUnroll(
            max_jobs_per_core=16, max_vectorize_extent=64, unroll_max_steps=[0, 16, 64, 512]
        ),
    ]
    post = [
        ms.postproc.DisallowDynamicLoop(),
        ms.postproc.RewriteParallelVectorizeUnroll(),
        ms.postproc.RewriteReductionBlock(),
        ms.postproc.RewriteTensorize(vectorize_init_loop=True),
    ]
    space = ms.space_generator.PostOrderApply(sch_rules=rules, postprocs=post, mutator_probs={})
    return TuneContext(
        mod,
        "llvm -num-cores=2",
        space_generator=space,
        search_strategy="replay-trace",
        rand_state=seed,
    )


def test_sketch_blockizes_the_intrinsic_shape_and_tiles_the_outer_block():
    spaces = _context(parse(MM.format(n=64))).generate_design_space()
    assert len(spaces) == 1
    text = str(spaces[0].trace)
    for line in [
        'b1 = sch.get_block(name="root", func_name="main")',  # (up front, as TVM)
        # the block marked before it is tiled for the intrinsic (TVM's order)
        'sch.annotate(block_or_loop=b0, ann_key="meta_schedule.tiling_structure", '
        'ann_val="SSRSRS")',
        "l5, l6 = sch.split(loop=l3, factors=[None, 16], preserve_unit_iters=True, "
        "disable_predication=False)",
        "sch.reorder(l2, l5, l4, l6)",
        "b7 = sch.blockize(target=l6, preserve_unit_iters=True)",
        'sch.annotate(block_or_loop=b7, ann_key="meta_schedule.auto_tensorize", '
        'ann_val="mac16_f32")',
        "l8, l9, l10 = sch.get_loops(block=b7)",
        "sch.reorder(l15, l23, l16, l24, l29, l17, l25, l30, l18, l26)",
        'sch.annotate(block_or_loop=b1, ann_key="meta_schedule.parallel", ann_val=32)',
    ]:
        assert line in text, line


def test_candidates_are_tensorized_and_compute_numpy_numbers():
    mod = parse(MM.format(n=64))
    ctx = _context(mod, seed=3)
    spaces = ctx.generate_design_space()
    strategy = ctx.search_strategy
    strategy.pre_tuning(6, 6, spaces)
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (64, 32)).astype("float32")
    b = rng.uniform(-1, 1, (32, 64)).astype("float32")
    done = 0
    for _ in range(6):
        cand = strategy.sample(spaces[0].trace)
        assert cand is not None, dict(strategy.failures)
        text = cand.mod.script()
        assert IMPL in text and 'T.block("C")' not in text  # the intrinsic replaced it
        assert "meta_schedule.auto_tensorize" not in text
        c = np.zeros((64, 64), "float32")
        tir_mlir.build(cand.mod)["main"](a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
        done += 1
    assert done == 6


def test_a_block_the_intrinsic_cannot_cover_is_left_unchanged():
    mod = parse(MM.format(n=24))  # j = 24: no loop of 16 to map the intrinsic on
    sch = tir_mlir.Schedule(mod)
    rule = ms.schedule_rule.MultiLevelTilingWithIntrin("mac16_f32")
    out = rule.apply(sch, sch.get_block("C"))
    assert out == [sch] and str(sch.mod) == str(mod)


def test_unknown_intrinsic_is_refused():
    with pytest.raises(ScheduleError, match="no tensor intrinsic named 'nope'"):
        ms.schedule_rule.MultiLevelTilingWithIntrin("nope")


def _with_decisions(trace, decisions):
    """The trace with the sample_perfect_tile decisions given per sampled loop name."""
    for k, inst in enumerate(trace.insts):
        if inst.name == "sample_perfect_tile":
            trace = trace.with_decision(
                trace.insts[k], decisions[inst.args["loop"].name], remove_postproc=False
            )
    return trace


def test_reuse_write_sketches_cache_the_blockized_block_like_tvm():
    # TVM 0.21's MultiLevelTilingWithIntrin (same intrinsic, reuse_write may at levels 1, 2)
    # gives the sketch without a cache and one per level: get_consumers, cache_write of the
    # blockized block, reverse_compute_at under the level's last loop; with TVM's decisions
    # below its level-2 sketch writes back through `for ax0, ax1 in T.grid(4, 32)`.
    mod = parse(MM.format(n=64))
    spaces = _reuse_context(mod).generate_design_space()
    assert len(spaces) == 3
    texts = [str(s.trace) for s in spaces]
    assert sum("cache_write" in t for t in texts) == 2
    cache = 'b31 = sch.cache_write(block=b7, write_buffer_index=0, storage_scope="global")'
    for level, loop in ((1, "l23"), (2, "l24")):
        text = next(t for t in texts if f"loop={loop}, preserve_unit_loops" in t)
        assert (
            "sch.get_consumers(block=b7)\n  " + cache + "\n  sch.reverse_compute_at("
            f"block=b31, loop={loop}, preserve_unit_loops=True, index=-1)" in text
        ), level
    level2 = next(s for s in spaces if "loop=l24, preserve" in str(s.trace))
    trace = _with_decisions(
        level2.trace, {"l8": [8, 2, 1, 4], "l9": [2, 1, 2, 1], "l10": [2, 16]}
    ).without_postproc()
    sch = tir_mlir.Schedule(mod)
    trace.apply_to_schedule(sch)
    assert """
    for i_0, j_0_0, i_1, j_0_1 in T.grid(8, 2, 2, 1):
        for k_0, i_2, j_0_2, k_1, i_3, j_0_3 in T.grid(2, 1, 2, 16, 4, 1):
            with T.block("C_o"):""" in sch.mod.script()
    assert """
        for ax0, ax1 in T.grid(4, 32):
            with T.block("C_global"):
                v0 = T.axis.spatial(64, i_0 * 8 + i_1 * 4 + ax0)
                v1 = T.axis.spatial(64, j_0_0 * 32 + ax1)
                T.reads(C_global[v0, v1])
                T.writes(C[v0, v1])
                C[v0, v1] = C_global[v0, v1]""" in sch.mod.script()


def test_reuse_write_candidates_are_tensorized_and_compute_numpy_numbers():
    mod = parse(MM.format(n=64))
    ctx = _reuse_context(mod, seed=5)
    spaces = [s for s in ctx.generate_design_space() if "cache_write" in str(s.trace)]
    strategy = ctx.search_strategy
    strategy.pre_tuning(4, 4, spaces)
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (64, 32)).astype("float32")
    b = rng.uniform(-1, 1, (32, 64)).astype("float32")
    for space in spaces:
        for _ in range(2):
            cand = strategy.sample(space.trace)
            assert cand is not None, dict(strategy.failures)
            text = cand.mod.script()
            assert IMPL in text and 'T.block("C_global")' in text
            c = np.zeros((64, 64), "float32")
            tir_mlir.build(cand.mod)["main"](a, b, c)
            np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
