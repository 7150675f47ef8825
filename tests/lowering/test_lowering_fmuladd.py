"""Stage fmuladd: a contracted multiply-add reaches LLVM as `llvm.fmuladd`, as TVM emits it, so
LLVM's cost models price one FMA per lane. Priced as a mul and an add, the SLP vectorizer packed
a conv tile's scalar accumulators (2 output rows x 4 columns, carried over the reduction as 8
independent FMA chains) into one ymm chain whose operands are gathered lane by lane (issue 28
case 0118: 8 scalar loads and 7 `vinsertps` per step, 1.5x TVM's time)."""

import re

import numpy as np

from tir_mlir.frontend.parser import parse
from tir_mlir.passes.lowering.pipeline import emit_text
from tir_mlir.runtime.build import build
from tir_mlir.schedule.schedule import Schedule

CONV = """
@T.prim_func
def main(A: T.Buffer((1, 6, 10, 32), "float32"), W: T.Buffer((3, 3, 32, 32), "float32"),
         B: T.Buffer((1, 4, 8, 32), "float32")):
    T.func_attr({"tir.noalias": True})
    for n, h, w, co, ry, rx, rc in T.grid(1, 4, 8, 32, 3, 3, 32):
        with T.block("B"):
            vn, vh, vw, vco, vry, vrx, vrc = T.axis.remap("SSSSRRR", [n, h, w, co, ry, rx, rc])
            with T.init():
                B[vn, vh, vw, vco] = T.float32(0)
            B[vn, vh, vw, vco] = (
                B[vn, vh, vw, vco] + A[vn, vh + vry, vw + vrx, vrc] * W[vry, vrx, vrc, vco]
            )
"""
# A named CPU: the same code on every host (LLVM's Skylake-server cost model, AVX-512).
TARGET = "llvm -mcpu=skylake-avx512"


def _tiled() -> Schedule:
    """Case 0118's schedule: a 2 x 4 output tile per output channel, the reduction around it,
    accumulated in a local buffer (scalar-replace carries its 8 elements over the reduction)."""
    sch = Schedule(parse(CONV))
    b = sch.get_block("B")
    n, h, w, co, ry, rx, rc = sch.get_loops(b)
    h0, h1 = sch.split(h, factors=[None, 2])
    w0, w1 = sch.split(w, factors=[None, 4])
    sch.reorder(n, h0, w0, co, ry, rx, rc, h1, w1)
    sch.cache_write(b, 0, "local")
    sch.reverse_compute_at(sch.get_block("B_local"), h0)
    sch.unroll(h1)
    sch.decompose_reduction(b, ry)
    return sch


def test_products_reach_llvm_as_fmuladd():
    ll = emit_text(_tiled().mod.module, "llvm-ir", target=TARGET)
    assert "@llvm.fmuladd.f32" in ll
    assert not re.search(r"fmul contract", ll)


def test_accumulator_tile_stays_scalar_chains():
    """8 scalar FMAs per reduction step (each its own chain), no lanes gathered into a vector."""
    asm = emit_text(_tiled().mod.module, "asm", target=TARGET)
    assert "vinsertps" not in asm
    assert len(re.findall(r"vfmadd\d+ss", asm)) >= 8
    assert not re.search(r"vfmadd\d+ps\s+[^\n]*ymm", asm)


def test_numbers():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, 6, 10, 32), "float32")
    wt = rng.standard_normal((3, 3, 32, 32), "float32")
    b = np.zeros((1, 4, 8, 32), "float32")
    build(_tiled().mod)["main"](a, wt, b)
    want = sum(
        np.einsum("hwc,co->hwo", a[0, r : r + 4, s : s + 8], wt[r, s])
        for r in range(3)
        for s in range(3)
    )
    np.testing.assert_allclose(b[0], want, rtol=1e-4, atol=1e-4)
