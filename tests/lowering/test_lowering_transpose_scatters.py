"""transpose-scatters: a transpose vectorized along the rows it writes and unrolled along the
columns stores each row segment once (`vector.store`) after a register transpose of the unrolled
copies' vectors, not one scalar store (and lane extract) per element (issue 28, 0041 of seed
2004163578: `C[i, j] = A[j, i] + B[i, j]`, rows split [., 2, 8] and vectorized, columns split by
8 and unrolled). Built for a named CPU (Sapphire Rapids), so the checks do not depend on the
host; numbers against numpy."""

import numpy as np

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from schedule_everyday import transpose_add

SPR = "llvm -mcpu=sapphirerapids"
N = 64


def _schedule(lanes: int, unrolled: int) -> Schedule:
    """0041's schedule at N: rows split [., 2, lanes], columns [., unrolled], the rows
    vectorized inside the unrolled columns."""
    sch = Schedule(tir_mlir.parse(transpose_add(N)))
    i, j = sch.get_loops(sch.get_block("C"))
    i0, i1, i2 = sch.split(i, factors=[None, 2, lanes])
    j0, j1 = sch.split(j, factors=[None, unrolled])
    sch.reorder(i0, j0, i1, j1, i2)
    sch.parallel(sch.fuse(i0, j0))
    sch.vectorize(i2)
    sch.unroll(j1)
    return sch


def _check_numbers(sch: Schedule):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((N, N), "float32") for _ in range(2))
    c = np.full((N, N), 7.0, "float32")
    tir_mlir.build(sch.mod, target=SPR)["main"](a, b, c)
    np.testing.assert_allclose(c, a.T + b, rtol=1e-6)


def test_unrolled_columns_are_stored_as_rows():
    """8 unrolled columns of C, each written down 8 rows: no scalar store of C is left, its
    rows are stored as vectors out of a register transpose."""
    sch = _schedule(lanes=8, unrolled=8)
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert "memref.store" not in scf
    stores = [line for line in scf.splitlines() if "vector.store" in line]
    assert stores and all("%arg2" in line for line in stores)
    _check_numbers(sch)


def test_columns_not_a_power_of_two_stay_scattered():
    """6 unrolled columns: no run of a power of two columns to transpose; the lanes stay
    scalar stores."""
    sch = _schedule(lanes=4, unrolled=6)
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert "memref.store" in scf and "vector.store" not in scf
    _check_numbers(sch)
