"""Lowering bugs found by the schedule tests, each pinned by the smallest program that showed it."""

import numpy as np
import pytest

import tir_mlir
from shared_programs import CONV2D_C2_6X6 as CONV
from tir_mlir import Schedule
from workloads import matmul

MATMUL = matmul(16, k=12)


def _matmul_check(sch):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 12)).astype("float32")
    b = rng.standard_normal((12, 16)).astype("float32")
    c = np.full((16, 16), 7.0, "float32")
    tir_mlir.build(sch.mod, debug=True)["main"](a, b, c)  # raises on an out-of-bounds access
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def _matmul_loops():
    sch = Schedule(tir_mlir.parse(MATMUL))
    return sch, sch.get_loops(sch.get_block("C"))


# (a) T.where must guard T.init as well as the body ---------------------------------------------
def test_predicate_guards_init_fused_split():
    sch, (i, j, k) = _matmul_loops()
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    f = sch.fuse(i, j0)
    sch.split(f, factors=[3, None])  # 3 * 22 > 64: iterations past the end
    _matmul_check(sch)


def test_predicate_guards_peeled_init():
    """Spatial split with a tail, k innermost: the init is peeled out of the k loop and must
    still be guarded."""
    sch, (i, j, k) = _matmul_loops()
    sch.split(i, factors=[None, 5])
    _matmul_check(sch)


def test_predicate_on_reduction_axis():
    sch, (i, j, k) = _matmul_loops()
    sch.split(k, factors=[None, 5])  # 3 * 5 > 12
    _matmul_check(sch)


def test_predicate_guards_init_in_emitted_affine():
    sch, (i, j, k) = _matmul_loops()
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    sch.split(sch.fuse(i, j0), factors=[3, None])
    from tir_mlir.passes.lowering.pipeline import emit_text

    text = emit_text(sch.mod.module, "affine")
    # the init's store (of 0.0) sits inside the predicate's affine.if
    pred_if = text.index("affine.if")
    zero = text.index("arith.constant 0.000000e+00 : f32")
    assert pred_if < zero


# (b) a parallel loop nested in serial loops, around a peeled reduction --------------------------
@pytest.mark.parametrize("axis", range(4))
def test_parallel_spatial_loop_conv2d(axis):
    sch = Schedule(tir_mlir.parse(CONV))
    sch.parallel(sch.get_loops(sch.get_block("conv"))[axis])
    rng = np.random.default_rng(1)
    a = rng.standard_normal((1, 2, 6, 6)).astype("float32")
    w = rng.standard_normal((4, 2, 3, 3)).astype("float32")
    b = np.zeros((1, 4, 4, 4), "float32")
    tir_mlir.build(sch.mod, debug=True)["main"](a, w, b)
    win = np.lib.stride_tricks.sliding_window_view(a, (3, 3), axis=(2, 3))
    np.testing.assert_allclose(b, np.einsum("nchwyx,fcyx->nfhw", win, w), rtol=1e-5, atol=1e-5)


def test_parallel_loop_with_local_buffer_and_nested_loops():
    """A per-iteration buffer (cache_write) under a parallel loop: the buffer is allocated once
    per thread and the loops inside lower to several basic blocks."""
    sch, (i, j, k) = _matmul_loops()
    c = sch.get_block("C")
    i0, i1 = sch.split(i, factors=[None, 4])
    sch.reorder(i0, j, k, i1)
    cw = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(cw, j)
    sch.parallel(i0)
    _matmul_check(sch)


# (c) unroll pragmas -----------------------------------------------------------------------------
def _scf(sch):
    from tir_mlir.passes.lowering.pipeline import emit_text

    return emit_text(sch.mod.module, "scf")


def _split_k(annotations):
    """i, j, k0, k1 (k = 12 split by 4); annotations on k0."""
    sch, (i, j, k) = _matmul_loops()
    k0, k1 = sch.split(k, factors=[None, 4])
    for key, value in annotations.items():
        sch.annotate(k0, key, value)
    return sch


def test_auto_unroll_max_step_unrolls_inner_loops():
    # body: 2 stores (init under `if vk == 0`, update); k1: 4 x 2 = 8 steps <= 8;
    # k0 would need 3 x 8 = 24 > 8: stays a loop
    sch = _split_k({"pragma_auto_unroll_max_step": 8})
    text = _scf(sch)
    assert text.count("scf.for") == 3  # i, j, k0
    assert text.count("arith.mulf") == 4  # k1's body, four times
    _matmul_check(sch)


def test_auto_unroll_max_step_covers_the_annotated_loop():
    sch = _split_k({"pragma_auto_unroll_max_step": 24})
    text = _scf(sch)
    assert text.count("scf.for") == 2  # i, j
    assert text.count("arith.mulf") == 12
    _matmul_check(sch)


def test_auto_unroll_max_step_too_small():
    text = _scf(_split_k({"pragma_auto_unroll_max_step": 7}))
    assert text.count("scf.for") == 4 and text.count("arith.mulf") == 1


def test_unroll_explicit_zero_leaves_unroll_hints():
    sch = _split_k({"pragma_auto_unroll_max_step": 24, "pragma_unroll_explicit": 0})
    text = _scf(sch)
    assert text.count("scf.for") == 4 and text.count("arith.mulf") == 1
    assert text.count("{loop_annotation = #loop_annotation}") == 2  # k0 and k1
    assert "#llvm.loop_unroll<full = true>" in text
    _matmul_check(sch)


def test_sch_unroll_is_explicit():
    sch, (i, j, k) = _matmul_loops()
    k0, k1 = sch.split(k, factors=[None, 3])
    sch.unroll(k1)
    text = _scf(sch)
    assert text.count("scf.for") == 3 and text.count("arith.mulf") == 3
    _matmul_check(sch)


# (d) GFLOP/s counts the update's float ops -------------------------------------------------------
SOFTMAX_MAX = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), M: T.Buffer((4,), "float32"), S: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 8):
        with T.block("maxelem"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                M[vi] = T.float32(-3.4028234663852886e38)
            M[vi] = T.max(M[vi], A[vi, vk])
    for i, k in T.grid(4, 8):
        with T.block("sumsq"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + (A[vi, vk] - M[vi]) * (A[vi, vk] - M[vi])
"""
INT_SUM = """
@T.prim_func
def main(A: T.Buffer((4, 8), "int32"), S: T.Buffer((4,), "int32")):
    for i, k in T.grid(4, 8):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = 0
            S[vi] = S[vi] + A[vi, vk]
"""


def test_flop_count_follows_the_update_expression():
    from tir_mlir.runtime.run_program import flop_count

    assert flop_count(tir_mlir.parse(MATMUL).module, "main") == 2 * 16 * 16 * 12
    # max: 1 op per point; sum of squares: sub, sub, mul, add
    assert flop_count(tir_mlir.parse(SOFTMAX_MAX).module, "main") == 1 * 32 + 4 * 32
    assert flop_count(tir_mlir.parse(INT_SUM).module, "main") is None


def test_run_bench_reports_gflops_only_for_float_work():
    from tir_mlir.runtime.run_program import run_program

    lines = list(run_program(tir_mlir.parse(INT_SUM), bench=True))
    assert lines[-1].startswith("median:") and "GFLOP/s" not in lines[-1]
    lines = list(run_program(tir_mlir.parse(MATMUL), bench=True))
    assert "GFLOP/s" in lines[-1]


# FMA contraction, except on a chain that runs at its own latency ---------------------------------
def test_serial_reduction_chain_is_contracted():
    """A single loop-carried accumulation whose terms load across rows (the unscheduled matmul's
    B[k, j]) gets FMAs: the loop waits on its loads, and the FMA has fewer micro-ops."""
    from tir_mlir.passes.lowering.pipeline import emit_text

    mod = tir_mlir.parse(MATMUL)
    scf = emit_text(mod.module, "scf")
    assert [line for line in scf.splitlines() if "arith.addf" in line and "contract" in line]
    assert "vfmadd" in emit_text(mod.module, "asm").split("_mlir_ciface_main")[0]


ROW_DOT = """
@T.prim_func
def main(A: T.Buffer((64, 256), "float32"), W: T.Buffer((256,), "float32"),
         B: T.Buffer((64,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, k in T.grid(64, 256):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk] * W[vk]
"""


def test_chain_fed_from_contiguous_rows_keeps_the_add_alone_on_it():
    """One accumulator whose terms stream along rows: the loop runs at the chain's latency, where
    mul + add beats an FMA; numbers as numpy's."""
    from tir_mlir.passes.lowering.pipeline import emit_text

    mod = tir_mlir.parse(ROW_DOT)
    scf = emit_text(mod.module, "scf")
    assert [line for line in scf.splitlines() if "arith.addf" in line] and not [
        line for line in scf.splitlines() if "arith.addf" in line and "contract" in line
    ]
    rng = np.random.default_rng(0)
    a, w = rng.random((64, 256), dtype=np.float32), rng.random(256, dtype=np.float32)
    b = np.zeros(64, np.float32)
    tir_mlir.build(mod)["main"](a, w, b)
    np.testing.assert_allclose(b, a @ w, rtol=1e-5)


INT8_ROW_DOT = """
@T.prim_func
def main(A: T.Buffer((64, 256), "int8"), W: T.Buffer((256,), "float32"),
         B: T.Buffer((64,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, k in T.grid(64, 256):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + T.Cast("float32", A[vi, vk]) * W[vk]
"""


def test_chain_fed_by_an_integer_buffer_builds():
    """A float accumulator whose terms read an int8 buffer: the L1 rule sizes the int loads by
    their integer width (it raised an AttributeError on the int element type); numbers as
    numpy's."""
    rng = np.random.default_rng(0)
    a = rng.integers(-100, 100, (64, 256), dtype=np.int8)
    w = rng.random(256, dtype=np.float32)
    b = np.zeros(64, np.float32)
    tir_mlir.build(tir_mlir.parse(INT8_ROW_DOT))["main"](a, w, b)
    np.testing.assert_allclose(b, a.astype(np.float32) @ w, rtol=1e-5)


def test_independent_accumulators_are_contracted():
    """k outer, 16 accumulators C[i, j] along the inner j: FMAs."""
    from tir_mlir.passes.lowering.pipeline import emit_text

    sch, (i, j, k) = _matmul_loops()
    sch.reorder(k, j)
    scf = emit_text(sch.mod.module, "scf")
    assert [line for line in scf.splitlines() if "arith.addf" in line and "contract" in line]
    assert "vfmadd" in emit_text(sch.mod.module, "asm")


def test_chain_over_rows_that_stay_in_l1_keeps_the_add_alone_on_it():
    """conv1d NCW with c and f split and the reduction (c, r) innermost: one accumulator per
    output over 192 terms from 64 rows of A. The rows are 2,056 bytes apart and spread over the
    L1 sets, so the chain's loads hit L1 and it runs at the add's latency: mul + add, no FMA
    (a chain over rows that conflict in L1, the unscheduled matmul's, keeps its FMAs)."""
    from schedule_everyday import conv1d_ncw

    from tir_mlir.passes.lowering.pipeline import emit_text

    sch = Schedule(tir_mlir.parse(conv1d_ncw(64, 64, 512, 3)))
    _, f, x, c, r = sch.get_loops(sch.get_block("B"))
    f0, f1 = sch.split(f, factors=[None, 3])
    c0, c1, c2 = sch.split(c, factors=[None, 8, 2])
    sch.reorder(f0, x, f1, c0, r, c1, c2)
    scf = emit_text(sch.mod.module, "scf")
    adds = [line for line in scf.splitlines() if "arith.addf" in line]
    assert adds and not [line for line in adds if "contract" in line]
    asm = emit_text(sch.mod.module, "asm", target="llvm -mcpu=sapphirerapids")
    assert "vfmadd" not in asm and "vaddss" in asm
    rng = np.random.default_rng(0)
    a = rng.random((1, 64, 514), dtype=np.float32)
    w = rng.random((64, 64, 3), dtype=np.float32)
    b = np.zeros((1, 64, 512), np.float32)
    tir_mlir.build(sch.mod)["main"](a, w, b)
    want = sum(np.einsum("fc,cx->fx", w[:, :, t], a[0, :, t : t + 512]) for t in range(3))
    np.testing.assert_allclose(b[0], want, rtol=1e-4)


def test_a_vectorized_loop_whose_bounds_depend_on_an_outer_loop_builds():
    # The panel packer asked every loop of a vectorized block for a constant extent; a
    # triangular inner loop has none (its extent is a function of the outer loop).
    mod = tir_mlir.parse("""
@T.prim_func
def f(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i in range(16):
        for j in range(i + 1):
            with T.block("b"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, j)
                B[vi, vj] = A[vi, vj] * T.float32(2)
""")
    sch = Schedule(mod)
    sch.vectorize(sch.get_loops(sch.get_block("b"))[1])
    a = np.random.default_rng(0).random((16, 16), "float32")
    b = np.zeros((16, 16), "float32")
    tir_mlir.build(sch.mod)["f"](a, b)
    np.testing.assert_array_equal(b, np.tril(a * 2))
