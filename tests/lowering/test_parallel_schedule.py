"""How a parallel loop's iterations reach the threads: guided when its trip count is known only
at run time (the last tile row of a symbolic kernel is partial), libomp's static default when
it is a constant (the tuner measured that split)."""

import numpy as np
import pytest

import tir_mlir
from tir_mlir.passes.lowering.pipeline import lower

PROGRAM = """
@T.prim_func
def scale(a: T.handle, b: T.handle):
    {decl}
    A = T.match_buffer(a, ({rows}, 256), "float32")
    B = T.match_buffer(b, ({rows}, 256), "float32")
    for i in T.parallel({rows}):
        for j in range(256):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
"""


def _program(rows: str) -> str:
    return PROGRAM.format(rows=rows, decl="n = T.int32()" if rows == "n" else "pass")


def _wsloops(rows: str):
    text = str(lower(tir_mlir.parse(_program(rows)).module, "llvm", "llvm-dialect"))
    return [line.strip() for line in text.splitlines() if "omp.wsloop" in line]


def test_a_loop_over_a_size_is_handed_out_guided():
    assert _wsloops("n") == ["omp.wsloop schedule(guided) {"]


def test_a_constant_loop_keeps_the_static_split():
    assert _wsloops("512") == ["omp.wsloop {"]


@pytest.mark.parametrize("n", [1, 3, 777])
def test_guided_loop_gives_numpys_numbers(n):
    lib = tir_mlir.build(tir_mlir.parse(_program("n")))
    a = np.random.default_rng(n).random((n, 256), dtype=np.float32)
    b = np.zeros_like(a)
    lib["scale"](a, b)
    np.testing.assert_array_equal(b, a * 2)
