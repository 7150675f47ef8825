"""Stage `loop-interchange`, L1 set conflicts: when one step of a reduction loop sweeps more lines
of the written buffer into an L1 set than it has ways (rows 2 KiB apart fall into a few sets), the
reduction loop moves inside the row loop. Checked on the loops around each store after the stage
for a named CPU (its L1: 64 sets, 12 ways), and on the numbers against numpy."""

import numpy as np

import tir_mlir
from tir_mlir.passes.lowering.loop_interchange import LoopInterchange
from stage_loops import loops_around_stores
from workloads import matmul

TARGET = "llvm -mcpu=sapphirerapids"


def _strips(rows: int):
    """C[rows, 512] = A[rows, 16] @ B[16, 512] in 32-column strips with the reduction outside
    the rows: `for j0: for k: for i: for j1 in 32`."""
    sch = tir_mlir.Schedule(tir_mlir.parse(matmul(rows, 512, 16, noalias=True)))
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, factors=[None, 32])
    sch.reorder(j0, k, i, j1)
    return sch.mod


def _numbers(mod, rows: int):
    rng = np.random.default_rng(0)
    a = rng.random((rows, 16), dtype=np.float32)
    b = rng.random((16, 512), dtype=np.float32)
    c = np.zeros((rows, 512), np.float32)
    tir_mlir.build(mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_rows_that_overflow_l1_sets_take_the_reduction_inside():
    # 64 rows of 2 KiB, 2 lines each per step of k: 128 lines in 4 of 64 sets, 32 per set.
    mod = _strips(64)
    assert set(loops_around_stores(mod, LoopInterchange.name, TARGET)) == {("j_0", "i", "k", "j_1")}
    _numbers(mod, 64)


def test_rows_that_fit_the_ways_keep_the_order():
    # 4 rows: 8 lines, 2 per set.
    mod = _strips(4)
    assert set(loops_around_stores(mod, LoopInterchange.name, TARGET)) == {("j_0", "k", "i", "j_1")}
    _numbers(mod, 4)
