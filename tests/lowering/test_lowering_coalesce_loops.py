"""Stage `coalesce-loops`: a split that nothing was scheduled between runs as the one loop it
came from, so LLVM vectorizes it as that loop (contiguous rows), not the outer half with every
n-th element per lane."""

import re

import numpy as np

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from schedule_everyday import int8_dot, matmul, row_sum

# A named CPU (its 512-bit registers decide, whatever the host).
AVX512 = "llvm -mcpu=skylake-avx512"

# Elements scaled per block of 8: the body uses `j0` alone (S[j0]) beside `j0 * 8 + j1`.
SCALED = """
@T.prim_func
def main(A: T.Buffer((16, 64), "float32"), S: T.Buffer((8,), "float32"),
         C: T.Buffer((16, 64), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j0, j1 in T.grid(16, 8, 8):
        with T.block("C"):
            vi, vj0, vj1 = T.axis.remap("SSS", [i, j0, j1])
            C[vi, vj0 * 8 + vj1] = A[vi, vj0 * 8 + vj1] * S[vj0]
"""


def _extents(scf: str) -> list:
    """The trip counts of the printed `scf.for` loops (all start at 0, step 1), outer first."""
    return [
        int(n) for n in re.findall(r"scf\.for %\w+ = %c0(?:_\d+)? to %c(\d+)(?:_\d+)? step", scf)
    ]


def _dot(sch: Schedule) -> np.ndarray:
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (64, 512)).astype("int8")
    b = rng.integers(-128, 128, (64, 512)).astype("int8")
    c = np.zeros(64, "int32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_array_equal(c, (a.astype("int32") * b.astype("int32")).sum(axis=1))
    return c


def _int8_matmul(sch: Schedule):
    """Build the scheduled 16 x 64 x 64 int8 matmul and compare C with numpy's."""
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (16, 64)).astype("int8")
    b = rng.integers(-128, 128, (64, 64)).astype("int8")
    c = np.zeros((16, 64), "int32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_array_equal(c, a.astype("int32") @ b.astype("int32"))


def test_a_split_reduction_runs_as_one_loop():
    sch = Schedule(tir_mlir.parse(int8_dot(64, 512)))
    block = sch.get_block("C")
    i, k = sch.get_loops(block)
    k0, _ = sch.split(k, factors=[None, 8])
    sch.parallel(i)
    sch.decompose_reduction(block, k0)
    assert _extents(emit_text(sch.mod.module, "scf", AVX512)) == [512]
    _dot(sch)


def test_a_split_in_three_runs_as_one_loop():
    sch = Schedule(tir_mlir.parse(int8_dot(64, 512)))
    block = sch.get_block("C")
    i, k = sch.get_loops(block)
    sch.split(k, factors=[None, 2, 8])
    sch.parallel(i)
    assert _extents(emit_text(sch.mod.module, "scf", AVX512)) == [512]
    _dot(sch)


def _rows_inside_a_split(sch: Schedule):
    """Split i by 4 and k by 2, the 4 rows innermost (`i0, k0, k1, i1`), their sums in a local
    buffer at `i0` (0368 of seed 424113201's shape)."""
    block = sch.get_block("C")
    i, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 4])
    k0, k1 = sch.split(k, factors=[None, 2])
    sch.reorder(i0, k0, k1, i1)
    cache = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(cache, i0)
    sch.parallel(i0)
    sch.decompose_reduction(block, k0)


def test_integer_rows_inside_a_split_run_as_one_loop_of_carried_sums():
    """The rows are not gathered as 4 lanes (a byte from each of 4 rows per step): they are 4
    integer sums carried across the one loop of 512, whose loads are contiguous."""
    sch = Schedule(tir_mlir.parse(int8_dot(64, 512)))
    _rows_inside_a_split(sch)
    scf = emit_text(sch.mod.module, "scf", AVX512)
    assert 512 in _extents(scf) and 256 not in _extents(scf), scf
    assert "vector" not in scf and "iter_args" in scf, scf
    _dot(sch)


def test_float_rows_inside_a_split_stay_vectorized():
    """A float row sum keeps its order: left scalar its rows would not be vectorized at all,
    so they stay 4 lanes and the pair stays."""
    sch = Schedule(tir_mlir.parse(row_sum(64, 512)))
    block = sch.get_block("B")
    i, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 4])
    k0, k1 = sch.split(k, factors=[None, 2])
    sch.reorder(i0, k0, k1, i1)
    sch.parallel(i0)
    scf = emit_text(sch.mod.module, "scf", AVX512)
    assert "vector<4xf32>" in scf and _extents(scf)[-2:] == [256, 2], scf
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 512)).astype("float32")
    b = np.zeros(64, "float32")
    tir_mlir.build(sch.mod)["main"](a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-4)


def test_a_row_strided_split_keeps_its_loops():
    """B's column walks 64 elements per k: in the pair each inner step is a constant
    displacement, in one loop a vector of addresses taken apart lane by lane."""
    sch = Schedule(tir_mlir.parse(matmul(16, 64, 64, "int8", "int32")))
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    sch.split(k, factors=[None, 16])
    cache = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(cache, j)
    sch.parallel(i)
    assert _extents(emit_text(sch.mod.module, "scf", AVX512))[1:3] == [4, 16]
    _int8_matmul(sch)


def test_a_split_with_a_forwarded_cache_read_between_runs_as_one_loop():
    """A cache read at the outer loop whose tile is read once sat between the two (the pair
    stayed); `forward-copies` reads A itself there, so the pair is one loop again."""
    sch = Schedule(tir_mlir.parse(int8_dot(64, 512)))
    block = sch.get_block("C")
    i, k = sch.get_loops(block)
    k0, _ = sch.split(k, factors=[None, 32])
    cache = sch.cache_read(block, 0, "local")
    sch.compute_at(cache, k0)
    sch.parallel(i)
    scf = emit_text(sch.mod.module, "scf", AVX512)
    assert 16 not in _extents(scf) and 512 in _extents(scf), scf
    _dot(sch)


def test_an_outer_variable_used_alone_keeps_its_loops():
    sch = Schedule(tir_mlir.parse(SCALED))
    scf = emit_text(sch.mod.module, "scf", AVX512)
    assert _extents(scf)[-2:] == [8, 8], scf
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 64)).astype("float32")
    s = rng.standard_normal(8).astype("float32")
    c = np.zeros((16, 64), "float32")
    tir_mlir.build(sch.mod)["main"](a, s, c)
    np.testing.assert_allclose(c, a * np.repeat(s, 8), rtol=1e-6)


def test_an_unrolled_inner_half_runs_as_one_loop():
    """`unroll(k1)` of a split whose pair is otherwise coalescible (0915 of seed 2004163578:
    2 rows inside `k0, k1`): unrolled first, k0 stepped 8 bytes per trip through each row and
    LLVM took its 64-byte loads apart; the pair is the one contiguous loop of 512 instead."""
    sch = Schedule(tir_mlir.parse(int8_dot(64, 512)))
    block = sch.get_block("C")
    i, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 2])
    k0, k1 = sch.split(k, factors=[None, 8])
    sch.reorder(i0, k0, k1, i1)
    sch.parallel(i0)
    sch.unroll(k1)
    sch.decompose_reduction(block, k0)
    scf = emit_text(sch.mod.module, "scf", AVX512)
    assert 512 in _extents(scf) and 64 not in _extents(scf), scf
    assert "unroll" not in scf, scf
    _dot(sch)


def test_an_unrolled_inner_half_of_a_strided_pair_is_unrolled():
    """The user's unroll stays where the pair stays (B's column is row-strided)."""
    sch = Schedule(tir_mlir.parse(matmul(16, 64, 64, "int8", "int32")))
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    _, k1 = sch.split(k, factors=[None, 4])
    sch.unroll(k1)
    sch.parallel(i)
    scf = emit_text(sch.mod.module, "scf", AVX512)
    assert _extents(scf)[-1] == 16, scf
    _int8_matmul(sch)
