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


# --- each semantic of the interpreter against numpy, on TVMScript programs ------------------------
def _parse(text, name="t.tir"):
    return tir_mlir.parse(text, filename=name)


INTS = """
@T.prim_func
def ints(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32"), S: T.Buffer((16,), "int16"),
         U: T.Buffer((16,), "uint8"), V: T.Buffer((16,), "uint8"),
         O: T.Buffer((16, 8), "int32"), P: T.Buffer((16, 5), "uint8")):
    for i in range(16):
        with T.block("ints"):
            vi = T.axis.spatial(16, i)
            O[vi, 0] = A[vi] * B[vi] + A[vi]
            O[vi, 1] = T.floordiv(A[vi], B[vi])
            O[vi, 2] = T.floormod(A[vi], B[vi])
            O[vi, 3] = A[vi] // B[vi]
            O[vi, 4] = A[vi] % B[vi]
            O[vi, 5] = T.truncdiv(A[vi], B[vi])
            O[vi, 6] = T.truncmod(A[vi], B[vi])
            O[vi, 7] = T.Cast("int32", S[vi] * S[vi])
            P[vi, 0] = U[vi] + V[vi]
            P[vi, 1] = U[vi] // V[vi]
            P[vi, 2] = T.max(U[vi], V[vi])
            P[vi, 3] = T.Cast("uint8", U[vi] > V[vi])
            P[vi, 4] = U[vi] * V[vi]
"""


def test_integer_ops_wrap_per_dtype_and_divide_like_tir():
    a = RNG.integers(-(2**31), 2**31, 16).astype(np.int32)
    b = RNG.integers(-50_000, 50_000, 16).astype(np.int32)
    b[b == 0] = 7
    b[:2] = (3, -3)
    a[:2] = (-7, -7)  # floor vs trunc differ on these
    s = RNG.integers(-(2**15), 2**15, 16).astype(np.int16)
    u = RNG.integers(0, 256, 16).astype(np.uint8)
    v = RNG.integers(1, 256, 16).astype(np.uint8)
    o, p = np.zeros((16, 8), np.int32), np.zeros((16, 5), np.uint8)
    tir_mlir.interpret(_parse(INTS), "ints", a, b, s, u, v, o, p)
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    trunc = np.abs(a64) // np.abs(b64) * np.sign(a64) * np.sign(b64)
    want_o = [
        (a64 * b64 + a64).astype(np.int32),
        a // b,
        np.mod(a, b),
        a // b,
        np.mod(a, b),
        trunc,
        np.fmod(a, b),
        (s.astype(np.int32) * s).astype(np.int16),
    ]
    np.testing.assert_array_equal(o, np.stack(want_o, axis=1))
    np.testing.assert_array_equal(o[:2, 1:7], [[-3, 2, -3, 2, -2, -1], [2, -1, 2, -1, 2, -1]])
    want_p = [u + v, u // v, np.maximum(u, v), (u > v).astype(np.uint8), u * v]
    np.testing.assert_array_equal(p, np.stack(want_p, axis=1))


HALF = """
@T.prim_func
def acc(A: T.Buffer((4, 64), "float16"), B: T.Buffer((4, 64), "bfloat16"),
        C: T.Buffer((4,), "float16"), D: T.Buffer((4,), "bfloat16")):
    for i, k in T.grid(4, 64):
        with T.block("acc"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float16(0)
                D[vi] = T.bfloat16(0)
            C[vi] = C[vi] + A[vi, vk] * A[vi, vk]
            D[vi] = D[vi] + B[vi, vk] * B[vi, vk]
"""


def test_float16_and_bfloat16_round_after_every_op():
    import ml_dtypes

    a = RNG.uniform(0, 2, (4, 64)).astype(np.float16)
    b = RNG.uniform(0, 2, (4, 64)).astype(ml_dtypes.bfloat16)
    c, d = np.zeros(4, np.float16), np.zeros(4, ml_dtypes.bfloat16)
    tir_mlir.interpret(_parse(HALF), "acc", a, b, c, d)
    want_c, want_d = np.zeros(4, np.float16), np.zeros(4, ml_dtypes.bfloat16)
    for k in range(64):  # numpy rounds each array op to the dtype
        want_c = want_c + a[:, k] * a[:, k]
        want_d = want_d + b[:, k] * b[:, k]
    np.testing.assert_array_equal(c, want_c)
    np.testing.assert_array_equal(d.astype(np.float32), want_d.astype(np.float32))
    exact = (a.astype(np.float64) ** 2).sum(1).astype(np.float16)
    assert not np.array_equal(c, exact)  # the rounding is observable on these inputs


def test_if_then_else_is_lazy_and_select_is_not():
    text = """
@T.prim_func
def shift(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = T.if_then_else(vi < 7, A[vi + 1], T.float32(-1))
"""
    a, b = RNG.random(8, np.float32), np.zeros(8, np.float32)
    tir_mlir.interpret(_parse(text), "shift", a, b)
    np.testing.assert_array_equal(b, np.append(a[1:], -1))
    eager = _parse(text.replace("T.if_then_else", "T.Select"), "sel.tir")
    with pytest.raises(OutOfBoundsError) as info:
        tir_mlir.interpret(eager, "shift", a, np.zeros(8, np.float32))
    e = info.value
    assert (e.buffer, e.index, e.axis, str(e.loc)) == ("A", 8, 0, "sel.tir:7:38")  # at `A[vi + 1]`
    assert "out-of-bounds load of buffer 'A': index 8 on axis 0" in str(e)


def test_init_runs_when_every_reduce_var_is_at_its_domain_min():
    """Reduce loops outside the spatial one, a reduce domain starting at 2, two reduce vars:
    init must run once per output, at (vk, vl) == (2, 0)."""
    text = """
@T.prim_func
def red(A: T.Buffer((8, 5, 4), "float32"), S: T.Buffer((8,), "float32")):
    for k, l, i in T.grid(3, 4, 8):
        with T.block("S"):
            vi = T.axis.spatial(8, i)
            vk = T.axis.reduce((2, 5), k + 2)
            vl = T.axis.reduce(4, l)
            with T.init():
                S[vi] = T.float32(10)
            S[vi] = S[vi] + A[vi, vk, vl]
"""
    a, s = RNG.random((8, 5, 4), np.float32), np.full(8, 99, np.float32)
    tir_mlir.interpret(_parse(text), "red", a, s)
    want = np.full(8, 10, np.float32)
    for k in range(2, 5):
        for l in range(4):
            want = want + a[:, k, l]
    np.testing.assert_array_equal(s, want)


def test_out_of_bounds_from_loop_ranges_and_bindings_is_caught():
    """Accesses are checked unless their index is proven in bounds, so a loop longer than the
    buffer or a binding that goes negative still fails, at the right access."""
    longer = """
@T.prim_func
def copy(A: T.Buffer((4,), "float32"), B: T.Buffer((5,), "float32")):
    for i in range(5):
        with T.block("B"):
            vi = T.axis.spatial(5, i)
            B[vi] = A[vi]
"""
    a, b = RNG.random(4, np.float32), np.zeros(5, np.float32)
    with pytest.raises(OutOfBoundsError, match="load of buffer 'A': index 4 on axis 0"):
        tir_mlir.interpret(_parse(longer), "copy", a, b)
    np.testing.assert_array_equal(b[:4], a)  # the writes before the error stay
    negative = """
@T.prim_func
def left(A: T.Buffer((3, 4), "float32"), B: T.Buffer((3, 4), "float32")):
    for i, j in T.grid(3, 4):
        with T.block("B"):
            vi = T.axis.spatial(3, i)
            vj = T.axis.spatial(4, j + 3)
            B[vi, vj - 3] = A[vi, vj - 4]
"""
    with pytest.raises(OutOfBoundsError, match="index -1 on axis 1"):
        tir_mlir.interpret(
            _parse(negative), "left", np.zeros((3, 4), np.float32), np.zeros((3, 4), np.float32)
        )
    past_end = negative.replace("j + 3", "j + 1").replace(
        "B[vi, vj - 3] = A[vi, vj - 4]", "B[vi, vj - 1] = A[vi, vj - 1] + A[vi, vj]"
    )
    with pytest.raises(OutOfBoundsError, match="load of buffer 'A': index 4 on axis 1"):
        tir_mlir.interpret(
            _parse(past_end), "left", np.zeros((3, 4), np.float32), np.zeros((3, 4), np.float32)
        )


def test_loop_nest_deeper_than_python_allows_runs():
    """22 nested loops (CPython compiles at most 20 in one function)."""
    n = 22
    names = [f"i{k}" for k in range(n)]
    extents = [2] * 10 + [1] * (n - 10)
    index = " + ".join(f"i{k} * {2 ** (9 - k)}" for k in range(10))
    text = f"""
@T.prim_func
def deep(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    for {", ".join(names)} in T.grid({", ".join(map(str, extents))}):
        with T.block("B"):
            v = T.axis.spatial(1024, {index})
            B[v] = A[v] * T.float32(2)
"""
    a, b = RNG.random(1024, np.float32), np.zeros(1024, np.float32)
    mod = _parse(text)
    tir_mlir.interpret(mod, "deep", a, b)
    np.testing.assert_array_equal(b, a * 2)
    from tir_mlir.interpreter import python_source

    assert "def _nest_" in python_source(mod, "deep")


def test_float32_arithmetic_is_exactly_numpys():
    """Computed in double and rounded once per op: bit-identical to float32 arithmetic."""
    a, b = (RNG.uniform(-1, 1, (16, 16)).astype(np.float32) for _ in range(2))
    c = np.zeros((16, 16), np.float32)
    tir_mlir.interpret(P.matmul(16), "matmul", a, b, c)
    want = np.zeros((16, 16), np.float32)
    for k in range(16):
        want = want + a[:, k : k + 1] * b[k : k + 1, :]
    np.testing.assert_array_equal(c, want)
    x = np.array([1, -2, 0, np.nan, np.inf, 3e38], np.float32)
    out = np.zeros(6, np.float32)
    body = (
        "%z = arith.constant 0.0 : f32\n%t = arith.constant 10.0 : f32\n"
        "%q = arith.divf %a, %z : f32\n%r = arith.mulf %q, %t : f32"
    )
    tir_mlir.interpret(P.elementwise(6, "f32", body), "ew", x, out)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out, x / np.float32(0) * np.float32(10))


@pytest.mark.parametrize(
    "pred, want",
    [
        ("olt", lambda a: a < 0.5),
        ("ult", lambda a: ~(a >= 0.5)),
        ("une", lambda a: a != 0.5),
        ("one", lambda a: (a < 0.5) | (a > 0.5)),
        ("ueq", lambda a: ~((a < 0.5) | (a > 0.5))),
        ("ord", lambda a: ~np.isnan(a)),
        ("uno", np.isnan),
    ],
)
def test_float_compare_predicates_treat_nan_like_ieee(pred, want):
    body = f"%c = arith.constant 0.5 : f32\n%r = arith.cmpf {pred}, %a, %c : f32"
    a = np.array([0.25, 0.5, 0.75, np.nan], np.float32)
    out = np.zeros(4, bool)
    tir_mlir.interpret(P.elementwise(4, "f32", body, out_t="i1"), "ew", a, out)
    np.testing.assert_array_equal(out, want(a))
