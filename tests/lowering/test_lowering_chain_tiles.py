"""affine-to-scf's FMA rule on a tile of accumulators inside the reduction loops: each element of
the tile is its own chain over the loops outside it, so a tile of 2 rows of vector<4>
accumulators is 2 chains, too few to hide the FMA's latency (mul + add, the add alone on the
chain), while 3 rows of vector<32 x f64> (4 zmm registers each) are 12 chains (FMAs). A chain
whose loops are short (a depthwise 3x3 window: 9 taps) ends before the core's scheduler queue
is full of its FMAs: the next tiles' chains run beside it, so it contracts whatever its tile.
Built for a named CPU (Sapphire Rapids), so the checks do not depend on the host."""

import numpy as np

import tir_mlir
from filecheck import filecheck
from tir_mlir import Schedule
from tir_mlir.passes.lowering import cpu_model as cm
from tir_mlir.passes.lowering.pipeline import emit_text
from schedule_everyday import depthwise
from workloads import matmul

SPR = "llvm -mcpu=sapphirerapids"

CONV_NHWC = """
@T.prim_func
def main(A: T.Buffer((1, 10, 10, 32), "float32"), W: T.Buffer((3, 3, 32, 32), "float32"),
         B: T.Buffer((1, 8, 8, 32), "float32")):
    T.func_attr({"tir.noalias": True})
    for n, h, w, co, rh, rw, ci in T.grid(1, 8, 8, 32, 3, 3, 32):
        with T.block("B"):
            vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, ci])
            with T.init():
                B[vn, vh, vw, vco] = T.float32(0)
            B[vn, vh, vw, vco] = B[vn, vh, vw, vco] + A[vn, vh + vrh, vw + vrw, vci] * W[
                vrh, vrw, vci, vco]
"""


def _conv_tile():
    """n, h, w0, co0, rh, rw, ci, w1, co1: 2 output columns (w1) x 4 channels (co1, vectorized)
    updated at every step of the reduction loops around them. (co0 is annotated, so
    loop-interchange does not run strips of it side by side inside the columns: the tile
    stays 2 chains.)"""
    sch = Schedule(tir_mlir.parse(CONV_NHWC))
    b = sch.get_block("B")
    n, h, w, co, rh, rw, ci = sch.get_loops(b)
    w0, w1 = sch.split(w, factors=[None, 2])
    co0, co1 = sch.split(co, factors=[None, 4])
    sch.reorder(n, h, w0, co0, rh, rw, ci, w1, co1)
    sch.vectorize(co1)
    sch.annotate(co0, "pragma_keep", 1)
    sch.decompose_reduction(b, rh)
    return sch


def _adds(sch, vector_type):
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    return [line for line in scf.splitlines() if "arith.addf" in line and vector_type in line]


def test_two_row_tile_keeps_the_add_alone_on_its_chains():
    sch = _conv_tile()
    adds = _adds(sch, "vector<4xf32>")
    assert adds and not [line for line in adds if "contract" in line]
    filecheck(
        emit_text(sch.mod.module, "asm", target=SPR).split("_mlir_ciface_main")[0],
        "CHECK-NOT: vfmadd\nCHECK: vmulps\nCHECK: vaddps\nCHECK-NOT: vfmadd",
    )
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, 10, 10, 32), "float32")
    wt = rng.standard_normal((3, 3, 32, 32), "float32")
    out = np.zeros((1, 8, 8, 32), "float32")
    tir_mlir.build(sch.mod)["main"](a, wt, out)
    want = sum(
        np.einsum("nhwc,cd->nhwd", a[:, r : r + 8, s : s + 8, :], wt[r, s])
        for r in range(3)
        for s in range(3)
    )
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


def test_wide_tile_has_chains_enough_for_fmas():
    """3 rows x vector<32 x f64> inside k: 3 x 4 zmm chains, as many as keep the FMA units busy."""
    sch = Schedule(tir_mlir.parse(matmul(48, 64, 64, dtype="float64", noalias=True)))
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 3])
    j0, j1 = sch.split(j, factors=[None, 32])
    sch.reorder(i0, j0, k, i1, j1)
    sch.vectorize(j1)
    adds = _adds(sch, "vector<32xf64>")
    assert adds and all("contract" in line for line in adds)


def test_half_the_fma_chains_take_fmas():
    """A depthwise 3x3 tile of 2 channels x 2 rows x 2 lanes (issue 28 case 0059): 4 vector<2>
    chains over the window loops. Sapphire Rapids hides the FMA's latency with 8 chains; at 4,
    mul + add would be 2 x 4 ops per step on the same ports, as long as the FMA chains wait:
    FMAs (0.177 -> 0.131 ms at 64 x 56 x 56, TVM 0.132); numbers as numpy's."""
    sch = Schedule(tir_mlir.parse(depthwise(4, 8)))
    b = sch.get_block("B")
    n, c, y, x, ry, rx = sch.get_loops(b)
    c0, c1 = sch.split(c, factors=[None, 2])
    y0, y1 = sch.split(y, factors=[None, 2])
    x0, x1 = sch.split(x, factors=[None, 2])
    sch.reorder(n, c0, y0, x0, ry, rx, c1, y1, x1)
    sch.vectorize(x1)
    sch.unroll(y1)
    sch.decompose_reduction(b, ry)
    adds = _adds(sch, "vector<2xf32>")
    assert adds and all("contract" in line for line in adds)
    rng = np.random.default_rng(0)
    a, w = rng.random((1, 4, 10, 10), "float32"), rng.random((4, 3, 3), "float32")
    out = np.full((1, 4, 8, 8), 7.0, "float32")
    tir_mlir.build(sch.mod)["main"](a, w, out)
    want = sum(
        a[:, :, dy : dy + 8, dx : dx + 8] * w[None, :, dy, dx, None, None]
        for dy in range(3)
        for dx in range(3)
    )
    np.testing.assert_allclose(out, want, rtol=1e-5)


def _depthwise_numbers(sch, c, hw):
    rng = np.random.default_rng(0)
    a, w = rng.random((1, c, hw + 2, hw + 2), "float32"), rng.random((c, 3, 3), "float32")
    out = np.full((1, c, hw, hw), 7.0, "float32")
    tir_mlir.build(sch.mod)["main"](a, w, out)
    want = sum(
        a[:, :, dy : dy + hw, dx : dx + hw] * w[None, :, dy, dx, None, None]
        for dy in range(3)
        for dx in range(3)
    )
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_short_window_chains_overlap_the_next_tiles():
    """A depthwise 3x3 tile of 2 rows x 2 lanes inside the window, the init inside (issue 28
    case 0023 of seed 1021720963): 2 vector<2> chains, each 9 taps long. The core holds 112
    waiting FMAs (Sapphire Rapids' scheduler queue in LLVM's model), the FMAs of 12 such chains,
    so the tiles after this one run beside it: FMAs (mul + add ran 1.4x TVM's FMAs at 64 x 56 x
    56). Numbers as numpy's."""
    sch = Schedule(tir_mlir.parse(depthwise(4, 8)))
    b = sch.get_block("B")
    n, c, y, x, ry, rx = sch.get_loops(b)
    y0, y1, y2 = sch.split(y, factors=[None, 2, 2])
    x0, x1 = sch.split(x, factors=[None, 2])
    sch.reorder(n, c, y0, x0, y1, ry, rx, y2, x1)
    sch.vectorize(x1)
    adds = _adds(sch, "vector<2xf32>")
    assert adds and all("contract" in line for line in adds)
    filecheck(
        emit_text(sch.mod.module, "asm", target=SPR).split("_mlir_ciface_main")[0],
        "CHECK-NOT: vaddps\nCHECK: vfmadd{{[0-9]+}}ps\nCHECK-NOT: vaddps",
    )
    _depthwise_numbers(sch, 4, 8)


def test_fma_queue_comes_from_llvms_model():
    """The scheduler queue the FMAs wait in, per named CPU (LLVM's scheduling models)."""
    queues = {"sapphirerapids": 112, "skylake-avx512": 60, "znver4": 64}
    for cpu, queue in queues.items():
        assert cm.cpu_model(f"llvm -mcpu={cpu}").fma_queue == queue, cpu
    arm = cm.cpu_model("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1")
    assert arm.fma_queue == cm.DEFAULT_FMA_QUEUE
