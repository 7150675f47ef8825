"""Stage vectorize-loops: `T.vectorized` loops become vector-dialect code when every access is
contiguous or uniform; otherwise they stay loops for LLVM's vectorizer. Numbers against numpy."""

import re

import numpy as np
import pytest

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text

from schedule_check import interp, random_args
from workloads import matmul

MATMUL = matmul(8, m=32, k=12)
TRANSPOSE = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.max(A[vj, vi] * T.float32(2), T.float32(0))
"""
RNG = np.random.default_rng(0)


def _run(sch, *shapes):
    args = [RNG.standard_normal(s).astype("float32") for s in shapes]
    tir_mlir.build(sch.mod)["main"](*args)
    return args


def _matmul_k_outer(j_factor):
    """i, j0, k, j1 with j1 (the inner j) vectorized."""
    sch = Schedule(tir_mlir.parse(MATMUL))
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, factors=[None, j_factor])
    sch.reorder(j0, k, j1)
    sch.vectorize(j1)
    sch.decompose_reduction(sch.get_block("C"), k)
    return sch


def test_contiguous_and_uniform_accesses_become_vector_ops():
    sch = _matmul_k_outer(16)
    scf = emit_text(sch.mod.module, "scf")
    assert "vector.load %arg1" in scf and "vector<16xf32>" in scf  # B[k, j0 * 16 + j1]
    assert "vector.broadcast" in scf  # A[i, k]
    assert "vector.store" in scf and "loop_vectorize" not in scf
    assert "vector.fma" in scf or "arith.addf" in scf and "vector<16xf32>" in scf
    a, b, c = _run(sch, (8, 12), (12, 32), (8, 32))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_odd_lane_count():
    sch = _matmul_k_outer(8)
    assert "vector<8xf32>" in emit_text(sch.mod.module, "scf")
    a, b, c = _run(sch, (8, 12), (12, 32), (8, 32))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_strided_loads_are_per_lane_scalar_loads():
    sch = Schedule(tir_mlir.parse(TRANSPOSE))
    i, j = sch.get_loops(sch.get_block("B"))
    sch.vectorize(j)
    scf = emit_text(sch.mod.module, "scf")
    assert "vector.from_elements" in scf and "vector.gather" not in scf
    assert "vector.store" in scf and "loop_vectorize" not in scf
    a, b = _run(sch, (16, 16), (16, 16))
    np.testing.assert_allclose(b, np.maximum(a.T * 2, 0), rtol=1e-6)


def test_contiguous_elementwise_with_max():
    sch = Schedule(tir_mlir.parse(TRANSPOSE.replace("A[vj, vi]", "A[vi, vj]")))
    i, j = sch.get_loops(sch.get_block("B"))
    sch.vectorize(j)
    scf = emit_text(sch.mod.module, "scf")
    # T.max is TVM's `a > b ? a : b` (one vmaxps), not IEEE maximum (passes/lowering/float_min_max.py)
    assert "arith.maximumf" not in scf and "vector<16xi1>" in scf and "arith.select" in scf
    a, b = _run(sch, (16, 16), (16, 16))
    np.testing.assert_allclose(b, np.maximum(a * 2, 0), rtol=1e-6)


def test_float_max_min_keep_tvm_semantics_with_nan():
    mod = tir_mlir.parse("""
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for i in T.serial(16):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = T.max(A[vi], B[vi]) + T.min(A[vi], B[vi]) * T.float32(0.5)
""")
    a = np.array([np.nan, 1, np.nan, -2] * 4, np.float32)
    b = np.array([3, np.nan, np.nan, 5] * 4, np.float32)
    want = np.where(a > b, a, b) + np.where(a < b, a, b) * np.float32(0.5)
    for vectorized in (False, True):
        sch = Schedule(mod)
        if vectorized:
            sch.vectorize(sch.get_loops(sch.get_block("C"))[0])
        c = np.zeros(16, np.float32)
        tir_mlir.build(sch.mod)["main"](a, b, c)
        np.testing.assert_array_equal(c, want)
    c = np.zeros(16, np.float32)
    tir_mlir.interpret(mod, "main", a, b, c)
    np.testing.assert_array_equal(c, want)


def test_uniform_value_is_broadcast_to_a_contiguous_store():
    sch = Schedule(tir_mlir.parse(TRANSPOSE.replace("A[vj, vi]", "A[vi, 0]")))
    i, j = sch.get_loops(sch.get_block("B"))
    sch.vectorize(j)
    scf = emit_text(sch.mod.module, "scf")
    assert "vector.broadcast" in scf and "vector.store" in scf
    a, b = _run(sch, (16, 16), (16, 16))
    np.testing.assert_allclose(b, np.repeat(np.maximum(a[:, :1] * 2, 0), 16, axis=1), rtol=1e-6)


def test_bool_buffer_stores_bytes():
    sch = Schedule(
        tir_mlir.parse("""
@T.prim_func
def main(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "bool")):
    for i, j in T.grid(4, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] > T.float32(0)
""")
    )
    sch.vectorize(sch.get_loops(sch.get_block("B"))[1])
    scf = emit_text(sch.mod.module, "scf")
    assert "memref<4x16xi8>, vector<16xi8>" in scf and "loop_vectorize" not in scf
    a = RNG.standard_normal((4, 16)).astype("float32")
    b = np.zeros((4, 16), bool)
    tir_mlir.build(sch.mod)["main"](a, b)
    np.testing.assert_array_equal(b, a > 0)


# --- conditions, masks, nested loops, non-contiguous accesses: against the interpreter ---


def _matmul(n, m, k, dtype):
    zero = "T.float32(0)" if dtype == "float32" else "T.int32(0)"
    return f'''
@T.prim_func
def main(A: T.Buffer(({n}, {k}), "{dtype}"), B: T.Buffer(({k}, {m}), "{dtype}"),
         C: T.Buffer(({n}, {m}), "{dtype}")):
    for i, j, k in T.grid({n}, {m}, {k}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = {zero}
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def _split_matmul(text, order, lanes=16):
    """j split by `lanes`, loops reordered to `order` (names i, j0, j1, k), j1 vectorized."""
    sch = Schedule(tir_mlir.parse(text))
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, factors=[None, lanes])
    loops = {"i": i, "j0": j0, "j1": j1, "k": k}
    sch.reorder(*[loops[x] for x in order.split(",")])
    sch.vectorize(j1)
    return sch


def _matches_interpreter(text, sch, func="main"):
    """The built scheduled program computes what the interpreter computes for the program."""
    args = random_args(sch.mod, func)
    got = [a.copy() for a in args]
    tir_mlir.build(sch.mod)[func](*got)
    for x, y in zip(interp(tir_mlir.parse(text), func, args), got):
        np.testing.assert_allclose(y, x, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("order", ["i,k,j0,j1", "i,j0,k,j1"])
def test_uniform_init_if_stays_scalar_around_vector_code(dtype, order):
    text = _matmul(8, 32, 12, dtype)
    sch = _split_matmul(text, order)
    scf = emit_text(sch.mod.module, "scf")
    init = scf[scf.index("scf.if") :]
    assert init.index("vector.store") < init.index("}")  # the init, vectorized in the if
    assert "loop_vectorize" not in scf and "maskedstore" not in scf
    _matches_interpreter(text, sch)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_non_dividing_split_masks_the_lanes(dtype):
    text = _matmul(8, 40, 12, dtype)  # 40 = 2 x 16 + 8: a T.where guard
    sch = _split_matmul(text, "i,k,j0,j1")
    scf = emit_text(sch.mod.module, "scf")
    assert "vector.maskedload" in scf and "vector.maskedstore" in scf
    assert "vector.reduction <or>" in scf and "loop_vectorize" not in scf
    _matches_interpreter(text, sch)


def test_uniform_loop_inside_the_vectorized_loop():
    text = _matmul(8, 32, 12, "float32")
    sch = _split_matmul(text, "i,j0,j1,k")
    scf = emit_text(sch.mod.module, "scf")
    k_loop = scf[scf.rindex("scf.for") :]
    assert "vector.load %arg1" in k_loop and "vector.store" in k_loop
    assert "loop_vectorize" not in scf
    _matches_interpreter(text, sch)


ELEMENTWISE = """
@T.prim_func
def main(A: T.Buffer((N, M), "DT"), B: T.Buffer((N, M), "DT"), C: T.Buffer((N, M), "DT")):
    for i, j in T.grid(N, M):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = EXPR
"""


def _elementwise(n, m, dtype, expr="A[vi, vj] + B[vi, vj]"):
    return (
        ELEMENTWISE.replace("N", str(n))
        .replace("M", str(m))
        .replace("DT", dtype)
        .replace("EXPR", expr)
    )


@pytest.mark.parametrize("m, vectorized", [(96, True), (20, False)])
def test_fused_loop_split_by_the_lanes(m, vectorized):
    """`(f * 16 + v) floordiv m` is the same on every lane when 16 divides m."""
    text = _elementwise(6, m, "float32")
    sch = Schedule(tir_mlir.parse(text))
    fused = sch.fuse(*sch.get_loops(sch.get_block("C")))
    sch.vectorize(sch.split(fused, factors=[None, 16])[1])
    scf = emit_text(sch.mod.module, "scf")
    assert ("vector.load" in scf) == vectorized and ("loop_vectorize" in scf) != vectorized
    _matches_interpreter(text, sch)


def test_masked_integer_division_never_divides_by_zero():
    """Switched-off lanes load 0 (past the row's end); they divide by 1 instead."""
    text = _elementwise(4, 20, "int32", "T.floordiv(A[vi, vj], B[vi, vj])")
    sch = Schedule(tir_mlir.parse(text))
    _, j = sch.get_loops(sch.get_block("C"))
    sch.vectorize(sch.split(j, factors=[None, 16])[1])
    assert "vector.maskedload" in emit_text(sch.mod.module, "scf")
    a = RNG.integers(-50, 50, (4, 20)).astype("int32")
    b = RNG.integers(1, 5, (4, 20)).astype("int32") * RNG.choice([-1, 1], (4, 20)).astype("int32")
    c = np.zeros((4, 20), "int32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_array_equal(c, a // b)


CONDITIONS = """
@T.prim_func
def main(A: T.Buffer((8, 40), "float32"), B: T.Buffer((8, 48), "float32"),
         X: T.Buffer((8, 48), "int32")):
    for i, j in T.grid(8, 48):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.if_then_else(vj >= 4 and vj < 44, A[vi, vj - 4], T.float32(0))
            if vj % 3 == 0:
                X[vi, vj] = vj
            elif vi < 4:
                X[vi, vj] = vi * 100
            else:
                X[vi, vj] = -vj
"""


def test_lane_varying_statement_if_and_if_then_else():
    sch = Schedule(tir_mlir.parse(CONDITIONS))
    _, j = sch.get_loops(sch.get_block("B"))
    sch.vectorize(sch.split(j, factors=[None, 16])[1])
    scf = emit_text(sch.mod.module, "scf")
    assert "vector.maskedload" in scf and "arith.select" in scf
    assert "arith.floordivsi" in scf and "vector<16xindex>" in scf  # vj % 3 on lanes
    assert "loop_vectorize" not in scf
    _matches_interpreter(CONDITIONS, sch)


PADDED_ROWS = """
@T.prim_func
def main(A: T.Buffer((8, 24), "float32"), B: T.Buffer((8, 24), "float32")):
    P = T.alloc_buffer((8, 26))
    for i, j in T.grid(8, 26):
        with T.block("pad"):
            vi, vj = T.axis.remap("SS", [i, j])
            P[vi, vj] = T.if_then_else(1 <= vj and vj < 25, A[vi, vj - 1], T.float32(0))
    for i, j, k in T.grid(8, 24, 3):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                B[vi, vj] = T.float32(0)
            B[vi, vj] = B[vi, vj] + P[vi, vj + vk] * T.float32(vk + 1)
"""


def test_masked_load_of_a_compacted_tile_runs_unguarded():
    """The pad inlined into a cache_read of A's row: the row tile (24, compact-buffers) is
    indexed through affine.apply, pure index arithmetic, so the masked load of the pad's
    window runs without a branch on "some lane on" (issue 28, seed 424113201 case 0001)."""
    sch = Schedule(tir_mlir.parse(PADDED_ROWS))
    sch.compute_inline(sch.get_block("pad"))
    b = sch.get_block("B")
    i, j, k = sch.get_loops(b)
    j0, j1 = sch.split(j, factors=[None, 8])
    sch.reorder(i, j0, k, j1)
    sch.compute_at(sch.cache_read(b, 0, "local"), i)
    sch.vectorize(j1)
    sch.decompose_reduction(b, k)
    scf = emit_text(sch.mod.module, "scf")
    assert "memref.alloca() : memref<24xf32>" in scf and "vector.maskedload" in scf
    assert "vector.reduction <or>" not in scf
    a, out = _run(sch, (8, 24), (8, 24))
    p = np.pad(a, ((0, 0), (1, 1)))
    # Three terms of magnitude ~1 summed with or without FMAs (a 3-tap chain contracts where
    # the next tiles' chains run beside it): their rounding differs by ulps of the terms.
    want = sum(p[:, k : k + 24] * (k + 1) for k in range(3))
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


LANE_ORDER = """
@T.prim_func
def main(A: T.Buffer((17,), "float32"), B: T.Buffer((2,), "float32"),
         C: T.Buffer((32,), "float32")):
    for i in T.vectorized(16):
        A[i + 1] = A[i] + T.float32(1)
    for i in T.vectorized(16):
        B[0] = A[i] * T.Cast("float32", i)
        C[i * 2] = A[i]
"""


def test_lane_order_is_kept():
    """A[i + 1] = A[i] + 1 reads what the previous lane wrote: it stays a loop. Then a store to
    one address keeps the last lane's value, a stride-2 store writes lane by lane, and the
    lane number used as data is a vector of indices."""
    sch = Schedule(tir_mlir.parse(LANE_ORDER))
    scf = emit_text(sch.mod.module, "scf")
    assert scf.count("scf.for") == 1 and "loop_vectorize" in scf
    # (the scattered C[i * 2] store cuts the 16 lanes into vectors LLVM prices lower:
    # gather_width.py)
    assert "vector.extract" in scf and "arith.index_cast" in scf
    assert re.search(r"vector<(4|8|16)xindex>", scf)
    _matches_interpreter(LANE_ORDER, sch)


LOCAL_TILE = """
@T.prim_func
def main(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    T_ = T.alloc_buffer((64,))
    for i0 in range(4):
        for i1 in T.vectorized(16):
            with T.block("T"):
                vi = T.axis.spatial(64, i0 * 16 + i1)
                T_[vi] = A[vi] * T.float32(2)
            with T.block("C"):
                vi = T.axis.spatial(64, i0 * 16 + i1)
                C[vi] = T_[vi] + T.float32(1)
"""


def test_buffer_used_inside_a_vectorized_loop_keeps_one_element_per_lane():
    """compact-buffers shrinks T_ to what one iteration of i0 touches (16 elements), not one
    iteration of the vectorized loop (1 element, shared by every lane)."""
    sch = Schedule(tir_mlir.parse(LOCAL_TILE))
    scf = emit_text(sch.mod.module, "scf")
    assert "memref.alloca() : memref<16xf32>" in scf
    assert "memref<16xf32>, vector<16xf32>" in scf and "loop_vectorize" not in scf
    _matches_interpreter(LOCAL_TILE, sch)


@pytest.mark.parametrize("n, m", [(6, 96), (8, 37)])
def test_long_vectorized_loop_runs_in_chunks_of_a_register(n, m):
    """A fused 576- (or 296-) lane loop: chunks of 16 lanes (+ a shorter last one)."""
    text = _elementwise(n, m, "float32", "A[vi, vj] * B[vi, vj]")
    sch = Schedule(tir_mlir.parse(text))
    sch.vectorize(sch.fuse(*sch.get_loops(sch.get_block("C"))))
    scf = emit_text(sch.mod.module, "scf")
    if m % 16 == 0:
        assert "vector<16xf32>" in scf and "loop_vectorize" not in scf
    else:  # a chunk may cross a row end (left to LLVM); the 8-lane last one may not
        assert "loop_vectorize" in scf and "vector<8xf32>" in scf
    _matches_interpreter(text, sch)


def test_buffer_with_a_strided_last_dimension_is_accessed_lane_by_lane():
    """storage_align on the last axis gives it stride 2: no vector.load/store there (they need
    a dense last dimension), one scalar access per lane instead."""
    text = """
@T.prim_func
def main(A: T.Buffer((8, 32), "float32"), C: T.Buffer((8, 32), "float32")):
    T_ = T.alloc_buffer((8, 32))
    for i, j in T.grid(8, 32):
        with T.block("T"):
            vi, vj = T.axis.remap("SS", [i, j])
            T_[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 32):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T_[vi, vj] + T.float32(1)
"""
    sch = Schedule(tir_mlir.parse(text))
    sch.storage_align(sch.get_block("T"), 0, 1, 16, 2)
    for b in ("T", "C"):
        sch.vectorize(sch.split(sch.get_loops(sch.get_block(b))[1], factors=[None, 16])[1])
    scf = emit_text(sch.mod.module, "scf")
    assert "strided<[64, 2]>" in scf and "vector.from_elements" in scf
    assert not [
        line
        for line in scf.splitlines()
        if "strided<" in line and ("vector.load" in line or "vector.store" in line)
    ]
    _matches_interpreter(text, sch)


def test_lane_uniform_where_guard_stays_a_scalar_if():
    """A non-dividing split of i guards the block with a condition on i only: no mask."""
    text = _elementwise(20, 32, "int32", "A[vi, vj] * B[vi, vj] + T.int32(3)")
    sch = Schedule(tir_mlir.parse(text))
    i, j = sch.get_loops(sch.get_block("C"))
    sch.split(i, factors=[None, 16])
    sch.vectorize(j)
    scf = emit_text(sch.mod.module, "scf")
    assert "vector.store" in scf[scf.index("scf.if") :] and "masked" not in scf
    _matches_interpreter(text, sch)


EXP = """
@T.prim_func
def main(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
    for i in T.serial(4096):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.exp(A[vi])
"""


@pytest.mark.parametrize("vectorized", [True, False])
def test_exp_is_inline_and_within_one_ulp_of_libm(vectorized):
    """Vector and scalar f32 exp alike (a scalar loop without calls is one LLVM vectorizes)."""
    sch = Schedule(tir_mlir.parse(EXP))
    (i,) = sch.get_loops(sch.get_block("B"))
    if vectorized:
        sch.vectorize(sch.split(i, factors=[None, 16])[1])
    assert "math.exp" not in emit_text(sch.mod.module, "scf")  # passes/lowering/vector_exp.py
    specials = [
        np.nan,
        np.inf,
        -np.inf,
        0.0,
        -0.0,
        88.72,
        88.73,
        -87.3,
        -103.9,
        89,
        -104,
        100,
        -200,
        1e-30,
        0.34657359,
    ]
    rng = np.random.default_rng(0)
    a = np.concatenate([rng.uniform(-110, 95, 4096 - len(specials)), specials]).astype(np.float32)
    b = np.zeros_like(a)
    tir_mlir.build(sch.mod)["main"](a, b)
    with np.errstate(over="ignore"):
        want = np.exp(a.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(b), np.isnan(want))
    exact = np.isinf(want) | (want == 0)
    np.testing.assert_array_equal(b[exact], want[exact])
    finite = np.isfinite(want) & (want >= np.finfo(np.float32).tiny)
    ulps = np.abs(b[finite].astype(np.float64) - want[finite]) / np.spacing(want[finite])
    assert ulps.max() <= 1.0
    subnormal = (want > 0) & (want < np.finfo(np.float32).tiny)
    np.testing.assert_allclose(b[subnormal], want[subnormal], rtol=0, atol=2e-45)


PADDED_ROW = """
@T.prim_func
def main(A: T.Buffer((4, 56), "float32"), B: T.Buffer((4, 56), "float32")):
    for y, x in T.grid(4, 56):
        with T.block("B"):
            vy, vx = T.axis.remap("SS", [y, x])
            B[vy, vx] = T.if_then_else(1 <= vx and vx < 55,
                                       A[vy, vx - 1] + A[vy, vx + 1], T.float32(0))
"""


def test_vectorized_loop_of_56_lanes_runs_in_register_wide_chunks():
    """A conv row of the tuner's: 56 lanes under a padding condition. As one vector<56> LLVM
    widened it and its masks to 64 lanes, lane by lane (a conv2d 46x slower than TVM's);
    3 x 16 + 8 lanes instead."""
    sch = Schedule(tir_mlir.parse(PADDED_ROW))
    sch.vectorize(sch.get_loops(sch.get_block("B"))[-1])
    scf = emit_text(sch.mod.module, "scf")
    assert "vector<56x" not in scf
    assert "vector<16xf32>" in scf and "vector<8xf32>" in scf and "vector.maskedload" in scf
    # masked loads and arithmetic only: no "any lane on?" test and branch per vector
    assert "vector.reduction <or>" not in scf and "scf.if" not in scf
    _matches_interpreter(PADDED_ROW, sch)


def _packed_matmul(tile, lanes):
    """B packed by transform_layout as B[j // tile, k, j % tile], j split by `lanes` and
    vectorized: a block body's `//` and `%` of the lane."""
    sch = Schedule(tir_mlir.parse(matmul(8, m=64, k=12)))
    c = sch.get_block("C")
    sch.transform_layout(c, ("read", 1), lambda k, j: (j // tile, k, j % tile))
    i, j, k = sch.get_loops(c)
    j0, j1 = sch.split(j, factors=[None, lanes])
    sch.reorder(i, j0, k, j1)
    sch.vectorize(j1)
    sch.decompose_reduction(c, k)
    return sch


@pytest.mark.parametrize("tile, lanes", [(16, 16), (32, 16), (16, 8)])
def test_packed_layout_read_through_floordiv_and_mod_is_a_vector_load(tile, lanes):
    sch = _packed_matmul(tile, lanes)
    scf = emit_text(sch.mod.module, "scf")
    assert "vector.load %arg1" in scf and f"vector<{lanes}xf32>" in scf
    assert "loop_vectorize" not in scf
    a, b, c = (RNG.standard_normal(s).astype("float32") for s in ((8, 12), (12, 64), (8, 64)))
    packed = np.ascontiguousarray(b.reshape(12, 64 // tile, tile).transpose(1, 0, 2))
    tir_mlir.build(sch.mod)["main"](a, packed, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_lanes_that_cross_a_packed_tile_are_not_one_vector_load():
    """16 lanes over tiles of 8: lane 8 is the next tile's row, 12 * 8 floats further."""
    sch = _packed_matmul(8, 16)
    scf = emit_text(sch.mod.module, "scf")
    assert "vector.load %arg1" not in scf
    a, b, c = (RNG.standard_normal(s).astype("float32") for s in ((8, 12), (12, 64), (8, 64)))
    packed = np.ascontiguousarray(b.reshape(12, 8, 8).transpose(1, 0, 2))
    tir_mlir.build(sch.mod)["main"](a, packed, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
