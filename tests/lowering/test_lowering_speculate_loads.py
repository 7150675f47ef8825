"""speculate-loads: a padded input's guarded reads (`T.if_then_else` of an inlined pad) in a
conv tile whose accumulators the loops carry are unconditional loads at clamped indices and a
select, so the loop body is one block. The numbers against numpy cover the border (where the
unclamped index is -1 or past the end: the first and last rows and columns) and a split of the
input channels that does not divide (its last step a version of its own)."""

import numpy as np
import pytest

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from schedule_everyday import conv2d_nchw

C, F, HW = 16, 8, 10


def _program() -> str:
    return conv2d_nchw(C, F, HW)


def _tile(channels: int) -> Schedule:
    """4 filters x 2 rows of accumulators per column, the input channels split by `channels`
    and unrolled inside the 3 x 3 window, the init decomposed at the channel steps."""
    sch = Schedule(tir_mlir.parse(_program()))
    sch.compute_inline(sch.get_block("pad"))
    b = sch.get_block("B")
    n, f, h, w, c, kh, kw = sch.get_loops(b)
    f0, f1 = sch.split(f, factors=[None, 4])
    h0, h1 = sch.split(h, factors=[None, 2])
    c0, c1 = sch.split(c, factors=[None, channels])
    sch.reorder(n, f0, h0, w, c0, kh, kw, c1, f1, h1)
    sch.unroll(c1)
    sch.decompose_reduction(b, c0)
    return sch


def _conv(a, w):
    p = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((1, F, HW, HW), np.float32)
    for kh in range(3):
        for kw in range(3):
            out += np.einsum("nchw,fc->nfhw", p[:, :, kh : kh + HW, kw : kw + HW], w[:, :, kh, kw])
    return out


@pytest.mark.parametrize("channels", [8, 12])
def test_padded_reads_of_a_carried_tile_are_selected(channels):
    """The tile's reads of the padded input select between a load and the pad (the llvm
    dialect holds f32 selects; before, each read was a branch around its load); numbers."""
    sch = _tile(channels)
    llvm = emit_text(sch.mod.module, "llvm-dialect")
    assert "llvm.select" in llvm and ": i1, f32" in llvm, llvm
    rng = np.random.default_rng(0)
    a = rng.random((1, C, HW, HW), dtype=np.float32)
    w = rng.random((F, C, 3, 3), dtype=np.float32)
    b = np.full((1, F, HW, HW), np.nan, np.float32)
    tir_mlir.build(sch.mod)["main"](a, w, b)
    np.testing.assert_allclose(b, _conv(a, w), rtol=1e-4, atol=1e-4)


def test_a_read_outside_carried_loops_keeps_its_branch():
    """Unscheduled, the pad is a nest of its own that carries nothing: its guarded read stays
    a branch (no f32 select)."""
    llvm = emit_text(tir_mlir.parse(_program()).module, "llvm-dialect")
    assert ": i1, f32" not in llvm, llvm
