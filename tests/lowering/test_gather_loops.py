"""Stage `gather-loops`: a loop whose loads jump whole rows per step is left to LLVM's SLP
vectorizer (along the rows' contiguous window), not its loop vectorizer (one scalar load and
insert per lane), unless its arithmetic pays for the gathered lanes."""

import math
import re

import numpy as np
from mlir import ir
from mlir.passmanager import PassManager

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from schedule_everyday import bias_activation, maxpool

DISABLED = "#llvm.loop_annotation<vectorize = <disable = true>>"


def _maxpool_tile():
    """2x2 max pool, stride 2, 8 channels of 32x32: 8 output rows x 2 columns around the
    window, cached in a local tile copied out by a vectorized loop."""
    sch = Schedule(tir_mlir.parse(maxpool(8, 32)))
    block = sch.get_block("B")
    n, c, y, x, ry, rx = sch.get_loops(block)
    c0, c1 = sch.split(c, factors=[None, 8])
    y0, y1 = sch.split(y, factors=[None, 8])
    x0, x1 = sch.split(x, factors=[None, 2])
    sch.reorder(n, c0, y0, x0, c1, y1, x1, ry, rx)
    outer = sch.fuse(n, c0, y0)
    cache = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(cache, x0)
    sch.vectorize(sch.get_loops(cache)[-1])
    sch.parallel(outer)
    return sch


def _loops_by_extent(scf: str) -> dict:
    """Printed extent of each scf.for (its upper bound's constant name) -> whether its loop
    carries the vectorize-disable annotation (the annotation printed as an alias or inline)."""
    with ir.Context():
        module = ir.Module.parse(scf)
        PassManager.parse("builtin.module(canonicalize)").run(module.operation)
        out = {}

        def visit(op):
            if op.name == "scf.for":
                hi = op.operands[1].owner
                extent = ir.IntegerAttr(hi.attributes["value"]).value
                annotated = (
                    "loop_annotation" in op.attributes
                    and str(op.attributes["loop_annotation"]) == DISABLED
                )
                out.setdefault(extent, []).append(annotated)
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        return out


def test_rows_of_a_window_are_not_loop_vectorized():
    sch = _maxpool_tile()
    # (a named CPU: its 16 float lanes decide, whatever the host)
    loops = _loops_by_extent(emit_text(sch.mod.module, "scf", "llvm -mcpu=skylake-avx512"))
    # the 8 channels and the 8 rows inside them (the loop vectorizer's pick: 16-lane row
    # gathers) are left scalar, and so is the window's row (unrolled by LLVM anyway); the
    # output's 2 columns and the window's, contiguous, keep LLVM's choice, as does the
    # vectorized copy out (its loops hold vector ops); the 8 column pairs around the tile step
    # 4 columns, closer than a register's 16 lanes
    assert loops[8] == [False, True, True, False, False], loops
    assert loops[2] == [False, True, False], loops
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, 8, 32, 32)).astype("float32")
    b = np.zeros((1, 8, 16, 16), "float32")
    tir_mlir.build(sch.mod)["main"](a, b)
    np.testing.assert_array_equal(b, a.reshape(1, 8, 16, 2, 16, 2).max(axis=(3, 5)))


def test_a_column_of_gelu_rows_is_loop_vectorized():
    """A GELU walking down its columns, 16 rows 4 KiB apart per column (issue 28's case 0134):
    each gathered element feeds an inline erf of ~44 ops, so the rows' loops stay LLVM's, which
    vectorizes them (TVM's code: 4-lane vectors, each built from 4 scalar loads)."""
    sch = Schedule(tir_mlir.parse(bias_activation(64, 256, "gelu_erf")))
    sch.compute_inline(sch.get_block("bias"))
    i, j = sch.get_loops(sch.get_block("act"))
    i0, i1, i2 = sch.split(i, factors=[None, 4, 4])
    sch.reorder(i0, j, i1, i2)
    sch.fuse(i0, j)
    target = "llvm -mcpu=skylake-avx512"
    loops = _loops_by_extent(emit_text(sch.mod.module, "scf", target))
    assert loops[4] == [False, False], loops
    asm = emit_text(sch.mod.module, "asm", target)
    # erf's polynomials as packed FMAs (scalar ones: vfmadd...ss)
    assert len(re.findall(r"vfn?madd\d+ps", asm)) >= 20, asm
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((64, 256)) * 3).astype("float32")
    bias = rng.standard_normal(256).astype("float32")
    b = np.zeros_like(a)
    tir_mlir.build(sch.mod)["main"](a, bias, b)
    x = (a + bias).astype(np.float64)
    want = x * 0.5 * (1 + np.vectorize(math.erf)(x * 0.70710678))
    np.testing.assert_allclose(b, want, rtol=2e-6, atol=1e-6)
