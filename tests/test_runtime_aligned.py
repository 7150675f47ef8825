"""Arrays handed to kernels by tir_mlir (nd.array/nd.empty, `tir-mlir run`, the tuner's runner)
start on a 64-byte boundary, as TVM's NDArray does, and keep their values."""
import numpy as np
import pytest

import tir_mlir
from tir_mlir.runtime import aligned
from tir_mlir.runtime.run_program import random_array


@pytest.mark.parametrize("shape,dtype", [((1024, 1024), "float32"), ((3, 5), "int8"),
                                         ((7,), "float64"), ((), "float32"), ((0, 4), "int32")])
def test_aligned_arrays(shape, dtype):
    src = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    for arr in (aligned.copy(src), tir_mlir.nd.array(src), aligned.empty(shape, dtype)):
        assert arr.flags.c_contiguous and (arr.size == 0 or arr.ctypes.data % 64 == 0)
        assert arr.shape == shape and arr.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(tir_mlir.nd.array(src).numpy(), src)
    assert not tir_mlir.nd.empty(shape, dtype).any()


def test_random_inputs_are_aligned():
    rng = np.random.default_rng(0)
    assert all(random_array((256, 300), d, rng).ctypes.data % 64 == 0
               for d in ("float32", "int8", "bool", "uint16"))


def test_kernels_compute_the_same_on_aligned_and_unaligned_arrays():
    mod = tir_mlir.parse('''
@T.prim_func
def add(A: T.Buffer((1000,), "float32"), B: T.Buffer((1000,), "float32")):
    for i in T.serial(1000):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(2)
''')
    lib = tir_mlir.build(mod)
    a = np.random.default_rng(1).random(1001, np.float32)
    for src in (a[1:], aligned.copy(a[1:])):
        out = np.zeros(1000, np.float32)
        lib["add"](src, out)
        np.testing.assert_allclose(out, 2 * a[1:])
