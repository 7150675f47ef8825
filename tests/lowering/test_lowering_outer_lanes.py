"""Stage `outer-lanes`: a fused loop (rows and columns) that walks down a column inside it, or
holds nothing but the element, runs 16 of its columns as the vector lanes. Checked on the
loops around each store after the stage, on the scf (vector loads, no exp left scalar) and on
the numbers against numpy."""

import numpy as np

import tir_mlir
from tir_mlir.context import get_context
from tir_mlir.passes.lowering.outer_lanes import OuterLanes
from tir_mlir.passes.lowering.pipeline import emit_text
from schedule_everyday import bias_activation, transpose_add
from stage_loops import loops_around_stores

RNG = np.random.default_rng(0)
ROWS, COLS = 40, 256


def _silu(rows_split=None, inline=True):
    """SiLU over ROWS x COLS, the bias inlined; rows split by `rows_split`, the inner rows
    moved inside the columns and the rest fused with them, parallel (without a split: rows
    and columns fused, parallel)."""
    sch = tir_mlir.Schedule(tir_mlir.parse(bias_activation(ROWS, COLS, "silu")))
    if inline:
        sch.compute_inline(sch.get_block("bias"))
    i, j = sch.get_loops(sch.get_block("act"))
    if rows_split:
        i0, i1 = sch.split(i, factors=[None, rows_split])
        sch.reorder(i0, j, i1)
        sch.parallel(sch.fuse(i0, j))
    else:
        sch.parallel(sch.fuse(i, j))
    return sch.mod


def _scf(mod) -> str:
    with get_context():
        return emit_text(mod.module, "scf")


def _check_silu(mod):
    a = RNG.standard_normal((ROWS, COLS)).astype("float32") * 4
    bias = RNG.standard_normal(COLS).astype("float32")
    b = np.zeros((ROWS, COLS), "float32")
    tir_mlir.build(mod)["main"](a, bias, b)
    x = a + bias
    np.testing.assert_allclose(b, x / (1 + np.exp(-x)), rtol=1e-5, atol=1e-6)


def _vectorized(scf: str) -> bool:
    return "vector.load" in scf and "vector.store" in scf and "-> f32" not in scf


def test_a_column_walk_under_a_fused_parallel_loop_runs_columns_as_lanes():
    # 40 rows in tiles of 3 (the last tile guarded), each tile's rows walked per column
    mod = _silu(rows_split=3)
    stores = loops_around_stores(mod, OuterLanes.name)
    # (two versions: full tiles, and the guarded last tile) the fused loop's strip of lanes
    # outside the rows
    assert stores == [("i0_0_i1_fused_o", "i0_0_i1_fused", "i0_1")] * 2
    scf = _scf(mod)
    assert _vectorized(scf)
    assert "arith.divf %cst" not in scf.replace("vector<", "")  # no scalar sigmoid left
    _check_silu(mod)


def test_a_fused_element_loop_runs_columns_as_lanes():
    mod = _silu()
    assert "vector.store" in _scf(mod)
    _check_silu(mod)


def test_the_bias_buffer_read_along_the_lanes():
    # the bias block not inlined: X written by one nest, read by the fused one
    mod = _silu(rows_split=8, inline=False)
    assert "vector.store" in _scf(mod)
    _check_silu(mod)


def test_a_transpose_gathering_along_the_fused_loop_stays():
    sch = tir_mlir.Schedule(tir_mlir.parse(transpose_add(64)))
    i, j = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 4])
    sch.reorder(i0, j, i1)
    sch.parallel(sch.fuse(i0, j))
    stores = loops_around_stores(sch.mod, OuterLanes.name)
    assert stores == [("i0_0_i1_fused", "i0_1")]  # A[j, i] would be gathered along j
    a, b = (RNG.standard_normal((64, 64)).astype("float32") for _ in range(2))
    c = np.zeros((64, 64), "float32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a.T + b, rtol=1e-6)
