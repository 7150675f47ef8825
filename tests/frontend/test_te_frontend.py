"""`tir_mlir.te`: TE programs -> TensorIR, equal to TVM 0.21's `te.create_prim_func`.

Each program is written once against a `te` module and built with TVM's and with ours; TVM reads
our printed text and it must be structurally equal to its own function. Numbers come from numpy.
"""

import numpy as np
import pytest

import tir_mlir
from tir_mlir import te as our_te


def row_sum_plus(te):
    A = te.placeholder((64, 32), name="A")
    k = te.reduce_axis((0, 32), name="k")
    B = te.compute((64,), lambda i: te.sum(A[i, k], axis=k), name="B")
    C = te.compute((64,), lambda i: B[i] + 10, name="C")
    return [A, C]


def padded_conv(te):
    n, pad = 16, 2
    A = te.placeholder((n, n), name="A")
    W = te.placeholder((3, 3), name="W")
    Apad = te.compute(
        (n + 2 * pad, n + 2 * pad),
        lambda yy, xx: te.if_then_else(
            te.all(yy >= pad, yy < pad + n, xx >= pad, xx < pad + n),
            A[yy - pad, xx - pad],
            te.const(0, "float32"),
        ),
        name="Apad",
    )
    ry, rx = te.reduce_axis((0, 3), name="ry"), te.reduce_axis((0, 3), name="rx")
    m = n + 2 * pad - 2
    B = te.compute(
        (m, m), lambda yy, xx: te.sum(Apad[yy + ry, xx + rx] * W[ry, rx], axis=[ry, rx]), name="B"
    )
    return [A, W, B]


def reducers(te):
    A = te.placeholder((8, 16), name="A")
    k = te.reduce_axis((0, 16), name="k")
    prod = te.comm_reducer(lambda x, y: x * y, lambda t: te.const(1, dtype=t), name="prod")
    mx = te.compute((8,), lambda i: te.max(A[i, k], axis=k), name="mx")
    mn = te.compute((8,), lambda i: te.min(A[i, k], axis=k), name="mn")
    pr = te.compute((8,), lambda i: prod(A[i, k], axis=k), name="pr")
    return [A, mx, mn, pr]


def elementwise(te):
    A = te.placeholder((8, 8), name="A")
    I = te.placeholder((8,), name="I", dtype="int32")
    # (each tensor read at one index per block: for unions of several accesses our parser's
    # read regions differ from TVM's, see docs/tvm_compat.md)
    B = te.compute(
        (8, 8), lambda i, j: te.max(te.exp(A[i, j]), A[i, j] * 0.5) * 2 - A[i, j], name="B"
    )
    C = te.compute((8,), lambda i: I[i] // 3 + I[i] % 2, name="C")
    D = te.compute((8,), lambda i: A[i, i].astype("float64") + I[i].astype("float64"), name="D")
    E = te.compute((8, 8), lambda i, j: i * 8 + j)  # default name "compute"
    return [A, I, B, C, D, E]


def matmul(te):
    A = te.placeholder((32, 16), name="A")
    B = te.placeholder((16, 24), name="B")
    k = te.reduce_axis((0, 16), name="k")
    C = te.compute((32, 24), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return [A, B, C]


def zero_dim(te):
    A = te.placeholder((4, 5, 6), name="A", dtype="uint8")
    r1, r2 = te.reduce_axis((0, 5), name="r1"), te.reduce_axis((0, 6), name="r2")
    total = te.compute(
        (), lambda: te.sum(A[1, r1, r2].astype("int32"), axis=[r1, r2]), name="total"
    )
    corner = te.compute((), lambda: A[3, 4, 5] * 2, name="corner")
    return [A, total, corner]


def python_numbers(te):
    """TVM's promotion of Python numbers: an int is int32, a float float32."""
    A = te.placeholder((8,), name="A", dtype="int8")
    H = te.placeholder((8,), name="H", dtype="float16")
    U = te.placeholder((8,), name="U", dtype="uint32")
    B = te.compute((8,), lambda i: A[i] * 3 + 1, name="B")
    C = te.compute((8,), lambda i: H[i] * 0.5 + 2, name="C")
    D = te.compute((8,), lambda i: U[i] + 7, name="D")
    return [A, H, U, B, C, D]


PROGRAMS = [row_sum_plus, padded_conv, reducers, elementwise, matmul, zero_dim, python_numbers]


@pytest.mark.tvm
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_create_prim_func_equals_tvm(program):
    import tvm

    ours = our_te.create_prim_func(program(our_te))
    theirs = tvm.te.create_prim_func(program(tvm.te))
    got = tvm.script.from_source(ours.script())
    tvm.ir.assert_structural_equal(
        got.without_attr("global_symbol"), theirs.without_attr("global_symbol")
    )


def _run(args, inputs):
    f = our_te.create_prim_func(args)
    arrays = list(inputs) + [np.zeros(t.shape, t.dtype) for t in args[len(inputs) :]]
    tir_mlir.build(f, "llvm")["main"](*arrays)
    return arrays[len(inputs) :]


def test_te_programs_compute_numpys_numbers():
    a = np.random.rand(64, 32).astype("float32")
    (c,) = _run(row_sum_plus(our_te), [a])
    np.testing.assert_allclose(c, a.sum(1) + 10, rtol=1e-5)
    a, w = np.random.rand(16, 16).astype("float32"), np.random.rand(3, 3).astype("float32")
    (b,) = _run(padded_conv(our_te), [a, w])
    ap = np.pad(a, 2)
    ref = sum(ap[y : y + 18, x : x + 18] * w[y, x] for y in range(3) for x in range(3))
    np.testing.assert_allclose(b, ref, rtol=1e-5)
    a = np.random.rand(8, 16).astype("float32") + 0.5
    mx, mn, pr = _run(reducers(our_te), [a])
    np.testing.assert_allclose(mx, a.max(1))
    np.testing.assert_allclose(mn, a.min(1))
    np.testing.assert_allclose(pr, a.prod(1), rtol=1e-5)
    a, i = np.random.rand(8, 8).astype("float32"), np.arange(-4, 4, dtype="int32")
    b, c, d, e = _run(elementwise(our_te), [a, i])
    np.testing.assert_allclose(b, np.maximum(np.exp(a), a * 0.5) * 2 - a, rtol=1e-5)
    np.testing.assert_array_equal(c, i // 3 + i % 2)
    np.testing.assert_allclose(d, np.diag(a).astype("float64") + i)
    np.testing.assert_array_equal(e, np.arange(64).reshape(8, 8))


def test_zero_dim_tensors_and_reductions_with_where():
    a = np.random.default_rng(0).integers(0, 100, (4, 5, 6), dtype="uint8")
    total, corner = _run(zero_dim(our_te), [a])
    assert total == a[1].astype("int32").sum() and corner == np.uint8(a[3, 4, 5] * 2)
    a8 = np.arange(-4, 4, dtype="int8") * 40  # * 3 overflows int8, not int32
    h, u = np.linspace(-2, 2, 8).astype("float16"), np.arange(8, dtype="uint32")
    b, c, d = _run(python_numbers(our_te), [a8, h, u])
    np.testing.assert_array_equal(b, a8.astype("int32") * 3 + 1)
    np.testing.assert_allclose(c, h.astype("float32") * 0.5 + 2)
    np.testing.assert_array_equal(d, u + 7)
    # TVM 0.21's create_prim_func drops `where` (every k is summed); it is kept here.
    A = our_te.placeholder((8, 16), name="A")
    k = our_te.reduce_axis((0, 16), name="k")
    B = our_te.compute((8,), lambda i: our_te.sum(A[i, k], axis=k, where=k > i), name="B")
    assert "if v_i < v_k:" in our_te.create_prim_func([A, B]).script()
    a = np.random.rand(8, 16).astype("float32")
    (b,) = _run([A, B], [a])
    np.testing.assert_allclose(b, [a[i, i + 1 :].sum() for i in range(8)], rtol=1e-5)


def test_te_errors():
    A = our_te.placeholder((4,), name="A")
    with pytest.raises(TypeError, match="different dtypes"):
        our_te.compute((4,), lambda i: A[i] + our_te.const(1, "float64"))
    with pytest.raises(TypeError, match="no truth value"):
        our_te.compute((4,), lambda i: A[i] if i > 1 else A[0])
    with pytest.raises(ValueError, match="not in the argument list"):
        our_te.create_prim_func([our_te.compute((4,), lambda i: A[i] * 2)])
    with pytest.raises(IndexError, match="has 1 dimensions"):
        our_te.compute((4,), lambda i: A[i, i])


def symbolic_two_stage(te):
    n = te.var("n")
    A = te.placeholder((n, 16), name="A")
    k = te.reduce_axis((0, 16), name="k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    C = te.compute((n,), lambda i: B[i] * 2, name="C")
    return [A, C]


@pytest.mark.tvm
def test_symbolic_create_prim_func_equals_tvm():
    """te.var shapes: our PrimFunc prints as TVM's create_prim_func result (a handle and
    T.match_buffer per buffer of symbolic shape) and TVM reads it back as that."""
    import tvm

    ours = our_te.create_prim_func(symbolic_two_stage(our_te))
    text = ours.script()
    assert "A = T.match_buffer(var_A, (n, 16))" in text and "B = T.alloc_buffer((n,))" in text
    theirs = tvm.te.create_prim_func(symbolic_two_stage(tvm.te))
    tvm.ir.assert_structural_equal(tvm.script.from_source(text), theirs)


def test_te_var_shapes_and_scalar_parameters():
    n, x = our_te.var("n"), our_te.var("x", "float32")
    A = our_te.placeholder((n, 16), name="A")
    k = our_te.reduce_axis((0, 16), name="k")
    B = our_te.compute((n,), lambda i: our_te.sum(A[i, k] * x, axis=k), name="B")
    f = our_te.create_prim_func([A, x, B])
    assert "x: T.float32" in f.script() and "n = T.int32()" in f.script()
    assert "A = T.match_buffer(var_A, (4, 16))" in f.specialize({"n": 4, "x": 2.0}).script()
    lib = tir_mlir.build(f)
    for size in (1, 5, 17):
        a, b = np.random.rand(size, 16).astype("float32"), np.zeros(size, "float32")
        lib["main"](a, 1.5, b)
        np.testing.assert_allclose(b, a.sum(1) * 1.5, rtol=1e-5)
    C = our_te.compute((n,), lambda i: A[i, 0] * 2, name="C")
    s = our_te.create_schedule(C.op)  # scheduled at a probe n, run at any n
    outer, inner = s[C].split(C.op.axis[0], factor=4)
    s[C].vectorize(inner)
    lib = tir_mlir.build(tir_mlir.lower(s, [A, C]))
    for size in (1, 6):
        a, c = np.random.rand(size, 16).astype("float32"), np.zeros(size, "float32")
        lib["main"](a, c)
        np.testing.assert_allclose(c, a[:, 0] * 2)
    with pytest.raises(ValueError, match="variable 'x' is neither an axis"):
        our_te.create_prim_func([A, B])
