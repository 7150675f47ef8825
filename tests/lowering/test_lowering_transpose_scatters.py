"""transpose-scatters: a transpose vectorized along the rows it writes and unrolled along the
columns stores each row segment once (`vector.store`) after a register transpose of the unrolled
copies' vectors, not one scalar store (and lane extract) per element (issue 28, 0041 of seed
2004163578: `C[i, j] = A[j, i] + B[i, j]`, rows split [., 2, 8] and vectorized, columns split by
8 and unrolled). Built for a named CPU (Sapphire Rapids), so the checks do not depend on the
host; numbers against numpy."""

from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from transpose_tiles import SPR, check_numbers, split_transpose_add


def _schedule(lanes: int, unrolled: int) -> Schedule:
    """0041's schedule at N: rows split [., 2, lanes], columns [., unrolled], the rows
    vectorized inside the unrolled columns."""
    sch, (i0, i1, i2), (j0, j1) = split_transpose_add(lanes, unrolled)
    sch.reorder(i0, j0, i1, j1, i2)
    sch.parallel(sch.fuse(i0, j0))
    sch.vectorize(i2)
    sch.unroll(j1)
    return sch


def test_unrolled_columns_are_stored_as_rows():
    """8 unrolled columns of C, each written down 8 rows: no scalar store of C is left, its
    rows are stored as vectors out of a register transpose."""
    sch = _schedule(lanes=8, unrolled=8)
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert "memref.store" not in scf
    stores = [line for line in scf.splitlines() if "vector.store" in line]
    assert stores and all("%arg2" in line for line in stores)
    check_numbers(sch)


def test_columns_not_a_power_of_two_stay_scattered():
    """6 unrolled columns: no run of a power of two columns to transpose; the lanes stay
    scalar stores."""
    sch = _schedule(lanes=4, unrolled=6)
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert "memref.store" in scf and "vector.store" not in scf
    check_numbers(sch)
