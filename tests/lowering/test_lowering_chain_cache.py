"""affine-to-scf's FMA rule on matmul tiles whose accumulators wait on their chain: the add stays
apart from the multiply (mul + add: the add alone on the chain) while the chain's loads fit the
target's L2, and is contracted into an FMA when they miss L2. Built for a named CPU (Sapphire
Rapids: 48 KiB 12-way L1D, 2 MiB 16-way L2), so the checks do not depend on the host."""

import sys
from pathlib import Path

import numpy as np
import pytest
from mlir import ir

import tir_mlir
from filecheck import filecheck
from tir_mlir import Schedule
from tir_mlir.ir.same_value import same_value
from tir_mlir.passes.lowering.pipeline import emit_text
from workloads import matmul

sys.path.insert(0, str(Path(__file__).parent.parent.parent / "benchmarks"))
from issue28_kinds import conv2d_window_unrolled  # noqa: E402

SPR = "llvm -mcpu=sapphirerapids"


def _tile(n, m, k):
    """Two rows x 4 columns of C (two vector<4> accumulators) per step of k, k innermost: the
    column of B under the tile is one line per row of B, rows m * 4 bytes apart."""
    sch = Schedule(tir_mlir.parse(matmul(n, m, k, noalias=True)))
    c = sch.get_block("C")
    i, j, kk = sch.get_loops(c)
    i0, i1, i2 = sch.split(i, factors=[None, 64, 2])
    j0, j1, j2 = sch.split(j, factors=[None, 4, 4])
    k0, k1 = sch.split(kk, factors=[None, 64])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.vectorize(j2)
    sch.unroll(i2)
    sch.decompose_reduction(c, k0)
    return sch


def _adds(sch):
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    return [line for line in scf.splitlines() if "arith.addf" in line and "vector<4xf32>" in line]


def test_chain_over_a_column_in_l2_keeps_the_add_alone_on_it():
    """256 rows of B 1 KiB apart: 4 of the L1's 64 sets (misses L1), well within L2. The L2
    hits overlap with the chain, which the loop waits on: mul + add, no FMA (an FMA chain ran
    1.3x as long). Numbers as numpy's."""
    sch = _tile(128, 256, 256)
    adds = _adds(sch)
    assert adds and not [line for line in adds if "contract" in line]
    filecheck(
        emit_text(sch.mod.module, "asm", target=SPR).split("_mlir_ciface_main")[0],
        "CHECK-NOT: vfmadd\nCHECK: vmulps\nCHECK: vaddps\nCHECK-NOT: vfmadd",
    )
    rng = np.random.default_rng(0)
    a, b = rng.random((128, 256), "float32"), rng.random((256, 256), "float32")
    c = np.zeros((128, 256), "float32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def test_chain_over_a_column_that_misses_l2_is_contracted():
    """2,048 rows of B 2 KiB apart: 64 of the L2's 2,048 sets, 1,024 lines for 2,048 rows. The
    loop waits on memory, and the FMA's fewer micro-ops let more loads overlap: FMAs."""
    adds = _adds(_tile(128, 512, 2048))
    assert adds and all("contract" in line for line in adds)


@pytest.mark.parametrize("same", [True, False])
def test_same_value_sees_through_copies_of_an_index_computation(same):
    """Flattened blocks compute an accumulator's load and store indices twice: equal maps over
    the same IVs are the same value, another map or another IV is not."""
    other = "#map" if same else "#map2"
    text = f"""
#map = affine_map<(d0, d1) -> (d0 floordiv 16 * 128 + d1 * 2)>
#map2 = affine_map<(d0, d1) -> (d0 floordiv 16 * 128 + d1 * 2 + 1)>
func.func @f(%m: memref<256xf32>, %i: index, %j: index) {{
  %c0 = arith.constant 0 : index
  %c0b = arith.constant 0 : index
  %a = affine.apply #map(%i, %j)
  %b = affine.apply {other}(%i, %j)
  %x = arith.addi %a, %c0 : index
  %y = arith.addi %b, %c0b : index
  %z = arith.addi %b, %i : index
  return
}}
"""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        ops = list(module.body.operations[0].regions[0].blocks[0].operations)
        x, y, z = (ops[k].results[0] for k in (4, 5, 6))
        assert same_value(x, y) is same
        assert not same_value(x, z)


def test_same_value_ignores_the_dims_a_map_does_not_read():
    """An unrolled window's taps pass their offsets to the output's index map, which leaves them
    out: the taps' store indices are one value; a dim the map reads still tells them apart."""
    text = """
#map = affine_map<(d0, d1, d2) -> (d0 * 4 + d2)>
func.func @f(%i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = affine.apply #map(%i, %c0, %j)
  %b = affine.apply #map(%i, %c1, %j)
  %c = affine.apply #map(%i, %c0, %c1)
  return
}
"""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        ops = list(module.body.operations[0].regions[0].blocks[0].operations)
        a, b, c = (ops[k].results[0] for k in (2, 3, 4))
        assert same_value(a, b)
        assert not same_value(a, c)


def _conv_window_unrolled(c, hw):
    """3x3 conv (pre-padded input) scheduled as issue 28's kind 2: the window unrolled inside
    the channel loop, 4 outputs of a row as one vector<4>: the nine taps update one accumulator."""
    text = f"""
@T.prim_func
def main(A: T.Buffer((1, {c}, {hw + 2}, {hw + 2}), "float32"),
         W: T.Buffer(({c}, {c}, 3, 3), "float32"), B: T.Buffer((1, {c}, {hw}, {hw}), "float32")):
    T.func_attr({{"tir.noalias": True}})
    for n, f, y, x, rc, ry, rx in T.grid(1, {c}, {hw}, {hw}, {c}, 3, 3):
        with T.block("B"):
            vn, vf, vy, vx, vc, vr, vs = T.axis.remap("SSSSRRR", [n, f, y, x, rc, ry, rx])
            with T.init():
                B[vn, vf, vy, vx] = T.float32(0)
            B[vn, vf, vy, vx] = B[vn, vf, vy, vx] + A[vn, vc, vy + vr, vx + vs] * W[vf, vc, vr, vs]
"""
    sch = Schedule(tir_mlir.parse(text))
    conv2d_window_unrolled(sch)
    return sch


def test_an_unrolled_window_updates_one_chain():
    """The nine taps of a 3x3 window add into one vector<4> accumulator per channel: one chain
    nine adds long, not nine chains, so it keeps mul + add (its FMAs ran 1.8x as long as
    TVM's mul + add code). Numbers as numpy's."""
    sch = _conv_window_unrolled(8, 16)
    adds = _adds(sch)
    assert len(adds) >= 9 and not [line for line in adds if "contract" in line]
    rng = np.random.default_rng(0)
    a = rng.random((1, 8, 18, 18), "float32")
    w = rng.random((8, 8, 3, 3), "float32")
    out = np.zeros((1, 8, 16, 16), "float32")
    tir_mlir.build(sch.mod)["main"](a, w, out)
    want = np.zeros_like(out)
    for r in range(3):
        for s in range(3):
            want[0] += np.einsum("cyx,fc->fyx", a[0, :, r : r + 16, s : s + 16], w[:, :, r, s])
    np.testing.assert_allclose(out, want, rtol=1e-4)
