"""transpose-tiles: a transpose nest left to LLVM (`C[i, j] = A[j, i] + B[i, j]`, the columns `i`
outside the rows `j`, nothing vectorized) runs as tiles whose rows of A are loaded whole and
transposed in registers, not gathered one lane at a time (issue 28, 0939 of seed 1699409881:
i split by 8, j by 64, a `cache_read` of A at the fused loop that `forward-buffer-copies`
drops). Built for a named CPU (Sapphire Rapids), so the checks do not depend on the host;
numbers against numpy."""

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from schedule_everyday import transpose_add
from transpose_tiles import N, SPR, check_numbers


def _schedule(columns: int, rows: int, cache: bool = False) -> Schedule:
    """i split [., columns], j split [., rows], reordered i0, j0, i1, j1; i0 and j0 fused and
    parallel; with `cache`, A read through a global `cache_read` at the fused loop (0939)."""
    sch = Schedule(tir_mlir.parse(transpose_add(N)))
    block = sch.get_block("C")
    i, j = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, columns])
    j0, j1 = sch.split(j, factors=[None, rows])
    sch.reorder(i0, j0, i1, j1)
    fused = sch.fuse(i0, j0)
    if cache:
        sch.compute_at(sch.cache_read(block, 0, "global"), fused)
    sch.parallel(fused)
    return sch


def test_columns_outside_rows_are_register_transposes():
    """8 columns around 32 rows (0939's shape): A's rows are vector loads, the columns come out
    of shuffles; no vector is built lane by lane."""
    sch = _schedule(columns=8, rows=32, cache=True)
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert "vector.from_elements" not in scf
    assert scf.count("vector.shuffle") >= 8
    assert any("vector.load %arg0" in line for line in scf.splitlines())
    check_numbers(sch)


def test_more_columns_than_lanes_are_split():
    """32 columns: tiles of 16 columns (a register's floats), two per strip of rows."""
    sch = _schedule(columns=32, rows=16)
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert "vector.from_elements" not in scf and "vector.shuffle" in scf
    check_numbers(sch)


def test_columns_without_a_power_of_two_stay_scalar():
    """6 columns: no group of 4 or more to unroll; the nest stays LLVM's, scalar here."""
    sch = _schedule(columns=6, rows=16)
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert "vector." not in scf
    check_numbers(sch)


def _parallel_columns(rows: int) -> Schedule:
    """The columns loop `i` parallel around the rows `j` split by `rows`, vectorized (0626 and
    0715 of seed 1145227567: `split parallel vectorize`, nothing reordered)."""
    sch = Schedule(tir_mlir.parse(transpose_add(N)))
    i, j = sch.get_loops(sch.get_block("C"))
    _, j1 = sch.split(j, factors=[None, rows])
    sch.parallel(i)
    sch.vectorize(j1)
    return sch


def test_a_parallel_columns_loop_runs_parallel_tiles():
    """8 vectorized rows in strips of 8 inside a parallel columns loop: the columns run as
    parallel groups of 8, each unrolled inside the strip, so each row of A is one vector load
    transposed in registers, not 8 columns gathered lane by lane."""
    sch = _parallel_columns(rows=8)
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert "vector.from_elements" not in scf and "vector.shuffle" in scf
    assert f"scf.parallel (%arg3) = (%c0) to (%c{N // 8})" in scf
    check_numbers(sch)


def test_vectorized_rows_wider_than_a_register_run_as_register_strips():
    """32 vectorized rows (two registers of floats): tiles of 16 rows by 16 columns."""
    sch = _parallel_columns(rows=32)
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert "vector.from_elements" not in scf and "vector.shuffle" in scf
    check_numbers(sch)


def test_four_columns_around_rows_of_a_guarded_split_are_register_transposes():
    """4 columns around 12 rows through a global `cache_read` (0117 of seed 1418610677): the
    rows split 12 leave a guarded tail, and the full tiles' rows of A come 4 at a time, each a
    4-float load; the columns come out of a 4 x 4 transpose, not 3 inserts each."""
    sch = _schedule(columns=4, rows=12, cache=True)
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert scf.count("vector.shuffle") >= 8
    assert any("vector.load %arg0" in line and "vector<4xf32>" in line for line in scf.splitlines())
    check_numbers(sch)


def test_columns_inside_the_rows_trade_places_and_run_as_register_transposes():
    """The rows `j` around 8 columns `i1` inside a parallel `i0` (0307 of seed 1220622965:
    `split reorder parallel`): along `i1` the stores scatter down the columns, so the two trade
    places first; then the columns are unrolled inside strips of rows, each row of A one vector
    load, the columns shuffles of those (before, every vector of A was built lane by lane: 2x
    TVM's time)."""
    sch = Schedule(tir_mlir.parse(transpose_add(N)))
    i, j = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 8])
    sch.reorder(i0, j, i1)
    sch.parallel(i0)
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert "vector.from_elements" not in scf
    assert scf.count("vector.shuffle") >= 8
    assert any("vector.load %arg0" in line for line in scf.splitlines())
    assert f"scf.parallel (%arg3) = (%c0) to (%c{N // 8})" in scf
    check_numbers(sch)
