"""Stage vectorize-loops: a `T.vectorized` loop it cannot vectorize and shorter than one vector
register becomes a serial loop (TVM scalarizes it too), so LLVM unrolls it whole; a longer one
keeps LLVM's vectorize hint. The kernel: a padded convolution vectorized over 2 output rows,
whose input loads are strided across the lanes under a padding condition that varies per lane
(issue 28's conv2d_nchw case: a rolled 2-step loop of scalar code under `unroll disable`)."""

import numpy as np
import pytest

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text

PADDED_CONV = """
@T.prim_func
def main(A: T.Buffer((32, 8), "float32"), W: T.Buffer((3, 3), "float32"),
         B: T.Buffer((32, 8), "float32")):
    T.func_attr({"tir.noalias": True})
    for h, w, r, s in T.grid(32, 8, 3, 3):
        with T.block("B"):
            vh, vw, vr, vs = T.axis.remap("SSRR", [h, w, r, s])
            with T.init():
                B[vh, vw] = T.float32(0)
            B[vh, vw] = B[vh, vw] + T.if_then_else(
                1 <= vh + vr and vh + vr < 33 and 1 <= vw + vs and vw + vs < 9,
                A[vh + vr - 1, vw + vs - 1], T.float32(0)) * W[vr, vs]
"""


def _rows_vectorized(lanes: int) -> Schedule:
    """h0, w, r, s, h1 with h1 (`lanes` output rows) vectorized."""
    sch = Schedule(tir_mlir.parse(PADDED_CONV))
    h, w, r, s = sch.get_loops(sch.get_block("B"))
    h0, h1 = sch.split(h, factors=[None, lanes])
    sch.reorder(h0, w, r, s, h1)
    sch.vectorize(h1)
    return sch


def _conv(a, wt):
    p = np.pad(a, 1)
    return sum(p[r : r + 32, s : s + 8] * wt[r, s] for r in range(3) for s in range(3))


def test_short_refused_loop_is_serial():
    """2 lanes of strided loads under a varying condition: no vector code, and no hint that
    would keep LLVM from unrolling the 2 steps (the loop reaches LLVM as a plain loop)."""
    scf = emit_text(_rows_vectorized(2).mod.module, "scf")
    assert "vector." not in scf
    assert "llvm.loop_vectorize<disable = false" not in scf
    assert "llvm.loop_unroll<disable = true>" not in scf


def test_long_refused_loop_keeps_the_hint():
    """32 lanes, at least a register of floats on every x86 target: LLVM's loop vectorizer is
    asked for it, as before."""
    scf = emit_text(_rows_vectorized(32).mod.module, "scf")
    assert "llvm.loop_vectorize<disable = false" in scf
    assert "llvm.loop_unroll<disable = true>" in scf


@pytest.mark.parametrize("lanes", [2, 32])
def test_numbers(lanes):
    rng = np.random.default_rng(lanes)
    a, wt = rng.standard_normal((32, 8), "float32"), rng.standard_normal((3, 3), "float32")
    b = np.zeros((32, 8), "float32")
    tir_mlir.build(_rows_vectorized(lanes).mod)["main"](a, wt, b)
    np.testing.assert_allclose(b, _conv(a, wt), rtol=1e-5, atol=1e-5)
