"""Stage `unroll-for-vectorize`: the small reduction loops inside a loop that walks memory along
rows are unrolled, so that LLVM vectorizes that loop. Checked on the loops the stage leaves
around each store, on the assembly (packed FMAs), and on the numbers against numpy."""

import re

import numpy as np
import pytest

import tir_mlir
from tir_mlir.passes.lowering import pipeline
from tir_mlir.passes.lowering.unroll_for_vectorize import UnrollForVectorize
from shared_programs import INT16X4_BUFFER, int16x4_buffer_reference
from stage_loops import loops_around_stores

RNG = np.random.default_rng(0)

# A conv tile as the tuner makes them: 4 output rows unrolled, around them the 2 x 3 reduction
# loops, around those the 16 `x` of a row.
CONV = """@T.prim_func
def main(P: T.Buffer((2, 3, 20), "float32"), W: T.Buffer((4, 2, 3), "float32"),
         B: T.Buffer((4, {x}), "float32")):
    T.func_attr({{"global_symbol": "main", "tir.noalias": True}})
    for x, rc, ry in T.grid({x}, 2, 3):
        for f in T.unroll(4):
            with T.block("B"):
                vf, vx, vc, vy = T.axis.remap("SSRR", [f, x, rc, ry])
                B[vf, vx] = B[vf, vx] + P[vc, vy, {p_x}] * W[vf, vc, vy]
"""


def _loops_around_stores(mod):
    return loops_around_stores(mod, UnrollForVectorize.name)


def _conv(x=16, p_x="vx + vy"):
    return tir_mlir.parse(CONV.format(x=x, p_x=p_x))


def _check_conv(mod, x=16, p_x="vx + vy"):
    """Build `_conv(x, p_x)` and compare B with numpy's loops."""
    p, w = RNG.random((2, 3, 20), np.float32), RNG.random((4, 2, 3), np.float32)
    b = RNG.random((4, x), np.float32)
    out = b.copy()
    tir_mlir.build(mod)["main"](p, w, out)
    ref = b.copy()
    for f in range(4):
        for vx in range(x):
            for c in range(2):
                for y in range(3):
                    ref[f, vx] += p[c, y, eval(p_x, {"vx": vx, "vy": y})] * w[f, c, y]
    np.testing.assert_allclose(out, ref, rtol=1e-5)


def test_reduction_loops_inside_a_row_loop_are_unrolled_and_it_vectorizes():
    mod = _conv()
    assert _loops_around_stores(mod) == [("x",)] * 24
    asm = pipeline.emit_text(mod.module, "asm")
    assert len(re.findall(r"vfmadd\d+ps", asm)) >= 6  # packed: 4 rows x 6 steps
    assert not re.findall(r"vfmadd\d+ss", asm)
    _check_conv(mod)


@pytest.mark.parametrize(
    "x, p_x, why",
    [
        (2, "vx + vy", "too few iterations to make a vector loop"),
        (16, "vx * 1 + vy * 0 + vx // 4", "a load that is not contiguous in x"),
    ],
)
def test_loops_stay_when_the_row_loop_would_not_vectorize(x, p_x, why):
    mod = _conv(x, p_x)
    assert set(_loops_around_stores(mod)) == {("x", "rc", "ry")}, why
    _check_conv(mod, x, p_x)


# A depthwise 3x3 tile: 6 columns outside 4 rows, the window innermost (a random everyday
# schedule: `split split reorder decompose_reduction`).
DEPTHWISE = """@T.prim_func
def main(A: T.Buffer((2, 10, 14), "float32"), W: T.Buffer((2, 3, 3), "float32"),
         B: T.Buffer((2, 8, 12), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for c, h, w, rh, rw in T.grid(2, 8, 12, 3, 3):
        with T.block("B"):
            vc, vh, vw, vrh, vrw = T.axis.remap("SSSRR", [c, h, w, rh, rw])
            with T.init():
                B[vc, vh, vw] = T.float32(0)
            B[vc, vh, vw] = B[vc, vh, vw] + A[vc, vh + vrh, vw + vrw] * W[vc, vrh, vrw]
"""


def _check_depthwise(sch):
    """Build the scheduled DEPTHWISE and compare B with numpy's sum of the 9 taps."""
    a, wt = RNG.random((2, 10, 14), np.float32), RNG.random((2, 3, 3), np.float32)
    out = np.zeros((2, 8, 12), np.float32)
    tir_mlir.build(sch.mod)["main"](a, wt, out)
    ref = sum(
        a[:, i : i + 8, j : j + 12] * wt[:, i, j][:, None, None] for i in range(3) for j in range(3)
    )
    np.testing.assert_allclose(out, ref, rtol=1e-5)


def test_a_depthwise_tile_of_six_columns_vectorizes_them():
    """Fewer columns than a zmm's lanes but more than an xmm's: unrolled here, LLVM vectorizes
    the 6 columns (on its own it unrolled the rows and window and left the columns scalar)."""
    sch = tir_mlir.Schedule(tir_mlir.parse(DEPTHWISE))
    b = sch.get_block("B")
    c, h, w, rh, rw = sch.get_loops(b)
    h0, h1 = sch.split(h, factors=[None, 4])
    w0, w1 = sch.split(w, factors=[None, 6])
    sch.reorder(c, h0, w0, w1, h1, rh, rw)
    sch.decompose_reduction(b, rh)
    asm = pipeline.emit_text(sch.mod.module, "asm")
    assert len(re.findall(r"vfmadd\d+ps", asm)) >= 9  # 4 rows x 9 taps, packed
    assert not re.findall(r"vmulss|vfmadd\d+ss", asm)
    _check_depthwise(sch)


def test_a_short_loop_around_more_outputs_than_its_iterations_keeps_them():
    """4 columns around 8 rows: unrolled, LLVM's one xmm vector of columns did less than what
    it made of the rows itself (an avg pool's 4 columns around 32 channels: 1.6x slower); the
    loops stay."""
    sch = tir_mlir.Schedule(tir_mlir.parse(DEPTHWISE))
    b = sch.get_block("B")
    c, h, w, rh, rw = sch.get_loops(b)
    w0, w1 = sch.split(w, factors=[None, 4])
    sch.reorder(c, w0, w1, h, rh, rw)
    assert ("c", "w_0", "w_1", "h", "rh", "rw") in set(_loops_around_stores(sch.mod))
    _check_depthwise(sch)


# A conv1d row tile (a random everyday schedule, `split reorder`): 7 columns around the whole
# 16 x 3 reduction, one output per column.
CONV1D = """@T.prim_func
def main(A: T.Buffer((16, 23), "float32"), W: T.Buffer((4, 16, 3), "float32"),
         B: T.Buffer((4, 21), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for f, x, rc, rx in T.grid(4, 21, 16, 3):
        with T.block("B"):
            vf, vx, vc, vr = T.axis.remap("SSRR", [f, x, rc, rx])
            with T.init():
                B[vf, vx] = T.float32(0)
            B[vf, vx] = B[vf, vx] + A[vc, vx + vr] * W[vf, vc, vr]
"""


def test_a_short_loop_around_only_its_reduction_keeps_it():
    """7 columns around a 16 x 3 reduction onto each column's one output: unrolled, LLVM left the
    columns scalar, one chain of FMAs each (a conv1d's 64 x 3: 1.3-1.9x TVM's time); the
    reduction loops stay."""
    sch = tir_mlir.Schedule(tir_mlir.parse(CONV1D))
    b = sch.get_block("B")
    f, x, rc, rx = sch.get_loops(b)
    sch.split(x, factors=[None, 7])
    assert ("f", "x_0", "x_1", "rc", "rx") in set(_loops_around_stores(sch.mod))
    a, w = RNG.random((16, 23), np.float32), RNG.random((4, 16, 3), np.float32)
    out = np.zeros((4, 21), np.float32)
    tir_mlir.build(sch.mod)["main"](a, w, out)
    ref = sum(w[:, :, r] @ a[:, r : r + 21] for r in range(3))
    np.testing.assert_allclose(out, ref, rtol=1e-5)


def test_a_buffer_of_vector_elements_builds():
    """A loop storing `int16x4` elements (64 bits each) is measured by the vector's bits, not
    asked for a scalar width (the stage asserted: 'vector<4xi16> has no bit width')."""
    mod = tir_mlir.parse(INT16X4_BUFFER)
    a = np.arange(32, dtype="int16").reshape(4, 8)
    b = np.zeros_like(a)
    tir_mlir.build(mod)["f"](a, b)
    np.testing.assert_array_equal(b, int16x4_buffer_reference(a))
