"""Stage `auto-vectorize`: the inner loop of a tile that a reduction loop accumulates into is
vectorized when the schedule did not ask (as LLVM's loop vectorizer does on TVM's build), so
that `scalar-replace` carries the tile as vectors; loops it may not or need not take stay
scalar. Checked on the scf stage for a named CPU (the same on every machine) and on the numbers
(numpy) of the host build."""

import re

import numpy as np
import pytest

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text

TARGET = "llvm -mcpu=skylake-avx512"
RNG = np.random.default_rng(0)


def _matmul(n, dtype="float32", acc="float32", noalias=True, b_index="vk, vj"):
    term = (
        "A[vi, vk] * B[{b}]"
        if dtype == acc
        else 'T.Cast("{acc}", A[vi, vk]) * T.Cast("{acc}", B[{b}])'
    ).format(b=b_index, acc=acc)
    zero = "0" if acc.startswith("int") else f"T.{acc}(0)"
    attrs = (
        '{"global_symbol": "main", "tir.noalias": True}' if noalias else '{"global_symbol": "main"}'
    )
    return f'''@T.prim_func
def main(A: T.Buffer(({n}, {n}), "{dtype}"), B: T.Buffer(({n}, {n}), "{dtype}"),
         C: T.Buffer(({n}, {n}), "{acc}")):
    T.func_attr({attrs})
    for i, j, k in T.grid({n}, {n}, {n}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = {zero}
            C[vi, vj] = C[vi, vj] + {term}
'''


def _tile(text, rows=8, cols=32, k_inner=8):
    """The issue's everyday tile: rows x cols outputs over k_inner, no vectorize, no unroll."""
    sch = Schedule(tir_mlir.parse(text))
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, rows])
    j0, j1 = sch.split(j, factors=[None, cols])
    k0, k1 = sch.split(k, factors=[None, k_inner])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    sch.parallel(i0)
    return sch.mod


def _scf(mod) -> str:
    return emit_text(mod.module, "scf", target=TARGET)


def _run(mod, n, dtype="float32", acc="float32", b_transposed=False):
    if dtype == "float32":
        a, b = (RNG.standard_normal((n, n)).astype(dtype) for _ in range(2))
    else:
        a, b = (RNG.integers(-4, 4, (n, n)).astype(dtype) for _ in range(2))
    c = np.zeros((n, n), acc)
    tir_mlir.build(mod)["main"](a, b, c)
    ref = a.astype(acc) @ (b.T if b_transposed else b).astype(acc)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-3)


def test_a_tile_without_vectorize_is_carried_as_vectors():
    """8 rows x 32 columns: one vector<32xf32> (2 zmm) per row carried across k, no scalar."""
    mod = _tile(_matmul(64))
    scf = _scf(mod)
    assert "memref<64x64xf32>, vector<32xf32>" in scf
    assert "-> (" + ", ".join(["vector<32xf32>"] * 8) + ")" in scf
    assert "-> (f32" not in scf
    _run(mod, 64)


def test_int8_products_accumulated_in_int32():
    mod = _tile(_matmul(64, "int8", "int32"), rows=4, cols=16)
    scf = _scf(mod)
    assert "memref<64x64xi8>, vector<16xi8>" in scf
    assert "-> (" + ", ".join(["vector<16xi32>"] * 4) + ")" in scf
    _run(mod, 64, "int8", "int32")


@pytest.mark.parametrize("dtype, cols", [("float32", 6), ("float64", 3)])
def test_a_tile_of_odd_columns_is_carried_as_vectors(dtype, cols):
    """8 rows x 6 floats (3 doubles): a vector of an odd number of lanes per row, carried across
    k like a power of two. Left scalar, LLVM's loop vectorizer took the rows loop with the
    columns unrolled: each access of the tile an interleaved group of `cols` members, the whole
    tile then promoted across k into shuffled wide vectors (benchmarks/README.md, "session 12,
    odd tile columns")."""
    n = 48
    mod = _tile(_matmul(n, dtype, dtype), cols=cols)
    scf = _scf(mod)
    t = {"float32": "f32", "float64": "f64"}[dtype]
    assert f"memref<{n}x{n}x{t}>, vector<{cols}x{t}>" in scf
    assert "-> (" + ", ".join([f"vector<{cols}x{t}>"] * 8) + ")" in scf
    _run(mod, n, dtype, dtype)


@pytest.mark.parametrize(
    "n, options, cols, why",
    [
        (64, {"noalias": False}, 32, "arguments may alias: lanes could overlap another buffer"),
        (256, {}, 128, "128 lanes: 8 registers wide, left to LLVM"),
        (64, {}, 2, "2 floats: narrower than a register"),
    ],
)
def test_left_scalar(n, options, cols, why):
    mod = _tile(_matmul(n, **options), cols=cols)
    assert "vector<" not in _scf(mod), why
    _run(mod, n)


def _carried(scf: str) -> list:
    """The types the loops of `scf` carry, one list per loop that carries any."""
    return [
        m.group(1).split(", ")
        for m in re.finditer(r"scf\.for .* iter_args\(.*\) -> \((.*)\) \{", scf)
    ]


def test_gathered_loads_are_vectorized_too():
    """B read across rows (B[j, k]): each lane's B is gathered, but the tile's accumulators are
    contiguous, so the loop is vectorized and the tile carried across k as vectors (scalar:
    LLVM kept C in memory; 4.45 -> 3.70 ms at 256, 1 thread)."""
    mod = _tile(_matmul(64, b_index="vj, vk"))
    loops = _carried(_scf(mod))
    assert loops and all(
        t.startswith("vector<") and t.endswith("xf32>") for ts in loops for t in ts
    )
    assert "vector.from_elements" in _scf(mod)
    _run(mod, 64, b_transposed=True)


ROW_SUM = """@T.prim_func
def main(A: T.Buffer((128, 256), "float32"), B: T.Buffer((128,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, k in T.grid(128, 256):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""


def test_row_sum_over_rows_carries_its_sums():
    """A row sum with 64 rows inside k (issue 28's split, reorder, decompose_reduction): the
    rows' loop reads one element of each row per step (gathered) and accumulates into 64
    contiguous sums, now vectorized and carried across k as vectors (LLVM kept an 8-lane loop
    with B in memory: 0.81 -> 0.61 ms over 1024 x 1024, 1 thread)."""
    sch = Schedule(tir_mlir.parse(ROW_SUM))
    b = sch.get_block("B")
    i, k = sch.get_loops(b)
    i0, i1 = sch.split(i, factors=[None, 64])
    sch.reorder(i0, k, i1)
    sch.decompose_reduction(b, k)
    loops = _carried(_scf(sch.mod))
    assert len(loops) == 1 and sum(int(t[7:].split("x")[0]) for t in loops[0]) == 64
    assert all(t.startswith("vector<") and t.endswith("xf32>") for t in loops[0])
    a = RNG.standard_normal((128, 256)).astype("float32")
    out = np.full(128, 7, "float32")
    tir_mlir.build(sch.mod)["main"](a, out)
    np.testing.assert_allclose(out, a.sum(axis=1), rtol=1e-4, atol=1e-4)


def test_an_elementwise_loop_is_left_to_llvm():
    """Nothing accumulates into the row: LLVM's loop vectorizer takes it as it is."""
    text = """@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j in T.grid(64, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""
    sch = Schedule(tir_mlir.parse(text))
    sch.split(sch.get_loops(sch.get_block("B"))[1], factors=[None, 16])
    assert "vector<" not in _scf(sch.mod)
