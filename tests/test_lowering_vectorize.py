"""Stage vectorize-loops: `T.vectorized` loops become vector-dialect code when every access is
contiguous or uniform; otherwise they stay loops for LLVM's vectorizer. Numbers against numpy."""
import numpy as np

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text

MATMUL = '''
@T.prim_func
def main(A: T.Buffer((8, 12), "float32"), B: T.Buffer((12, 32), "float32"), C: T.Buffer((8, 32), "float32")):
    for i, j, k in T.grid(8, 32, 12):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''
TRANSPOSE = '''
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.max(A[vj, vi] * T.float32(2), T.float32(0))
'''
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
    assert "vector.load %arg1" in scf and "vector<16xf32>" in scf       # B[k, j0 * 16 + j1]
    assert "vector.broadcast" in scf                                     # A[i, k]
    assert "vector.store" in scf and "loop_vectorize" not in scf
    assert "vector.fma" in scf or "arith.addf" in scf and "vector<16xf32>" in scf
    a, b, c = _run(sch, (8, 12), (12, 32), (8, 32))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_odd_lane_count():
    sch = _matmul_k_outer(8)
    assert "vector<8xf32>" in emit_text(sch.mod.module, "scf")
    a, b, c = _run(sch, (8, 12), (12, 32), (8, 32))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_strided_access_stays_a_hinted_loop():
    sch = Schedule(tir_mlir.parse(TRANSPOSE))
    i, j = sch.get_loops(sch.get_block("B"))
    sch.vectorize(j)
    scf = emit_text(sch.mod.module, "scf")
    assert "vector.load" not in scf and "loop_vectorize" in scf
    a, b = _run(sch, (16, 16), (16, 16))
    np.testing.assert_allclose(b, np.maximum(a.T * 2, 0), rtol=1e-6)


def test_contiguous_elementwise_with_max():
    sch = Schedule(tir_mlir.parse(TRANSPOSE.replace("A[vj, vi]", "A[vi, vj]")))
    i, j = sch.get_loops(sch.get_block("B"))
    sch.vectorize(j)
    scf = emit_text(sch.mod.module, "scf")
    assert "arith.maximumf" in scf and "vector<16xf32>" in scf and "scf.for" in scf
    a, b = _run(sch, (16, 16), (16, 16))
    np.testing.assert_allclose(b, np.maximum(a * 2, 0), rtol=1e-6)


def test_uniform_value_is_broadcast_to_a_contiguous_store():
    sch = Schedule(tir_mlir.parse(TRANSPOSE.replace("A[vj, vi]", "A[vi, 0]")))
    i, j = sch.get_loops(sch.get_block("B"))
    sch.vectorize(j)
    scf = emit_text(sch.mod.module, "scf")
    assert "vector.broadcast" in scf and "vector.store" in scf
    a, b = _run(sch, (16, 16), (16, 16))
    np.testing.assert_allclose(b, np.repeat(np.maximum(a[:, :1] * 2, 0), 16, axis=1), rtol=1e-6)


def test_bool_buffer_loop_is_left_to_llvm():
    sch = Schedule(tir_mlir.parse('''
@T.prim_func
def main(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "bool")):
    for i, j in T.grid(4, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] > T.float32(0)
'''))
    sch.vectorize(sch.get_loops(sch.get_block("B"))[1])
    assert "vector.store" not in emit_text(sch.mod.module, "scf")
    a = RNG.standard_normal((4, 16)).astype("float32")
    b = np.zeros((4, 16), bool)
    tir_mlir.build(sch.mod)["main"](a, b)
    np.testing.assert_array_equal(b, a > 0)
