"""Stage `spatial-out`: an rfactor's factored loop, a spatial loop left inside the reduction
loops, moves out of them, so that `loop-interchange` moves the columns inside the reduction.
Checked on the loops around each store after `loop-interchange`, on the scf (the columns whole
vectors) and on the numbers against numpy."""

import numpy as np

import tir_mlir
from tir_mlir.context import get_context
from tir_mlir.passes.lowering.loop_interchange import LoopInterchange
from tir_mlir.passes.lowering.pipeline import emit_text
from stage_loops import loops_around_stores
from schedule_everyday import conv2d_nhwc
from workloads import matmul

RNG = np.random.default_rng(0)


def _scf(mod) -> str:
    with get_context():
        return emit_text(mod.module, "scf")


def _rfactor_inner(n=4, m=64, k=512, factor=8):
    """A matmul whose k is split by `factor` and rfactor'd on the inner part (factor_axis=0):
    `C_rf[k_1, i, j] += A[i, 8 k_0 + k_1] * B[8 k_0 + k_1, j]` under `i, j, k_0, k_1`."""
    sch = tir_mlir.Schedule(tir_mlir.parse(matmul(n, m, k, noalias=True)))
    _, _, kk = sch.get_loops(sch.get_block("C"))
    _, k1 = sch.split(kk, factors=[None, factor])
    sch.rfactor(k1, factor_axis=0)
    return sch.mod


def test_rfactor_inner_loop_moves_out_and_the_columns_inside():
    mod = _rfactor_inner()
    # k_1 (C_rf's first index) to the top, then loop-interchange puts j inside k_0
    assert ("k_1", "i", "k_0", "j") in set(loops_around_stores(mod, LoopInterchange.name))
    a = RNG.standard_normal((4, 512)).astype("float32")
    b = RNG.standard_normal((512, 64)).astype("float32")
    c = np.zeros((4, 64), "float32")
    tir_mlir.build(mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_rfactor_outer_loop_moves_above_the_columns():
    # k split by 2, the outer part (k_0) rfactor'd: the rf block `C_rf[k_0, i, j]` runs k_0
    # under the columns, its T.init decomposed before k_1; k_0 moves up to where C_rf's layout
    # has it (the top), and j streams along the rows over the 2-step band
    sch = tir_mlir.Schedule(tir_mlir.parse(matmul(16, 64, 256, noalias=True)))
    _, _, kk = sch.get_loops(sch.get_block("C"))
    k0, _ = sch.split(kk, factors=[None, 2])
    sch.rfactor(k0, factor_axis=0)
    assert ("k_0", "i", "j", "k_1") in set(loops_around_stores(sch.mod, LoopInterchange.name))
    a = RNG.standard_normal((16, 256)).astype("float32")
    b = RNG.standard_normal((256, 64)).astype("float32")
    c = np.zeros((16, 64), "float32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def _conv_rfactor_outer(c=32, f=32, hw=8):
    """conv2d NHWC whose input channels are split by 16 and the outer part rfactor'd: the rf
    block's spatial loop (rc_0) sits between the window (ry, rx) and the inner channels, its
    T.init under `ry == 0, rx == 0, rc_1 == 0`."""
    sch = tir_mlir.Schedule(tir_mlir.parse(conv2d_nhwc(c, f, hw)))
    *_, rc = sch.get_loops(sch.get_block("B"))
    rc0, _ = sch.split(rc, factors=[None, 16])
    sch.rfactor(rc0, factor_axis=0)
    return sch.mod


def test_rfactor_outer_loop_moves_out_of_the_window():
    mod = _conv_rfactor_outer()
    scf = _scf(mod)
    assert "vector<32xf32>" in scf  # the output channels, whole vectors
    a = RNG.standard_normal((1, 10, 10, 32)).astype("float32")
    w = RNG.standard_normal((3, 3, 32, 32)).astype("float32")
    b = np.zeros((1, 8, 8, 32), "float32")
    tir_mlir.build(mod)["main"](a, w, b)
    want = sum(
        np.einsum("nhwc,cf->nhwf", a[:, r : r + 8, s : s + 8, :], w[r, s])
        for r in range(3)
        for s in range(3)
    )
    np.testing.assert_allclose(b, want, rtol=1e-4, atol=1e-4)


def test_a_tile_inside_the_reduction_stays():
    # i_1 and j_1 (a register tile) run inside k: two spatial loops there, not an rfactor's one
    sch = tir_mlir.Schedule(tir_mlir.parse(matmul(64, 64, 64, noalias=True)))
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 4])
    j0, j1 = sch.split(j, factors=[None, 16])
    sch.reorder(i0, j0, k, i1, j1)
    before = set(loops_around_stores(sch.mod, "prefetch"))
    assert set(loops_around_stores(sch.mod, "spatial-out")) == before
