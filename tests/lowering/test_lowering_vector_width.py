"""Each function carries `min-legal-vector-width`, the widest vector its own ops spell out
(cpu_target.py): on a CPU whose tuning prefers 256-bit vectors, the wide vectors LLVM makes up
itself split into ymm registers instead of legalizing into zmm. Issue 28, 0551 of seed 1060771774
(depthwise, a 2 x 10 x 10 window copy that SLP read as `<56 x float>` masked loads across rows:
zmm loads beside ymm FMAs, 1.8x TVM). Built for a named CPU (Sapphire Rapids) so the checks do
not depend on the host; numbers against numpy."""

import re

import numpy as np

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from schedule_everyday import avgpool, depthwise

SPR = "llvm -mcpu=sapphirerapids"
C, HW = 4, 16


def _window_copy() -> Schedule:
    """0551's schedule at C x HW: 2 channels x 4 rows x 8 columns per tile, the input window it
    reads (2 x 10 x 10) copied ahead (cache_read at the column tile), columns vectorized."""
    sch = Schedule(tir_mlir.parse(depthwise(C, HW)))
    b = sch.get_block("B")
    n, c, h, w, rh, rw = sch.get_loops(b)
    c0, c1 = sch.split(c, factors=[None, 2])
    h0, h1, h2 = sch.split(h, factors=[None, 2, 4])
    w0, w1 = sch.split(w, factors=[None, 8])
    sch.reorder(n, c0, h0, w0, h1, rh, rw, c1, h2, w1)
    sch.fuse(n, c0)
    copy = sch.cache_read(b, 0, "global")
    sch.compute_at(copy, w0)
    sch.vectorize(w1)
    sch.unroll(c1)
    sch.decompose_reduction(b, rh)
    return sch


def _widths(ll: str) -> list:
    return [int(w) for w in re.findall(r'"min-legal-vector-width"="(\d+)"', ll)]


def test_window_copy_stays_in_ymm_registers():
    """vector<8xf32> code: the function says 256, and no instruction uses a zmm register."""
    sch = _window_copy()
    assert _widths(emit_text(sch.mod.module, "llvm-ir", target=SPR)) == [256]
    asm = emit_text(sch.mod.module, "asm", target=SPR)
    assert "vfmadd" in asm and "ymm" in asm
    assert "zmm" not in asm
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, C, HW + 2, HW + 2), "float32")
    w = rng.standard_normal((C, 3, 3), "float32")
    b = np.full((1, C, HW, HW), 7.0, "float32")
    tir_mlir.build(sch.mod, target=SPR)["main"](a, w, b)
    want = sum(
        a[:, :, i : i + HW, j : j + HW] * w[None, :, i, j, None, None]
        for i in range(3)
        for j in range(3)
    )
    np.testing.assert_allclose(b, want, rtol=1e-5, atol=1e-5)


def test_spelled_out_zmm_vectors_stay_legal():
    """A loop vectorized by 16 floats on an AVX-512 CPU is vector<16xf32>: the function says
    512 and its loads and stores stay zmm."""
    sch = Schedule(tir_mlir.parse(depthwise(C, HW)))
    b = sch.get_block("B")
    *_, w, rh, rw = sch.get_loops(b)
    sch.reorder(rh, rw, w)
    sch.vectorize(w)
    assert _widths(emit_text(sch.mod.module, "llvm-ir", target=SPR)) == [512]
    assert "zmm" in emit_text(sch.mod.module, "asm", target=SPR)


def test_scalar_code_says_zero():
    """No vector op at all: 0, as clang says for a plain C function."""
    sch = Schedule(tir_mlir.parse(depthwise(C, HW)))
    assert _widths(emit_text(sch.mod.module, "llvm-ir", target=SPR)) == [0]


POOL_C, POOL_HW = 8, 56  # 28 column pairs: LLVM's 8 lanes beat 4 only with the zmm groups


def _pool_tile() -> Schedule:
    """0412 of issue 28's seed 424113201 (3x3 average pool): 4 channels x 4 rows x 2 columns
    per tile, each output's 3x3 window unrolled by LLVM inside the loop over column pairs, so
    that loop reads the input rows and writes its tile 2 elements per iteration."""
    sch = Schedule(tir_mlir.parse(avgpool(POOL_C, POOL_HW)))
    s, b = sch.get_block("S"), sch.get_block("B")
    n, c, h, w, rh, rw = sch.get_loops(s)
    c0, c1 = sch.split(c, factors=[None, 4])
    h0, h1 = sch.split(h, factors=[None, 4])
    w0, w1 = sch.split(w, factors=[None, 2])
    sch.reorder(n, c0, h0, w0, c1, h1, w1, rh, rw)
    fused = sch.fuse(n, c0, h0)
    local = sch.cache_write(s, 0, "local")
    sch.reverse_compute_at(local, fused)
    sch.unroll(c1)
    sch.decompose_reduction(s, rh)
    sch.reverse_compute_at(b, fused)
    return sch


def test_strided_loop_keeps_the_widest_registers():
    """A loop left to LLVM's vectorizer that steps 2 elements along its rows: the function
    says 512, so LLVM's interleaved groups of 8 floats are one zmm load each and it takes
    8 lanes (ymm adds), not 4 (xmm only, with the width capped at the preferred 256)."""
    sch = _pool_tile()
    assert _widths(emit_text(sch.mod.module, "llvm-ir", target=SPR)) == [512]
    asm = emit_text(sch.mod.module, "asm", target=SPR)
    assert re.search(r"vaddps\s+%ymm", asm)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, POOL_C, POOL_HW + 2, POOL_HW + 2), "float32")
    b = np.full((1, POOL_C, POOL_HW, POOL_HW), 7.0, "float32")
    tir_mlir.build(sch.mod, target=SPR)["main"](a, b)
    want = sum(a[:, :, i : i + POOL_HW, j : j + POOL_HW] for i in range(3) for j in range(3))
    np.testing.assert_allclose(b, want * np.float32(0.1111111), rtol=1e-5, atol=1e-5)
