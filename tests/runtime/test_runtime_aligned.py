"""Arrays handed to kernels by tir_mlir (nd.array/nd.empty, `tir-mlir run`, the tuner's runner)
start on a 64-byte boundary, as TVM's NDArray does, and keep their values."""

import numpy as np
import pytest

import tir_mlir
from tir_mlir.runtime import aligned
from tir_mlir.runtime.run_program import random_array


@pytest.mark.parametrize(
    "shape,dtype",
    [
        ((1024, 1024), "float32"),
        ((3, 5), "int8"),
        ((7,), "float64"),
        ((), "float32"),
        ((0, 4), "int32"),
    ],
)
def test_aligned_arrays(shape, dtype):
    src = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    for arr in (aligned.copy(src), tir_mlir.nd.array(src), aligned.empty(shape, dtype)):
        assert arr.flags.c_contiguous and (arr.size == 0 or arr.ctypes.data % 64 == 0)
        assert arr.shape == shape and arr.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(tir_mlir.nd.array(src).numpy(), src)
    assert not tir_mlir.nd.empty(shape, dtype).any()


def test_random_inputs_are_aligned():
    rng = np.random.default_rng(0)
    assert all(
        random_array((256, 300), d, rng).ctypes.data % 64 == 0
        for d in ("float32", "int8", "bool", "uint16")
    )


def test_kernels_compute_the_same_on_aligned_and_unaligned_arrays():
    mod = tir_mlir.parse("""
@T.prim_func
def add(A: T.Buffer((1000,), "float32"), B: T.Buffer((1000,), "float32")):
    for i in T.serial(1000):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(2)
""")
    lib = tir_mlir.build(mod)
    a = np.random.default_rng(1).random(1001, np.float32)
    for src in (a[1:], aligned.copy(a[1:])):
        out = np.zeros(1000, np.float32)
        lib["add"](src, out)
        np.testing.assert_allclose(out, 2 * a[1:])


def test_time_evaluator_times_aligned_copies_and_leaves_the_results_in_place():
    """numpy arrays off a 64-byte boundary are timed as TVM times its NDArrays (aligned copies);
    the arrays end with the contents the calls left, an accumulating kernel included."""
    lib = tir_mlir.build(
        tir_mlir.parse("""
@T.prim_func
def acc(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            B[vi] = B[vi] + A[vi]
""")
    )
    raw = np.zeros(64 * 2 + 16, np.float32)
    a, b = raw[4:68], raw[72:136]  # 16 bytes past an (at best) 64-byte boundary
    assert not aligned.is_aligned(a) or not aligned.is_aligned(b)
    a[...] = np.arange(64)
    res = lib.time_evaluator("acc", number=3, repeat=2)(a, b)
    assert len(res.results) == 2
    calls = round(float(b[1]))  # how many calls ran (warm-up included)
    assert calls >= 6
    np.testing.assert_array_equal(b, np.arange(64, dtype=np.float32) * calls)
    np.testing.assert_array_equal(a, np.arange(64))
