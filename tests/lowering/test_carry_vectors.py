"""Stage `carry-vectors`: a loop carries a strided vector accumulator as the vector, not as
one scalar per lane rebuilt and taken apart every iteration."""

import re

import numpy as np
from mlir import ir
from mlir.passmanager import PassManager

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from schedule_everyday import depthwise
from workloads import matmul


def _f64_row_vector_tile():
    """matmul 64 f64, i split by 8 with its 8 rows the vector lanes (C[i, j] strided), k split
    (k0, 8, 4 unrolled) outside it: the accumulator is a gather of 8 rows of C."""
    sch = Schedule(tir_mlir.parse(matmul(64, dtype="float64", noalias=True)))
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 8])
    k0, k1, k2 = sch.split(k, factors=[None, 8, 4])
    sch.reorder(i0, j, k0, k1, k2, i1)
    sch.fuse(i0, j)
    sch.vectorize(i1)
    sch.unroll(k2)
    return sch


def _canonical(text: str) -> str:
    """The scf text with dead lanes and folded constants gone (as the CLI prints it)."""
    with ir.Context():
        module = ir.Module.parse(text)
        PassManager.parse("builtin.module(canonicalize,cse)").run(module.operation)
        return str(module)


def _carried_lanes(loop_line: str, element: str) -> int:
    """How many lanes an `scf.for` line carries, when all it carries are vectors of `element`
    (one wide vector or the narrower ones gather_width cuts gathered lanes into), else 0."""
    carried = re.fullmatch(r".*-> \(([^()]*)\) \{", loop_line)
    if carried is None:
        return 0
    lanes = [re.fullmatch(rf"vector<(\d+)x{element}>", t) for t in carried.group(1).split(", ")]
    return sum(int(m.group(1)) for m in lanes if m) if all(lanes) else 0


def test_strided_vector_accumulator_is_carried_as_the_vector():
    sch = _f64_row_vector_tile()
    scf = _canonical(emit_text(sch.mod.module, "scf"))
    loops = [line for line in scf.splitlines() if "scf.for" in line and "iter_args" in line]
    assert len(loops) == 2 and all(_carried_lanes(line, "f64") == 8 for line in loops)
    # the lanes are built once before the loops and taken apart once after them
    assert scf.count("vector.extract") == 8
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 64)), rng.random((64, 64))
    c = np.full((64, 64), 7.0)
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-12)


def _depthwise_channel_tile():
    """depthwise 3x3 conv, 8 channels of 16x16: 4 channels unrolled, 8 rows the vector lanes
    (strided), the window loops inside: 32 accumulator lanes, more than a register file's
    scalars, as 4 vectors."""
    sch = Schedule(tir_mlir.parse(depthwise(8, 16)))
    _, c, y, x, _, _ = loops = sch.get_loops(sch.get_block("B"))
    c0, c1 = sch.split(c, factors=[None, 4])
    y0, y1 = sch.split(y, factors=[None, 8])
    sch.reorder(loops[0], c0, y0, x, loops[4], loops[5], c1, y1)
    sch.vectorize(y1)
    sch.unroll(c1)
    return sch


def test_lanes_of_vectors_are_counted_as_the_vectors():
    """The 32 lanes of the 4 accumulators fit as 4 registers: all are carried, by both window
    loops, as vectors (counted a register a lane, 26 were, and the other 6 went to memory and
    back at every step)."""
    sch = _depthwise_channel_tile()
    scf = _canonical(emit_text(sch.mod.module, "scf"))
    loops = [line for line in scf.splitlines() if "scf.for" in line and "iter_args" in line]
    assert len(loops) == 2
    assert all(_carried_lanes(line, "f32") == 32 for line in loops)
    rng = np.random.default_rng(0)
    a, w = rng.random((1, 8, 18, 18), "float32"), rng.random((8, 3, 3), "float32")
    b = np.full((1, 8, 16, 16), 7.0, "float32")
    tir_mlir.build(sch.mod)["main"](a, w, b)
    want = sum(
        a[:, :, dy : dy + 16, dx : dx + 16] * w[None, :, dy, dx, None, None]
        for dy in range(3)
        for dx in range(3)
    )
    np.testing.assert_allclose(b, want, rtol=1e-5)
