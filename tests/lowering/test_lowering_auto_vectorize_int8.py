"""auto-vectorize leaves a few rows of an integer dot product scalar when the loop around them
walks their rows contiguously: LLVM then vectorizes that loop (whole registers of each row)
instead of one insert per row and step. A float sum keeps the rows vectorized (LLVM does not
reorder it). Assembly for a named CPU (Sapphire Rapids), numbers on the host."""

import re

import numpy as np

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text

SPR = "llvm -mcpu=sapphirerapids"


def _dot(dtype: str, acc: str) -> str:
    cast = (lambda x: f'T.Cast("{acc}", {x})') if dtype != acc else (lambda x: x)
    return f"""
@T.prim_func
def main(A: T.Buffer((64, 256), "{dtype}"), B: T.Buffer((64, 256), "{dtype}"), C: T.Buffer((64,), "{acc}")):
    T.func_attr({{"tir.noalias": True}})
    for i, k in T.grid(64, 256):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.{acc}(0)
            C[vi] = C[vi] + {cast("A[vi, vk]")} * {cast("B[vi, vk]")}
"""


def _rows_inside_k(dtype: str, acc: str, k1: int = 32) -> Schedule:
    """Issue 28's int8 dot (case 0233): 8 rows innermost, inside k split by `k1` (8 x 32)."""
    sch = Schedule(tir_mlir.parse(_dot(dtype, acc)))
    block = sch.get_block("C")
    i, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 8])
    k0, k1_loop = sch.split(k, factors=[None, k1])
    sch.reorder(i0, k0, k1_loop, i1)
    sch.decompose_reduction(block, k0)
    return sch


def _check_scalar_int8_rows(sch: Schedule, seed: int):
    """The rows stay scalar (no vector built lane by lane, no byte inserts), LLVM's vectors
    multiply-add bytes of each row, and the sums equal numpy's."""
    assert "vector.from_elements" not in emit_text(sch.mod.module, "scf", target=SPR)
    asm = emit_text(sch.mod.module, "asm", target=SPR)
    assert "vpinsrb" not in asm
    assert "vpmaddwd" in asm or "vpdpwssd" in asm
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, (64, 256)).astype("int8")
    b = rng.integers(-128, 128, (64, 256)).astype("int8")
    c = np.full(64, 7, "int32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_array_equal(c, (a.astype("int32") * b.astype("int32")).sum(axis=1))


def test_int8_rows_stay_scalar_and_k_is_vectorized():
    """The 8 rows were one vector<8>, each k step gathering 8 bytes of A and 8 of B (one
    insert per byte); left scalar, the k1 loop reads 32 contiguous bytes per row."""
    _check_scalar_int8_rows(_rows_inside_k("int8", "int32"), seed=0)


def test_int8_rows_inside_a_short_k1_stay_scalar():
    """k split 128 x 2 around the rows (issue 28's 0368 of seed 424113201): the loop around
    the rows walks 2 bytes, but k0 and k1 together walk each row contiguously, as one loop."""
    _check_scalar_int8_rows(_rows_inside_k("int8", "int32", k1=2), seed=1)


def test_more_int8_rows_than_registers_run_outside_k():
    """32 rows inside k, summed in a cache_write tile (0629 of seed 2022208947): more sums
    than scalar-replace carries in registers (it carried 26, the rest stayed in memory and LLVM
    vectorized nothing), so `rows-outside` puts the rows around k, each row one contiguous dot
    product."""
    sch = Schedule(tir_mlir.parse(_dot("int8", "int32")))
    block = sch.get_block("C")
    i, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 32])
    sch.reorder(i0, k, i1)
    sch.reverse_compute_at(sch.cache_write(block, 0, "local"), i0)
    _check_scalar_int8_rows(sch, seed=2)


def test_more_int8_rows_than_registers_inside_an_unrolled_k1_run_outside_k():
    """64 rows inside k split 16 x 16 with `unroll(k1)` (0556 of seed 1021720963, 0473 of
    2022208947): unrolled first, k1's 16 copies of the rows loop hid the walking nest from
    `rows-outside` and the rows became vectors gathered lane by lane. k1 stays a loop, the rows
    run around k0 and k1, and each row's k is one loop of 256 contiguous bytes."""
    sch = Schedule(tir_mlir.parse(_dot("int8", "int32")))
    block = sch.get_block("C")
    i, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 64])
    k0, k1 = sch.split(k, factors=[None, 16])
    sch.reorder(i0, k0, k1, i1)
    sch.reverse_compute_at(sch.cache_write(block, 0, "local"), i0)
    sch.unroll(k1)
    sch.decompose_reduction(block, k0)
    assert re.search(
        r"to %c256 step %c1\w* iter_args", emit_text(sch.mod.module, "scf", target=SPR)
    )
    _check_scalar_int8_rows(sch, seed=3)


def _vectorized_rows_inside_k(rows: int) -> Schedule:
    """Issue 28's 0242 of seed 341660906: `rows` rows split off, inside the whole k, and
    vectorized by the schedule, the reduction decomposed at k."""
    sch = Schedule(tir_mlir.parse(_dot("int8", "int32")))
    block = sch.get_block("C")
    i, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, rows])
    sch.reorder(i0, k, i1)
    sch.vectorize(i1)
    sch.decompose_reduction(block, k)
    return sch


def test_vectorized_int8_rows_inside_k_run_as_scalar_rows():
    """The schedule's vectorize made the 8 rows lanes gathered byte by byte every k step (as
    TVM's code does); `rows-outside` makes the loop serial, so the rows are carried sums and
    LLVM vectorizes k over each row's contiguous bytes."""
    _check_scalar_int8_rows(_vectorized_rows_inside_k(8), seed=4)


def test_more_vectorized_int8_rows_than_registers_run_outside_k():
    """64 vectorized rows: more sums than registers, so the rows also move around k."""
    sch = _vectorized_rows_inside_k(64)
    assert re.search(
        r"to %c256 step %c1\w* iter_args", emit_text(sch.mod.module, "scf", target=SPR)
    )
    _check_scalar_int8_rows(sch, seed=5)


def test_vectorized_int8_rows_reading_a_cache_read_tile_run_as_scalar_rows():
    """0517 of seed 341660906: A's 4 bytes of a k step copied to a `cache_read` tile at k,
    read by the 4 vectorized rows, B gathered from B itself. `forward-copies` kept the copy
    (the rows read across the tile) and the copy nest hid the rows' nest from `rows-outside`;
    forwarded, the rows run as scalar sums."""
    sch = Schedule(tir_mlir.parse(_dot("int8", "int32")))
    block = sch.get_block("C")
    i, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 4])
    sch.reorder(i0, k, i1)
    sch.compute_at(sch.cache_read(block, 0, "global"), k)
    sch.reverse_compute_at(sch.cache_write(block, 0, "local"), i0)
    sch.vectorize(i1)
    _check_scalar_int8_rows(sch, seed=7)


def test_vectorized_int8_rows_reading_a_column_stay_vectorized():
    """8 rows of A times one column of B (B[k, 3], a byte for all lanes, 16 bytes apart along
    k) as the lanes inside k: the rows' scalar form would gather B's column along k, so the
    schedule's vectorize stays."""
    sch = Schedule(tir_mlir.parse(_ROWS_TIMES_COLUMN))
    block = sch.get_block("C")
    i, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 8])
    sch.reorder(i0, k, i1)
    sch.vectorize(i1)
    assert "vector<8xi32>" in emit_text(sch.mod.module, "scf", target=SPR)
    rng = np.random.default_rng(6)
    a = rng.integers(-128, 128, (32, 64)).astype("int8")
    b = rng.integers(-128, 128, (64, 16)).astype("int8")
    c = np.zeros(32, "int32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_array_equal(c, a.astype("int32") @ b[:, 3].astype("int32"))


_ROWS_TIMES_COLUMN = """
@T.prim_func
def main(A: T.Buffer((32, 64), "int8"), B: T.Buffer((64, 16), "int8"), C: T.Buffer((32,), "int32")):
    T.func_attr({"tir.noalias": True})
    for i, k in T.grid(32, 64):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = 0
            C[vi] = C[vi] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vk, 3])
"""


def test_float_rows_stay_vectorized():
    """A float sum over k is not reordered by LLVM: left scalar, nothing would vectorize it,
    so the 8 rows stay one vector (built from gathered lanes)."""
    sch = _rows_inside_k("float32", "float32")
    assert "vector.from_elements" in emit_text(sch.mod.module, "scf", target=SPR)
    rng = np.random.default_rng(0)
    a = rng.random((64, 256), dtype=np.float32)
    b = rng.random((64, 256), dtype=np.float32)
    c = np.zeros(64, "float32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, (a * b).sum(axis=1), rtol=1e-4)
