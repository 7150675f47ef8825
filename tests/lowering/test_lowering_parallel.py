"""A `parallel` loop becomes an OpenMP fork in the LLVM IR and still computes the right numbers."""

import numpy as np

import tir_mlir
from tir_mlir.passes.lowering.pipeline import emit_text

DATA = __import__("pathlib").Path(__file__).parent.parent / "data" / "programs"


def _parallel_matmul():
    sch = tir_mlir.Schedule(tir_mlir.load(str(DATA / "matmul.tir")))
    i, _, _ = sch.get_loops(sch.get_block("C"))
    sch.parallel(i)
    return sch.mod


def test_parallel_loop_forks_openmp_threads():
    mod = _parallel_matmul()
    assert "__kmpc_fork_call" in emit_text(mod.module, "llvm-ir")
    assert "__kmpc_fork_call" not in emit_text(
        tir_mlir.load(str(DATA / "matmul.tir")).module, "llvm-ir"
    )


def test_parallel_matmul_matches_numpy():
    mod = _parallel_matmul()
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((128, 128)).astype(np.float32) for _ in range(2))
    c = np.zeros((128, 128), np.float32)
    tir_mlir.build(mod)["matmul"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
