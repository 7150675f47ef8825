"""affine-to-scf's FMA rule on accumulators it used to miss, so they kept FMA chains bound by the
FMA's latency (issue 28, conv2d NHWC):
- an accumulator vectorized across rows (`B[2 * i + lane, ...]`): read lane by lane into a
  `vector.from_elements`, written back lane by lane through `vector.extract`s. One vector<2>
  chain over the 3 x 3 x 32 reduction: mul + add (cases 0967, 0742 of seed 791440216: 3.35 ->
  1.87 and 2.94 -> 1.81 ms, TVM 1.95 and 1.82);
- a cache-write accumulator whose address no loop changes (`acc[0]`), reset before each run of
  the reduction loops: its chain is those loops, not every loop around them up to the parallel
  one (which made it look too long to stay in L2). One chain per unrolled copy: mul + add (case
  0618: 5.81 -> 3.47 ms, TVM 3.25);
- a tile inside an unrolled reduction loop (`ci_1`): unrolling copies the tile's loops, so each
  copy's address is in other loop IVs, and each copy counted as chains of its own (16 copies
  of 2 rows: 32 chains, FMAs). The copies' loops run over the same values, so they extend
  the same 2 vector<4> chains: mul + add (case 0678 of seed 2022208947).
Built for a named CPU (Sapphire Rapids), so the checks do not depend on the host; numbers
against numpy."""

import numpy as np

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from schedule_everyday import conv2d_nhwc

SPR = "llvm -mcpu=sapphirerapids"
C, F, HW = 32, 16, 14


def _adds(sch, value_type):
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    return [line for line in scf.splitlines() if "arith.addf" in line and f": {value_type}" in line]


def _check_numbers(sch):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, HW + 2, HW + 2, C), "float32")
    w = rng.standard_normal((3, 3, C, F), "float32")
    out = np.full((1, HW, HW, F), 7.0, "float32")
    tir_mlir.build(sch.mod)["main"](a, w, out)
    want = sum(
        np.einsum("nhwc,cd->nhwd", a[:, r : r + HW, s : s + HW, :], w[r, s])
        for r in range(3)
        for s in range(3)
    )
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


def test_accumulator_vectorized_across_rows_is_one_chain():
    """Rows 2 i and 2 i + 1 in the lanes of one vector<2>, the reduction loops inside (under the
    columns `w`, whose stores jump the output channels, and the output channels in pairs:
    lane-interchange keeps the rows' lanes; under 4 contiguous channels or more it would trade
    them with the channels)."""
    sch = Schedule(tir_mlir.parse(conv2d_nhwc(C, F, HW)))
    n, h, w, co, rh, rw, ci = sch.get_loops(sch.get_block("B"))
    h0, h1 = sch.split(h, factors=[None, 2])
    co0, co1 = sch.split(co, factors=[None, 2])
    sch.reorder(n, h0, co0, co1, w, rh, rw, ci, h1)
    sch.vectorize(h1)
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert "vector.from_elements" in scf and "vector.extract" in scf  # lane by lane
    adds = _adds(sch, "vector<2xf32>")
    assert adds and not [line for line in adds if "contract" in line]
    _check_numbers(sch)


def test_cache_write_accumulator_chain_ends_at_its_init():
    """2 rows unrolled outside the reduction loops, each accumulated in `acc[r]` (cache_write
    local, reverse_compute_at under the output channel): 2 chains one after the other."""
    sch = Schedule(tir_mlir.parse(conv2d_nhwc(C, F, HW)))
    b = sch.get_block("B")
    n, h, w, co, rh, rw, ci = sch.get_loops(b)
    h0, h1 = sch.split(h, factors=[None, 2])
    sch.reorder(n, h0, w, co, h1, rh, rw, ci)
    outer = sch.fuse(n, h0)
    sch.reverse_compute_at(sch.cache_write(b, 0, "local"), co)
    sch.parallel(outer)
    sch.unroll(h1)
    adds = _adds(sch, "f32")
    assert len(adds) == 2 and not [line for line in adds if "contract" in line]
    _check_numbers(sch)


def test_tile_inside_an_unrolled_reduction_loop_is_its_own_chains():
    """2 rows x vector<4> output channels inside an unrolled 16-step `ci_1`."""
    sch = Schedule(tir_mlir.parse(conv2d_nhwc(C, F, HW)))
    n, h, w, co, rh, rw, ci = sch.get_loops(sch.get_block("B"))
    h0, h1 = sch.split(h, factors=[None, 2])
    co0, co1 = sch.split(co, factors=[None, 4])
    ci0, ci1 = sch.split(ci, factors=[None, 16])
    sch.reorder(n, h0, w, co0, rh, rw, ci0, ci1, h1, co1)
    sch.vectorize(co1)
    sch.unroll(ci1)
    adds = _adds(sch, "vector<4xf32>")
    assert len(adds) == 2 * 16 and not [line for line in adds if "contract" in line]
    _check_numbers(sch)
