"""vectorize-loops cuts a loop whose lanes are gathered from scattered addresses into the vector
width LLVM's cost model prices lowest (gather_width.py, lane_costs.py). Built for a named CPU
(Sapphire Rapids) so the choice does not depend on the host; numbers on the host."""

import re

import numpy as np

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.cpu_target import cpu_target
from tir_mlir.passes.lowering.lane_costs import lane_costs
from tir_mlir.passes.lowering.pipeline import emit_text
from workloads import matmul

SPR = "llvm -mcpu=sapphirerapids"


def _column_lanes(n):
    """f64 matmul, i split by 8 and its inner part vectorized inside k: each vector is a
    column of 8 rows of A (gathered, n * 8 bytes apart) times a broadcast B[k, j]."""
    sch = Schedule(tir_mlir.parse(matmul(n, dtype="float64")))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, 8])
    sch.reorder(i0, j, k, i1)
    sch.vectorize(i1)
    sch.decompose_reduction(c, k)
    return sch


def _vector_types(text):
    return set(re.findall(r"vector<(\d+)x(f\d+)>", text))


def test_gathered_f64_column_is_cut_into_128_bit_vectors():
    """Gathering 8 doubles into a zmm costs 19 in LLVM's model, four xmm 4 x 1, against 4 x 2
    vector ops: four 2-lane vectors (4.6 -> 2.9 ms at 256, TVM 3.3 ms); numbers as numpy's."""
    sch = _column_lanes(64)
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert _vector_types(scf) == {("2", "f64")}
    assert len(re.findall(r"vector.from_elements .* : vector<2xf64>", scf)) >= 4
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 64)), rng.random((64, 64))
    c = np.zeros((64, 64))
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-12)


SILU_COLUMN = """
@T.prim_func
def main(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64, 32), "float32")):
    for i0, j in T.grid(4, 32):
        for i1 in T.vectorized(16):
            with T.block("B"):
                vi = T.axis.spatial(64, i0 * 16 + i1)
                vj = T.axis.spatial(32, j)
                B[vi, vj] = A[vi, vj] * T.sigmoid(A[vi, vj])
"""


def _check_silu(mod):
    a = np.random.default_rng(0).standard_normal((64, 32)).astype("float32")
    b = np.zeros_like(a)
    tir_mlir.build(mod)["main"](a, b)
    np.testing.assert_allclose(b, a / (1 + np.exp(-a)), rtol=1e-5, atol=1e-6)


def test_elementwise_gather_and_scatter_is_cut():
    """SiLU down a column of 16 rows, each lane loaded and stored apart: 16 lanes cost
    39 + 24 + 5 vector ops, four vectors of 4 cost 4 x (3 + 3 + 5): 4-lane vectors (1.82
    against 2.02 ms over 512 x 1024)."""
    mod = tir_mlir.parse(SILU_COLUMN)
    assert _vector_types(emit_text(mod.module, "scf", target=SPR)) == {("4", "f32")}
    _check_silu(mod)


def test_elementwise_scatter_alone_keeps_its_lanes():
    """The same column read from a cache tile (contiguous loads), only the store scattered:
    24 + 5 against 4 x (3 + 5): one 16-lane vector."""
    sch = Schedule(tir_mlir.parse(SILU_COLUMN))
    b = sch.get_block("B")
    sch.compute_at(sch.cache_read(b, 0, "global"), sch.get_loops(b)[1])
    assert _vector_types(emit_text(sch.mod.module, "scf", target=SPR)) == {("16", "f32")}
    _check_silu(sch.mod)


def test_lane_costs_price_wide_gathers_higher_per_lane():
    costs = lane_costs(cpu_target(SPR), "double", (2, 4, 8))
    assert costs is not None and set(costs) == {2, 4, 8}
    per_lane = [costs[n][0] / n for n in (2, 4, 8)]
    assert per_lane == sorted(per_lane) and per_lane[0] < per_lane[-1]


ROW_SUM = """
@T.prim_func
def main(A: T.Buffer((48, 64), "float32"), B: T.Buffer((48,), "float32")):
    for i0, i1 in T.grid(48, 64):
        with T.block("B"):
            v0, v1 = T.axis.remap("SR", [i0, i1])
            with T.init():
                B[v0] = T.float32(0)
            B[v0] = B[v0] + A[v0, v1]
"""


def _row_sum_over_rows(rows):
    """A row sum vectorized over `rows` rows inside its reduction loop: each lane is a row, 256
    bytes from the next (gathered), and the T.init stays in the loop as a condition."""
    sch = Schedule(tir_mlir.parse(ROW_SUM))
    i, k = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, factors=[None, rows])
    sch.reorder(i0, k, i1)
    sch.vectorize(i1)
    return sch


def _check_row_sum(mod):
    a = np.random.default_rng(0).standard_normal((48, 64)).astype("float32")
    b = np.full(48, 7, dtype="float32")
    tir_mlir.build(mod)["main"](a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_gathered_rows_under_their_init_are_cut():
    """The init's condition does not hide the loop from the weighing: 16 gathered rows cost
    39 + 1 against 4 x (3 + 1), four 4-lane vectors (a 1024 x 1024 row sum over 16 rows 0.34 ->
    0.26 ms)."""
    sch = _row_sum_over_rows(16)
    assert _vector_types(emit_text(sch.mod.module, "scf", target=SPR)) == {("4", "f32")}
    _check_row_sum(sch.mod)


def test_lanes_that_divide_the_loop_are_candidates():
    """12 rows: 27 + 1 at 12 lanes, 2 x (9 + 1) at 6 (its halving), 3 x (3 + 1) at 4 (a divisor
    that is no halving): three 4-lane vectors (0.31 -> 0.24 ms over 1024 x 1024)."""
    sch = _row_sum_over_rows(12)
    assert _vector_types(emit_text(sch.mod.module, "scf", target=SPR)) == {("4", "f32")}
    _check_row_sum(sch.mod)


def test_carried_accumulator_column_keeps_whole_registers():
    """The accumulator column C[i0 * 64 + i1, j] (64 rows, gathered and scattered) does not
    change along k: scalar-replace carries it across k, so it is built and taken apart once per
    k loop, not per step. The rows of A come from a contiguous cache tile. Cut into 2-lane
    vectors it would be 32 xmm accumulators, more than the register file less the free ones
    (some then stay in memory, loaded and stored every step); kept whole, 8 zmm."""
    n = 128
    sch = Schedule(tir_mlir.parse(matmul(n, dtype="float64", noalias=True)))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, 64])
    sch.reorder(i0, j, k, i1)
    a_tile = sch.cache_read(c, 0, "global")
    sch.compute_at(a_tile, k)
    sch.vectorize(i1)
    sch.decompose_reduction(c, k)
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    products = re.findall(r"arith.mulf .* : vector<(\d+)xf64>", scf)
    assert products and set(products) == {"8"}
    assert "iter_args" in scf
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n)), rng.random((n, n))
    out = np.zeros((n, n))
    tir_mlir.build(sch.mod)["main"](a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)


INT8_DOT = """
@T.prim_func
def main(A: T.Buffer((64, 512), "int8"), B: T.Buffer((64, 512), "int8"), C: T.Buffer((64,), "int32")):
    for i, k in T.grid(64, 512):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = 0
            C[vi] = C[vi] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vi, vk])
"""


def test_a_carried_accumulator_with_its_init_inside_keeps_whole_registers():
    """An int8 dot product's k split by 8 and rfactor'd, the factored 8 vectorized inside
    k_0: the lanes of C_rf[k_1, i] are rows of it (scattered), its T.init a store under an
    `affine.if` inside the loop. scalar-replace carries the accumulator across k_0 with the
    init as a select, so it is built and taken apart once per row, not per step: one
    vector<8xi32> (where four-byte halves ran twice the instructions: 0391 of seed 1699409881)."""
    sch = Schedule(tir_mlir.parse(INT8_DOT))
    i, k = sch.get_loops(sch.get_block("C"))
    _, k1 = sch.split(k, factors=[None, 8])
    rf = sch.rfactor(k1, factor_axis=0)
    sch.vectorize(sch.get_loops(rf)[-1])
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert set(re.findall(r"arith.muli .* : vector<(\d+)xi32>", scf)) == {"8"}
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (64, 512), dtype=np.int8)
    b = rng.integers(-128, 128, (64, 512), dtype=np.int8)
    c = np.zeros(64, dtype=np.int32)
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_array_equal(c, (a.astype(np.int32) * b.astype(np.int32)).sum(axis=1))
