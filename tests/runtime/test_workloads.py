"""The generated programs of tests/support/workloads.py compute what their names say, at
non-square sizes and in other dtypes (the tests that use them rely on their shapes)."""

import numpy as np
import pytest
from workloads import matmul, mm_relu

import tir_mlir


@pytest.mark.parametrize("n, m, k, dtype", [(8, 4, 16, "float32"), (5, 5, 5, "float64")])
def test_matmul_computes_a_at_b(n, m, k, dtype):
    lib = tir_mlir.build(tir_mlir.parse(matmul(n, m, k, dtype=dtype)))
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, k)).astype(dtype), rng.standard_normal((k, m)).astype(dtype)
    c = np.zeros((n, m), dtype)
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_mm_relu_computes_relu_of_a_at_b():
    lib = tir_mlir.build(tir_mlir.parse(mm_relu(8, k=12)))
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((8, 12), "float32"), rng.standard_normal((12, 8), "float32")
    c = np.zeros((8, 8), "float32")
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5)


def test_options_appear_in_the_text():
    text = matmul(16, noalias=True, c_axis_separators=[1])
    assert 'T.func_attr({"tir.noalias": True})' in text
    assert 'C: T.Buffer((16, 16), "float32", axis_separators=[1])' in text
    assert "T.grid(16, 16, 16)" in text and "T.float32(0)" in text
