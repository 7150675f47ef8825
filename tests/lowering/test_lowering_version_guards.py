"""Stage `version-guards` on a static program: a split by a factor that does not divide (256
columns by 7) guards every element; the full tiles run unguarded in their own version, the
last tile keeps the guard, and the numbers are numpy's."""

import numpy as np
import pytest

import tir_mlir
from tir_mlir.passes.lowering.pipeline import emit_text
from workloads import matmul

TEXT = matmul(64, noalias=True)


def _tiled_by_7():
    sch = tir_mlir.Schedule(tir_mlir.parse(TEXT))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    j0, j1 = sch.split(j, factors=[None, 7])
    k0, k1 = sch.split(k, factors=[None, 16])
    sch.reorder(i, j0, k0, k1, j1)
    sch.fuse(i, j0)
    sch.decompose_reduction(c, k0)
    return sch.mod


def test_a_static_split_that_does_not_divide_runs_its_full_tiles_unguarded():
    mod = _tiled_by_7()
    stages = {}
    emit_text(mod.module, "scf", on_stage=lambda name, m: stages.setdefault(name, str(m)))
    affine = stages["version-guards"]
    # (f mod 10) * 7 + 6 < 64: the 9 full tiles of each row, tested once per tile
    assert "affine_set<(d0) : (d0 * -7 + (d0 floordiv 10) * 70 + 57 >= 0)>" in affine
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((64, 64)).astype("float32") for _ in range(2))
    c = np.zeros((64, 64), "float32")
    tir_mlir.build(mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


SCALE = """@T.prim_func
def main(A: T.Buffer((331, 1024), "float32"), B: T.Buffer((331, 1024), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j in T.grid(331, 1024):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""


def test_a_long_fused_loop_is_versioned_on_its_last_tiles():
    """Rows split by 5 (331 = 66 x 5 + 1) under a loop fused with the 1024 columns: 68,608
    iterations, more than version-guards enumerates; only the last 1024 hold a partial tile.
    Its values are sampled (both ends included), so the full tiles still run unguarded: the
    5 rows a vector of one column each."""
    sch = tir_mlir.Schedule(tir_mlir.parse(SCALE))
    b = sch.get_block("B")
    i, j = sch.get_loops(b)
    i0, i1 = sch.split(i, factors=[None, 5])
    sch.reorder(i0, j, i1)
    sch.fuse(i0, j)
    sch.vectorize(i1)
    stages = {}
    emit_text(sch.mod.module, "scf", on_stage=lambda name, m: stages.setdefault(name, str(m)))
    assert "(d0 floordiv 1024) * -5 + 326 >= 0" in stages["version-guards"]
    assert "vector<5xf32>" in stages["vectorize-loops"]
    a = np.random.default_rng(0).standard_normal((331, 1024)).astype("float32")
    out = np.zeros_like(a)
    tir_mlir.build(sch.mod)["main"](a, out)
    np.testing.assert_array_equal(out, a * 2)


ROW_SUM = """@T.prim_func
def main(A: T.Buffer((64, 100), "float32"), B: T.Buffer((64,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, k in T.grid(64, 100):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""


@pytest.mark.parametrize("vectorized", [True, False])
def test_an_rfactor_split_that_does_not_divide_carries_its_lanes_across_the_guard(vectorized):
    """Row sums, `k` split by 3 (100 = 33 x 3 + 1), rfactor of the 3 lanes (vectorized or
    not): each step of `k0` is versioned (`if k0 * 3 + 2 < 100`: the 3 lanes, a vector or a
    loop, else the guarded lane loop). scalar-replace unrolls the lane loops in the guard's
    branches too, so the 3 partial sums of a row are carried across `k0` in both versions
    instead of 3 loads and 3 stores of `B_rf` per step."""
    sch = tir_mlir.Schedule(tir_mlir.parse(ROW_SUM))
    b = sch.get_block("B")
    _, k = sch.get_loops(b)
    _, k1 = sch.split(k, factors=[None, 3])
    rf = sch.rfactor(k1, factor_axis=0)
    if vectorized:
        sch.vectorize(sch.get_loops(rf)[-1])
    stages = {}
    emit_text(sch.mod.module, "scf", on_stage=lambda name, m: stages.setdefault(name, str(m)))
    lines = stages["scalar-replace"].splitlines()
    at = next(n for n, line in enumerate(lines) if "scf.for" in line and "to %c34" in line)
    assert "iter_args" in lines[at]
    depth = len(lines[at]) - len(lines[at].lstrip())
    end = next(n for n in range(at + 1, len(lines)) if lines[n].startswith(" " * depth + "}"))
    assert not [line for line in lines[at:end] if "%alloca" in line]  # (B_rf)
    a = np.random.default_rng(0).standard_normal((64, 100)).astype("float32")
    out = np.full(64, 7, "float32")
    tir_mlir.build(sch.mod)["main"](a, out)
    np.testing.assert_allclose(out, a.sum(1), rtol=1e-5, atol=1e-5)
