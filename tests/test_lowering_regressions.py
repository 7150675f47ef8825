"""Lowering bugs found by the schedule tests, each pinned by the smallest program that showed it."""
import numpy as np
import pytest

import tir_mlir
from tir_mlir import Schedule

MATMUL = '''
@T.prim_func
def main(A: T.Buffer((16, 12), "float32"), B: T.Buffer((12, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 12):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''
CONV = '''
@T.prim_func
def main(A: T.Buffer((1, 2, 6, 6), "float32"), W: T.Buffer((4, 2, 3, 3), "float32"), B: T.Buffer((1, 4, 4, 4), "float32")):
    for n, f, y, x, rc, ry, rx in T.grid(1, 4, 4, 4, 2, 3, 3):
        with T.block("conv"):
            vn, vf, vy, vx, vc, vry, vrx = T.axis.remap("SSSSRRR", [n, f, y, x, rc, ry, rx])
            with T.init():
                B[vn, vf, vy, vx] = T.float32(0)
            B[vn, vf, vy, vx] = B[vn, vf, vy, vx] + A[vn, vc, vy + vry, vx + vrx] * W[vf, vc, vry, vrx]
'''


def _matmul_check(sch):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 12)).astype("float32")
    b = rng.standard_normal((12, 16)).astype("float32")
    c = np.full((16, 16), 7.0, "float32")
    tir_mlir.build(sch.mod, debug=True)["main"](a, b, c)   # raises on an out-of-bounds access
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def _matmul_loops():
    sch = Schedule(tir_mlir.parse(MATMUL))
    return sch, sch.get_loops(sch.get_block("C"))


# (a) T.where must guard T.init as well as the body ---------------------------------------------
def test_predicate_guards_init_fused_split():
    sch, (i, j, k) = _matmul_loops()
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    f = sch.fuse(i, j0)
    sch.split(f, factors=[3, None])          # 3 * 22 > 64: iterations past the end
    _matmul_check(sch)


def test_predicate_guards_peeled_init():
    """Spatial split with a tail, k innermost: the init is peeled out of the k loop and must
    still be guarded."""
    sch, (i, j, k) = _matmul_loops()
    sch.split(i, factors=[None, 5])
    _matmul_check(sch)


def test_predicate_on_reduction_axis():
    sch, (i, j, k) = _matmul_loops()
    sch.split(k, factors=[None, 5])          # 3 * 5 > 12
    _matmul_check(sch)


def test_predicate_guards_init_in_emitted_affine():
    sch, (i, j, k) = _matmul_loops()
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    sch.split(sch.fuse(i, j0), factors=[3, None])
    from tir_mlir.passes.lowering.pipeline import emit_text
    text = emit_text(sch.mod.module, "affine")
    # the init's store (of 0.0) sits inside the predicate's affine.if
    pred_if = text.index("affine.if")
    zero = text.index("arith.constant 0.000000e+00 : f32")
    assert pred_if < zero


# (b) a parallel loop nested in serial loops, around a peeled reduction --------------------------
@pytest.mark.parametrize("axis", range(4))
def test_parallel_spatial_loop_conv2d(axis):
    sch = Schedule(tir_mlir.parse(CONV))
    sch.parallel(sch.get_loops(sch.get_block("conv"))[axis])
    rng = np.random.default_rng(1)
    a = rng.standard_normal((1, 2, 6, 6)).astype("float32")
    w = rng.standard_normal((4, 2, 3, 3)).astype("float32")
    b = np.zeros((1, 4, 4, 4), "float32")
    tir_mlir.build(sch.mod, debug=True)["main"](a, w, b)
    win = np.lib.stride_tricks.sliding_window_view(a, (3, 3), axis=(2, 3))
    np.testing.assert_allclose(b, np.einsum("nchwyx,fcyx->nfhw", win, w), rtol=1e-5, atol=1e-5)
