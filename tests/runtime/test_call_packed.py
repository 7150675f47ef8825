"""`T.call_packed("name", ...)`: parsed and printed as TVM, run through functions registered with
`tir_mlir.register_func` (TVM 0.21 as the oracle for the printed program and the numbers).

TVM cannot infer the region of a buffer handed to a packed call inside a block (it asks for
T.reads/T.writes); tir-mlir infers the whole buffer, which is what the program below writes."""

import numpy as np
import pytest

import tir_mlir
from shared_programs import GEMV_DESC, MM_T
from tir_mlir.errors import TIRParseError

SOURCE = """
@T.prim_func
def f(A: T.Buffer((4, 3), "float32"), B: T.Buffer((4, 3), "float32")):
    T.call_packed("test_packed.axpy", A, B, 3, T.float32(2.5))
    for i in T.parallel(4):
        with T.block("row"):
            vi = T.axis.spatial(4, i)
            T.reads(B[0:4, 0:3])
            T.writes(B[0:4, 0:3])
            T.call_packed("test_packed.scale_row", B, vi)
"""


def axpy(a, b, n, x):
    b[:] = a * x + n


def scale_row(b, i):
    b[i, :] *= i + 1


@pytest.fixture(scope="module", autouse=True)
def registered():
    tir_mlir.register_func("test_packed.axpy", axpy, override=True)
    tir_mlir.register_func("test_packed.scale_row", scale_row, override=True)


def test_printed_as_tvm_with_inferred_regions():
    text = tir_mlir.parse(SOURCE).script()
    assert 'T.call_packed("test_packed.axpy", A, B, 3, T.float32(2.5))' in text
    assert "T.reads(B[0:4, 0:3])\n            T.writes(B[0:4, 0:3])" in text
    assert tir_mlir.parse(text).script() == text


@pytest.mark.tvm
def test_same_program_as_tvm():
    import tvm

    ours = tvm.script.from_source(tir_mlir.parse(SOURCE).script())
    theirs = tvm.script.from_source(SOURCE)
    tvm.ir.assert_structural_equal(ours, theirs)


def test_numbers():
    a = np.random.default_rng(0).random((4, 3), dtype="float32")
    b = np.zeros_like(a)
    tir_mlir.build(tir_mlir.parse(SOURCE))["f"](a, b)
    expected = (a * 2.5 + 3) * np.arange(1, 5, dtype="float32")[:, None]
    np.testing.assert_allclose(b, expected, rtol=1e-6)


@pytest.mark.tvm
def test_numbers_equal_tvms():
    import tvm

    a = np.random.default_rng(0).random((4, 3), dtype="float32")
    b = np.zeros_like(a)
    tir_mlir.build(tir_mlir.parse(SOURCE))["f"](a, b)

    def on_tvm(fn):
        def wrapped(*args):
            arrays = [x.numpy() if hasattr(x, "numpy") else x for x in args]
            fn(*arrays)
            args[1 if fn is axpy else 0].copyfrom(arrays[1 if fn is axpy else 0])

        return wrapped

    tvm.register_func("test_packed.axpy", on_tvm(axpy), override=True)
    tvm.register_func("test_packed.scale_row", on_tvm(scale_row), override=True)
    b_tvm = tvm.nd.array(np.zeros_like(a))
    tvm.build(tvm.script.from_source(SOURCE), target="llvm")(tvm.nd.array(a), b_tvm)
    np.testing.assert_allclose(b, b_tvm.numpy(), rtol=1e-6)


def test_reference_interpreter_calls_the_function_too():
    a = np.random.default_rng(1).random((4, 3), dtype="float32")
    b, b_ref = np.zeros_like(a), np.zeros_like(a)
    mod = tir_mlir.parse(SOURCE)
    tir_mlir.build(mod)["f"](a, b)
    tir_mlir.interpret(mod, "f", a, b_ref)
    np.testing.assert_array_equal(b, b_ref)


def test_scalars_of_every_kind_and_strided_buffers():
    got = []
    tir_mlir.register_func(
        "test_packed.record",
        lambda *args: got.append([x.copy() if isinstance(x, np.ndarray) else x for x in args]),
        override=True,
    )
    mod = tir_mlir.parse("""
@T.prim_func
def g(A: T.Buffer((4, 6), "int8"), M: T.Buffer((2,), "bool")):
    for i in range(2):
        with T.block("b"):
            vi = T.axis.spatial(2, i)
            S = T.match_buffer(A[vi * 2:vi * 2 + 2, 1:4], (2, 3), "int8", offset_factor=1)
            T.call_packed("test_packed.record", S, M, vi, T.int64(-5), T.float64(0.1),
                          T.float16(1.5), T.bool(True))
""")
    a = np.arange(24, dtype="int8").reshape(4, 6)
    m = np.array([True, False])
    tir_mlir.build(mod)["g"](a, m)
    assert len(got) == 2
    for i, (s, mm, vi, big, x, h, flag) in enumerate(got):
        np.testing.assert_array_equal(s, a[2 * i : 2 * i + 2, 1:4])
        np.testing.assert_array_equal(mm, m)
        assert (vi, big, x, h, flag) == (i, -5, 0.1, 1.5, True)


def test_errors_raise_from_the_call():
    def boom(a, i):
        if i == 2:
            raise ValueError("row 2 refused")

    tir_mlir.register_func("test_packed.scale_row", boom, override=True)
    try:
        with pytest.raises(ValueError, match="row 2 refused"):
            tir_mlir.build(tir_mlir.parse(SOURCE))["f"](
                np.zeros((4, 3), "float32"), np.zeros((4, 3), "float32")
            )
    finally:
        tir_mlir.register_func("test_packed.scale_row", scale_row, override=True)
    lonely = tir_mlir.parse(SOURCE.replace("test_packed.axpy", "test_packed.nobody"))
    with pytest.raises(
        tir_mlir.errors.RuntimeCallError, match="no function is registered as 'test_packed.nobody'"
    ):
        tir_mlir.build(lonely)["f"](np.zeros((4, 3), "float32"), np.zeros((4, 3), "float32"))
    with pytest.raises(ValueError, match="already registered"):
        tir_mlir.register_func("test_packed.axpy", axpy)


def test_a_packed_name_is_only_looked_up_in_the_registry():
    """`T.call_packed("os.system", ...)` names a registered function, nothing importable."""
    mod = tir_mlir.parse(
        '@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n    T.call_packed("os.system", A)\n'
    )
    with pytest.raises(tir_mlir.errors.RuntimeCallError, match="no function is registered"):
        tir_mlir.build(mod)["f"](np.zeros(4, "float32"))


def test_parse_errors_are_located():
    with pytest.raises(TIRParseError, match="takes the registered function's name") as e:
        tir_mlir.parse('@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n    T.call_packed(A)\n')
    assert (e.value.loc.line, e.value.loc.col) == (3, 5)


# what TVM 0.21 prints for SOURCE (recorded; test_tvm_prints_source_so checks it)
TVM_PRINTED = """# from tvm.script import tir as T

@T.prim_func
def f(A: T.Buffer((4, 3), "float32"), B: T.Buffer((4, 3), "float32")):
    # with T.block("root"):
    T.call_packed("test_packed.axpy", T.tvm_stack_make_array(A.data, T.tvm_stack_make_shape(4, 3), 0, 2, T.float32(0.0), 0), T.tvm_stack_make_array(B.data, T.tvm_stack_make_shape(4, 3), 0, 2, T.float32(0.0), 0), 3, T.float32(2.5))
    for i in T.parallel(4):
        with T.block("row"):
            vi = T.axis.spatial(4, i)
            T.reads(B[0:4, 0:3])
            T.writes(B[0:4, 0:3])
            T.call_packed("test_packed.scale_row", T.tvm_stack_make_array(B.data, T.tvm_stack_make_shape(4, 3), 0, 2, T.float32(0.0), 0), vi)"""


def test_tvms_printed_form_reads_back():
    """TVM prints a buffer argument as T.tvm_stack_make_array(B.data, ...): the same program."""
    assert tir_mlir.parse(TVM_PRINTED).script() == tir_mlir.parse(SOURCE).script()
    with pytest.raises(TIRParseError, match="as TVM prints a whole buffer"):
        tir_mlir.parse(
            TVM_PRINTED.replace(
                "T.tvm_stack_make_shape(4, 3), 0, 2", "T.tvm_stack_make_shape(4, 2), 0, 2"
            )
        )


@pytest.mark.tvm
def test_tvm_prints_source_so():
    import tvm

    assert tvm.script.from_source(SOURCE).script() == TVM_PRINTED


GEMV_PACKED = """
@T.prim_func
def gemv_impl(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (64,), offset_factor=1)
    B = T.match_buffer(b, (16, 64), offset_factor=1)
    C = T.match_buffer(c, (16,), offset_factor=1)
    T.call_packed("test_packed.gemv", A, B, C)
"""


def _gemv(a, b, c):
    c += b @ a  # the matched regions: a row of A, 16 rows of B, 16 entries of C


def test_tensorize_onto_a_python_function():
    """A tensor intrinsic whose impl is a packed call: each tile's regions arrive as strided
    numpy views of the buffers."""
    tir_mlir.register_func("test_packed.gemv", _gemv, override=True)
    tir_mlir.TensorIntrin.register("test_gemv_packed", GEMV_DESC, GEMV_PACKED, override=True)
    sch = tir_mlir.Schedule(tir_mlir.parse(MM_T))
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, [None, 16])
    sch.tensorize(j1, "test_gemv_packed")
    assert 'T.call_packed("test_packed.gemv", A_1, B_1, C_1)' in sch.mod.script()
    rng = np.random.default_rng(6)
    a, b = rng.random((32, 64), dtype="float32"), rng.random((48, 64), dtype="float32")
    c = np.full((32, 48), np.nan, "float32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-5)


def test_te_intrinsic_with_tvm_tir_call_packed():
    import tir_mlir as tvm
    from tir_mlir import te

    tir_mlir.register_func("test_packed.gemv", _gemv, override=True)
    A = te.placeholder((32, 64), name="A")
    B = te.placeholder((48, 64), name="B")
    k = te.reduce_axis((0, 64), name="k")
    C = te.compute((32, 48), lambda i, j: te.sum(A[i, k] * B[j, k], axis=k), name="C")
    a = te.placeholder((64,), name="a")
    b = te.placeholder((16, 64), name="b")
    kk = te.reduce_axis((0, 64), name="k")
    c = te.compute((16,), lambda i: te.sum(a[kk] * b[i, kk], axis=kk), name="c")
    binds = {
        t: tvm.tir.decl_buffer(t.shape, t.dtype, name=t.name.upper(), offset_factor=1)
        for t in (a, b, c)
    }

    def intrin_func(ins, outs):
        ib = tvm.tir.ir_builder.create()
        ib.emit(tvm.tir.call_packed("test_packed.gemv", ins[0], ins[1], outs[0]))
        return ib.get()

    gemv = te.decl_tensor_intrin(c.op, intrin_func, binds=binds)
    s = te.create_schedule(C.op)
    x, y = C.op.axis
    yo, yi = s[C].split(y, factor=16)
    s[C].reorder(x, yo, yi, s[C].op.reduce_axis[0])
    s[C].tensorize(yi, gemv)
    mod = tvm.lower(s, [A, B, C])
    rng = np.random.default_rng(7)
    x_np, y_np = rng.random((32, 64), dtype="float32"), rng.random((48, 64), dtype="float32")
    out = np.full((32, 48), np.nan, "float32")
    tir_mlir.build(mod)["main"](x_np, y_np, out)
    np.testing.assert_allclose(out, x_np @ y_np.T, rtol=1e-5)
