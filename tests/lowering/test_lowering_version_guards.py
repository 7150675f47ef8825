"""Stage `version-guards` on a static program: a split by a factor that does not divide (256
columns by 7) guards every element; the full tiles run unguarded in their own version, the
last tile keeps the guard, and the numbers are numpy's."""

import numpy as np

import tir_mlir
from tir_mlir.passes.lowering.pipeline import emit_text

TEXT = """@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
         C: T.Buffer((64, 64), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j, k in T.grid(64, 64, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


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
