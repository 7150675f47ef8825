"""Stage `version-guards` on a static program: a split by a factor that does not divide (256
columns by 7) guards every element; the full tiles run unguarded in their own version, the
last tile keeps the guard, and the numbers are numpy's."""

import numpy as np

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
