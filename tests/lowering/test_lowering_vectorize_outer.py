"""Stage vectorize-loops on a `T.vectorized` loop whose body holds a serial loop (outer-loop
vectorization): the inner loop runs once on vectors of the lanes. A `cache_read` at the inner
loop stores an element and reads it back on every lane; that store and load see only their own
lane's element and do not keep the loop from widening. Numbers against numpy."""

import numpy as np

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text

from schedule_everyday import matmul as cast_matmul
from workloads import matmul

RNG = np.random.default_rng(0)
ROW_SUM = """
@T.prim_func
def main(A: T.Buffer((128, 8), "float32"), B: T.Buffer((128,), "float32")):
    for i, k in T.grid(128, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""


def _outer_vectorized(program: str) -> Schedule:
    """C's j loop holds the whole k reduction; vectorize j (as the writeback's last loop)."""
    sch = Schedule(tir_mlir.parse(program))
    block = sch.get_block("C")
    i, _, k = sch.get_loops(block)
    a_local = sch.cache_read(block, 0, "local")
    sch.compute_at(a_local, k)
    sch.storage_align(a_local, 0, 0, 16, 1)
    c_local = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(c_local, sch.get_loops(block)[1])
    sch.vectorize(sch.get_loops(c_local)[-1])
    sch.parallel(i)
    return sch


def test_loop_over_a_serial_reduction_becomes_vector_code():
    sch = _outer_vectorized(matmul(8, m=32, k=12))
    scf = emit_text(sch.mod.module, "scf")
    assert "vector.load %arg1" in scf  # B[k, j:j + 32], contiguous in the lane
    assert "vector.broadcast" in scf  # A_local[0, k], the same on every lane
    assert "iter_args(%arg5 = " in scf and "-> (vector<32xf32>)" in scf  # carried accumulators
    assert "loop_vectorize" not in scf
    a, b = (RNG.standard_normal(s).astype("float32") for s in ((8, 12), (12, 32)))
    c = np.zeros((8, 32), "float32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_int8_loop_is_cut_into_register_wide_vectors():
    """256 int8 lanes: vectors of one register's int8 (64 on AVX-512, 16 on SSE), their int32
    accumulators carried across k."""
    sch = _outer_vectorized(cast_matmul(16, 256, 32, "int8", "int32"))
    scf = emit_text(sch.mod.module, "scf")
    lanes = int(scf.split("vector.load %arg1")[1].split("vector<")[1].split("xi8>")[0])
    assert lanes < 256 and f"-> (vector<{lanes}xi32>)" in scf
    a, b = (RNG.integers(-128, 128, s).astype("int8") for s in ((16, 32), (32, 256)))
    c = np.zeros((16, 256), "int32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_array_equal(c, a.astype("int32") @ b.astype("int32"))


def _run_lane_by_lane(program: str, *arrays):
    """Check that `program`'s vectorized loop is not widened (no vector load on the scf
    stage), then build it and run it on `arrays`."""
    sch = Schedule(tir_mlir.parse(program))
    assert "vector.load" not in emit_text(sch.mod.module, "scf")
    tir_mlir.build(sch.mod)["main"](*arrays)


def test_a_load_of_another_lanes_store_keeps_the_loop():
    """A uniform element read before the lane stores it holds what the previous lane stored
    last: the lanes depend on each other and the loop is not widened."""
    program = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    T_acc = T.alloc_buffer((1,), "float32")
    T_acc[0] = T.float32(0)
    for j in T.vectorized(16):
        for k in range(2):
            B[j] = T_acc[0]
            T_acc[0] = T_acc[0] + A[0]
"""
    a = RNG.standard_normal(16).astype("float32")
    b = np.zeros(16, "float32")
    _run_lane_by_lane(program, a, b)
    np.testing.assert_allclose(b, (2 * np.arange(16) + 1) * a[0], rtol=1e-5)


AVX512 = "llvm -mcpu=skylake-avx512"


def test_long_loop_over_a_reduction_is_cut_into_chunks_of_several_registers():
    """256 f32 lanes: one register per chunk would run each chunk's k steps as one chain of
    dependent adds; the chunks take the registers of the FMA chains the CPU needs (Skylake
    server: 8), up to MAX_LANES (64)."""
    sch = _outer_vectorized(matmul(8, m=256, k=12))
    scf = emit_text(sch.mod.module, "scf", target=AVX512)
    assert "-> (vector<64xf32>)" in scf and "vector<16xf32>" not in scf
    a, b = (RNG.standard_normal(s).astype("float32") for s in ((8, 12), (12, 256)))
    c = np.zeros((8, 256), "float32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_gathered_lanes_keep_chunks_of_one_register():
    """Lanes over rows of a row sum (each lane's element a row apart: gathered): chunks stay one
    register wide, the inserts and not the chain bound them."""
    sch = Schedule(tir_mlir.parse(ROW_SUM))
    block = sch.get_block("B")
    i, _ = sch.get_loops(block)
    out = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(out, i)
    sch.vectorize(sch.get_loops(out)[-1])
    scf = emit_text(sch.mod.module, "scf", target=AVX512)
    assert "vector<16xf32>" in scf and "vector<64xf32>" not in scf
    a = RNG.standard_normal((128, 8)).astype("float32")
    b = np.zeros(128, "float32")
    tir_mlir.build(sch.mod)["main"](a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-4, atol=1e-4)


def test_a_store_between_keeps_the_loop():
    """The uniform element stored again (each lane its own value) before the load: the load
    reads what one lane stored, and the lanes are not widened."""
    program = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    T_acc = T.alloc_buffer((1,), "float32")
    for j in T.vectorized(16):
        for k in range(2):
            T_acc[0] = A[0]
            T_acc[0] = A[j] + T.float32(k)
            B[j] = T_acc[0]
"""
    a = RNG.standard_normal(16).astype("float32")
    b = np.zeros(16, "float32")
    _run_lane_by_lane(program, a, b)
    np.testing.assert_allclose(b, a + 1, rtol=1e-6)


def test_a_store_to_another_buffer_that_may_alias_keeps_the_loop():
    """The store between writes C, not B; but B and C are two arguments of a function without
    `tir.noalias`, so they may be one buffer (here they are: the caller passes one array for
    both) and the load of B[0] reads what one lane stored into C[0]: the lanes are not widened."""
    program = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((1,), "float32"),
         C: T.Buffer((1,), "float32"), D: T.Buffer((16,), "float32")):
    for j in T.vectorized(16):
        for k in range(2):
            B[0] = A[0]
            C[0] = A[j] + T.float32(k)
            D[j] = B[0]
"""
    a = RNG.standard_normal(16).astype("float32")
    acc = np.zeros(1, "float32")
    d = np.zeros(16, "float32")
    _run_lane_by_lane(program, a, acc, acc, d)
    np.testing.assert_allclose(d, a + 1, rtol=1e-6)
