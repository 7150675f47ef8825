"""transpose-gathers: a transpose vectorized along one axis and unrolled along the other reads each
row segment once (`vector.load`) and builds the gathered columns with shuffles, not one scalar
load and insert per lane (issue 28, 0017 of seed 1119209321: `C[i, j] = A[j, i] + B[i, j]`, 7
columns vectorized, 8 rows unrolled). Built for a named CPU (Sapphire Rapids), so the checks do
not depend on the host; numbers against numpy."""

from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from transpose_tiles import SPR, check_numbers, split_transpose_add


def _schedule(lanes: int, unrolled: int) -> Schedule:
    """0017's schedule at N: rows split [., 2, unrolled], columns [., lanes], lanes vectorized
    inside the unrolled rows."""
    sch, (i0, i1, i2), (j0, j1) = split_transpose_add(unrolled, lanes)
    sch.reorder(i0, j0, i1, i2, j1)
    sch.fuse(i0, j0)
    sch.vectorize(j1)
    sch.unroll(i2)
    return sch


def test_unrolled_columns_are_a_register_transpose():
    """8 unrolled rows of C read 8 consecutive columns of 7 rows of A: 7 row loads of 8 floats,
    the 8 gathered vectors shuffled out of them."""
    sch = _schedule(lanes=7, unrolled=8)
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert "vector.from_elements" not in scf
    rows = [line for line in scf.splitlines() if "vector.load %arg0" in line]
    assert len(rows) == 7 and all("vector<8xf32>" in line for line in rows)
    assert scf.count("vector.shuffle") >= 8
    check_numbers(sch)


def test_columns_not_a_power_of_two_stay_gathered():
    """6 unrolled rows: 6 columns, no register of them to transpose; the lanes stay loads."""
    sch = _schedule(lanes=4, unrolled=6)
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert "vector.from_elements" in scf and "vector.shuffle" not in scf
    check_numbers(sch)
