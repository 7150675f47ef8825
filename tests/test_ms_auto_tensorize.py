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

MM = '''
@T.prim_func
def main(A: T.Buffer((64, 32), "float32"), B: T.Buffer((32, {n}), "float32"),
         C: T.Buffer((64, {n}), "float32")):
    for i, j, k in T.grid(64, {n}, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''
IMPL = "for j in T.vectorized(16):"     # the body of mac16_f32's impl


def _context(mod, seed=0):
    rules = [ms.schedule_rule.MultiLevelTilingWithIntrin("mac16_f32", structure="SSRSRS"),
             ms.schedule_rule.ParallelizeVectorizeUnroll(
                 max_jobs_per_core=16, max_vectorize_extent=64,
                 unroll_max_steps=[0, 16, 64, 512])]
    post = [ms.postproc.DisallowDynamicLoop(), ms.postproc.RewriteParallelVectorizeUnroll(),
            ms.postproc.RewriteReductionBlock(),
            ms.postproc.RewriteTensorize(vectorize_init_loop=True)]
    space = ms.space_generator.PostOrderApply(sch_rules=rules, postprocs=post,
                                              mutator_probs={})
    return TuneContext(mod, "llvm -num-cores=2", space_generator=space,
                       search_strategy="replay-trace", rand_state=seed)


def test_sketch_blockizes_the_intrinsic_shape_and_tiles_the_outer_block():
    spaces = _context(parse(MM.format(n=64))).generate_design_space()
    assert len(spaces) == 1
    text = str(spaces[0].trace)
    for line in [
        'l7, l8 = sch.split(loop=l5, factors=[None, 16], preserve_unit_iters=True, '
        'disable_predication=False)',
        'sch.reorder(l4, l7, l6, l8)',
        'b9 = sch.blockize(target=l8, preserve_unit_iters=True)',
        'sch.annotate(block_or_loop=b9, ann_key="meta_schedule.auto_tensorize", '
        'ann_val="mac16_f32")',
        'sch.annotate(block_or_loop=b9, ann_key="meta_schedule.tiling_structure", '
        'ann_val="SSRSRS")',
        'l10, l11, l12 = sch.get_loops(block=b9)',
        'sch.reorder(l17, l25, l18, l26, l31, l19, l27, l32, l20, l28)',
        'b33 = sch.get_block(name="C_o", func_name="main")',
        'sch.annotate(block_or_loop=b33, ann_key="meta_schedule.parallel", ann_val=32)',
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
        assert IMPL in text and 'T.block("C")' not in text      # the intrinsic replaced it
        assert "meta_schedule.auto_tensorize" not in text
        c = np.zeros((64, 64), "float32")
        tir_mlir.build(cand.mod)["main"](a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
        done += 1
    assert done == 6


def test_a_block_the_intrinsic_cannot_cover_is_left_unchanged():
    mod = parse(MM.format(n=24))            # j = 24: no loop of 16 to map the intrinsic on
    sch = tir_mlir.Schedule(mod)
    rule = ms.schedule_rule.MultiLevelTilingWithIntrin("mac16_f32")
    out = rule.apply(sch, sch.get_block("C"))
    assert out == [sch] and str(sch.mod) == str(mod)


def test_unknown_intrinsic_is_refused():
    with pytest.raises(ScheduleError, match="no tensor intrinsic named 'nope'"):
        ms.schedule_rule.MultiLevelTilingWithIntrin("nope")
