"""sink-inits: a reduction init that `decompose_reduction` put in a nest of its own, before the
tile loops of its reduction (the BLAS point: `k` split 1 x 1024, decomposed at `k_0`, the tiles
inside it), runs at the start of each tile, right before the tile's reduction, instead of
sweeping the task's whole block of C first. Structure of the scf, numbers against numpy with C
filled with NaN (every element must be zeroed)."""

import numpy as np

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from workloads import matmul

RNG = np.random.default_rng(0)
N = 128


def _schedule(rows: int, cols: int, decompose_at: int = 0) -> Schedule:
    """MultiLevelTiling's SSRSRS point: i 2 x 1 x . x rows, j 1 x 2 x . x cols, k 1 x N (or
    4 x N/4), the outer loops fused and parallel, the columns vectorized, the init decomposed
    at k_0."""
    sch = Schedule(tir_mlir.parse(matmul(N, noalias=True)))
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    i0, i1, i2, i3 = sch.split(i, factors=[2, 1, None, rows])
    j0, j1, j2, j3 = sch.split(j, factors=[1, 2, None, cols])
    k0, k1 = sch.split(k, factors=[1 if decompose_at == 0 else 4, None])
    sch.reorder(i0, j0, i1, j1, k0, i2, j2, k1, i3, j3)
    sch.parallel(sch.fuse(i0, j0, i1, j1))
    sch.vectorize(j3)
    sch.decompose_reduction(b, k0)
    return sch


def _check(sch):
    a = RNG.random((N, N), dtype=np.float32)
    b = RNG.random((N, N), dtype=np.float32)
    c = np.full((N, N), np.nan, np.float32)
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def _zero_store_shares_a_loop_with_the_reduction(scf: str) -> bool:
    """Whether the first store into C (the init's) lies in a loop whose enclosing body also
    holds the reduction loop (the `scf.for` carrying the accumulators), before that body
    closes."""
    depth, store_depth = 0, None
    for line in scf.splitlines():
        if store_depth is None and "vector.store" in line and "%arg2[" in line:
            store_depth = depth
        elif store_depth is not None:
            if "iter_args" in line and depth == store_depth - 1:
                return True
            if depth < store_depth - 1:
                return False
        depth += line.count("{") - line.count("}")
    return False


def test_a_whole_k_tile_zeroes_its_own_block():
    """8 x 32 tiles, k 1 x 128: the zeros are stored in the tile loops, next to the reduction,
    not in a nest of their own over the task's 64 x 64 block before it."""
    sch = _schedule(rows=8, cols=32)
    scf = emit_text(sch.mod.module, "scf")
    assert _zero_store_shares_a_loop_with_the_reduction(scf), scf
    _check(sch)


def test_wider_tiles_zero_their_own_block():
    """4 x 64 tiles (two zmm per row): the same."""
    sch = _schedule(rows=4, cols=64)
    assert _zero_store_shares_a_loop_with_the_reduction(emit_text(sch.mod.module, "scf"))
    _check(sch)


def test_an_init_above_a_k_loop_that_runs_more_than_once_stays():
    """k 4 x 32: the tiles run 4 times each, so their init cannot go into them; numbers."""
    sch = _schedule(rows=8, cols=32, decompose_at=1)
    assert not _zero_store_shares_a_loop_with_the_reduction(emit_text(sch.mod.module, "scf"))
    _check(sch)
