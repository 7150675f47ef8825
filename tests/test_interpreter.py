"""The reference interpreter against numpy, and the compiled code against the interpreter."""
import numpy as np
import pytest

import tir_mlir
from tir_mlir.errors import OutOfBoundsError

import lowering_programs as P

RNG = np.random.default_rng(1)


def test_matmul_with_init():
    a, b = RNG.random((6, 6), np.float32), RNG.random((6, 6), np.float32)
    c = np.full((6, 6), 99, np.float32)
    tir_mlir.interpret(P.matmul(6), "matmul", a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_int8_matmul_wraps_like_hardware():
    a = RNG.integers(-128, 128, (5, 5)).astype(np.int8)
    b = RNG.integers(-128, 128, (5, 5)).astype(np.int8)
    c = np.zeros((5, 5), np.int32)
    tir_mlir.interpret(P.matmul(5, "i8", "i32"), "matmul", a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))
    c8 = np.zeros((5, 5), np.int8)
    tir_mlir.interpret(P.matmul(5, "i8", "i8"), "matmul", a, b, c8)
    np.testing.assert_array_equal(c8, (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int8))


def test_predicate_floormod_sigmoid_match_compiled_code():
    a = RNG.uniform(-3, 3, 21).astype(np.float32)
    want, got = np.zeros(21, np.float32), np.zeros(21, np.float32)
    tir_mlir.interpret(P.split_where(21, 4), "where", a, want)
    v = np.arange(21)
    np.testing.assert_allclose(want, 1 / (1 + np.exp(-a)) + np.mod(v - 5, 3), rtol=1e-6)
    tir_mlir.build(P.split_where(21, 4))["where"](a, got)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_unsigned_compare_and_bool_output():
    body = "%c = arith.constant 200 : i8\n%r = arith.cmpi ugt, %a, %c : i8"
    mod = P.elementwise(6, "i8", body, out_t="i1", extra_in=', tir.dtype = "uint8"')
    a = np.array([0, 199, 200, 201, 255, 7], np.uint8)
    out = np.zeros(6, bool)
    tir_mlir.interpret(mod, "ew", a, out)
    np.testing.assert_array_equal(out, a > 200)


def test_out_of_bounds_is_reported_with_location():
    a, b = np.zeros(4, np.float32), np.zeros(4, np.float32)
    with pytest.raises(OutOfBoundsError, match="index 4 on axis 0") as info:
        tir_mlir.interpret(P.out_of_bounds(4), "shift", a, b)
    assert str(info.value.loc) == "oob.tir:7:9"
