"""affine-to-scf keeps LLVM from unrolling a serial loop whose loads step a page or more per
iteration (page_strides.py): unrolled by U, each copy of the load steps U pages, and a matmul
tile's column walk of B (rows 4 KiB apart) ran 1.3x slower so on an AMD Zen 4 core. Rows 1 KiB
apart leave the loop to LLVM. Built for a named CPU (Zen 4), so the checks do not depend on the
host."""

import numpy as np

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from workloads import matmul

ZEN4 = "llvm -mcpu=znver4"


def _tile_over_k(n, m, k):
    """Issue 28 case 0243 of seed 553787408: a 4 x 2 tile of C over the whole k, A's 4 x 1
    column cached at k, the tiles fused and parallel."""
    sch = Schedule(tir_mlir.parse(matmul(n, m, k, noalias=True)))
    b = sch.get_block("C")
    i, j, kk = sch.get_loops(b)
    i0, i1 = sch.split(i, factors=[None, 4])
    j0, j1 = sch.split(j, factors=[None, 2])
    sch.reorder(i0, j0, kk, j1, i1)
    fused = sch.fuse(i0, j0)
    sch.compute_at(sch.cache_read(b, 0, "local"), kk)
    sch.parallel(fused)
    sch.decompose_reduction(b, kk)
    return sch


def _unroll_disabled(sch) -> bool:
    return "llvm.loop.unroll.disable" in emit_text(sch.mod.module, "llvm-ir", target=ZEN4)


def test_column_walk_a_page_per_step_stays_rolled():
    sch = _tile_over_k(8, 1024, 64)
    assert _unroll_disabled(sch)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 64), "float32")
    w = rng.standard_normal((64, 1024), "float32")
    out = np.full((8, 1024), 7.0, "float32")
    tir_mlir.build(sch.mod)["main"](a, w, out)
    np.testing.assert_allclose(out, a @ w, rtol=1e-4, atol=1e-4)


def test_rows_under_a_page_apart_leave_the_loop_to_llvm():
    assert not _unroll_disabled(_tile_over_k(8, 256, 64))
