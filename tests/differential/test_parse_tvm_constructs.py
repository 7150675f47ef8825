"""TensorIR constructs TVM 0.21 accepts, beyond the basic ones (issue 15): each program is
read by TVM and by tir-mlir, printed identically, and run to the same numbers where it runs."""

import shutil
import textwrap

import numpy as np
import pytest

import tir_mlir

import tvm_oracle
from shared_programs import INT16X4_BUFFER, int16x4_buffer_reference
from tvm_same import same_as_tvm

pytestmark = pytest.mark.tvm
tvm_oracle.import_tvm()


def test_likely_in_a_block_condition():
    same_as_tvm("""
@T.prim_func
def likely(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("b"):
            vi = T.axis.spatial(16, i)
            if T.likely(vi < 15):
                B[vi] = A[vi + 1]
            else:
                B[vi] = A[vi]
""")


def test_likely_outside_blocks_and_in_values():
    same_as_tvm("""
@T.prim_func
def likely(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        B[i] = T.if_then_else(T.likely(i < 15), A[i + 1], T.float32(0.0))
""")


def test_block_attr_on_root_and_inner_blocks():
    same_as_tvm("""
@T.prim_func
def f(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    with T.block("root"):
        T.reads(A[0:16, 0:16])
        T.writes(B[0:16, 0:16])
        T.block_attr({"meta_schedule.auto_tensorize": "x", "k": 4, "l": [1, 2], "f": 1.5, "b": True})
        for i, j in T.grid(16, 16):
            with T.block("b"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.block_attr({"x": T.int64(3), "s": "y", "u": T.int8(-1)})
                B[vi, vj] = A[vi, vj] + T.float32(1)
""")


NON_AFFINE = """
@T.prim_func
def f(A: T.Buffer((16, 16), "float32"), B: T.Buffer((64,), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("b"):
            vk = T.axis.spatial(64, i * j)
            vm = T.axis.spatial(16, i * j // 4 + j // 2)
            vn = T.axis.spatial(16, T.min(i, j) + T.max(i - j, 0))
            T.where(i * j < 40 and i % (j + 1) == 0)
            B[vk] = A[vm, vn]
"""


def test_non_affine_bindings_and_where_parse_print_and_run():
    same_as_tvm(NON_AFFINE)


def _body(text):
    """The function body of a printed module (TVM's schedule wraps it in an IRModule)."""
    lines = text[text.index("def ") :].splitlines()[1:]
    return textwrap.dedent("\n".join(l for l in lines if "T.func_attr" not in l))


@pytest.mark.parametrize(
    "prim",
    [
        "parallel",
        "unroll",
        "cache_read",
        "cache_write",
        "add_unit_loop",
        "split",
        "split_uneven",
        "fuse",
    ],
)
def test_primitives_tvm_accepts_on_non_affine_blocks(prim):
    import tvm

    results = []
    for make, mod in (
        (tvm.tir.Schedule, tvm.script.from_source(NON_AFFINE)),
        (tir_mlir.Schedule, tir_mlir.parse(NON_AFFINE)),
    ):
        sch = make(mod)
        b = sch.get_block("b")
        i, j = sch.get_loops(b)
        {
            "parallel": lambda: sch.parallel(i),
            "unroll": lambda: sch.unroll(j),
            "cache_read": lambda: sch.cache_read(b, 0, "local"),
            "cache_write": lambda: sch.cache_write(b, 0, "local"),
            "add_unit_loop": lambda: sch.add_unit_loop(b),
            "split": lambda: sch.split(i, [None, 2]),
            "split_uneven": lambda: sch.split(j, [3, 3]),
            "fuse": lambda: sch.fuse(i, j),
        }[prim]()
        results.append(_body(sch.mod.script()))
    assert results[0] == results[1]
    rng = np.random.default_rng(4)
    args = [rng.random((16, 16), "float32"), rng.random(64, "float32")]
    want = [a.copy() for a in args]
    tir_mlir.interpret(tir_mlir.parse(NON_AFFINE), "f", *want)
    tir_mlir.build(sch.mod)["f"](*args)
    np.testing.assert_allclose(args[1], want[1])


def test_reorder_refuses_a_non_affine_block_with_tvms_reason():
    sch = tir_mlir.Schedule(tir_mlir.parse(NON_AFFINE))
    before = sch.mod.script()
    i, j = sch.get_loops(sch.get_block("b"))
    with pytest.raises(tir_mlir.ScheduleError, match="required to have an affine binding"):
        sch.reorder(j, i)
    assert sch.mod.script() == before


TRIANGULAR = """
@T.prim_func
def f(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        for j in range(i + 1):
            with T.block("b"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, j)
                B[vi, vj] = A[vi, vj] * T.float32(2)
    for i in T.parallel(4):
        for j in range(i + 3):
            B[i, j] = B[i, j] + A[i, j]
"""


def test_loop_extents_that_depend_on_outer_loops():
    same_as_tvm(TRIANGULAR)


def test_grid_extents_that_depend_on_outer_loops():
    same_as_tvm(
        TRIANGULAR.replace("for j in range(i + 1):", "for j, k in T.grid(i + 1, 2):").replace(
            "vj = T.axis.spatial(16, j)",
            "vj = T.axis.spatial(16, j)\n                vk = T.axis.spatial(2, k)",
        )
    )


def test_an_iter_var_domain_on_a_loop_variable_is_its_largest_value():
    """TVM's `T.axis.S(i, j)` under `for j in T.grid(i, ...)`: the domain (an assertion on the
    iter var) widens to the largest i; the numbers are TVM's; loops whose bounds depend on a
    loop cannot move outside it."""
    text = """
@T.prim_func
def f(A: T.Buffer((8, 8, 4), "float32"), B: T.Buffer((8, 8, 4), "float32")):
    for i in range(8):
        for j, k in T.grid(i, 4):
            with T.block("B"):
                vi = T.axis.S(8, i)
                vj = T.axis.S(i, j)
                vk = T.axis.S(4, k)
                B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
"""
    mod = tir_mlir.parse(text)
    assert "vj = T.axis.spatial(7, j)" in mod.script()
    a, b = np.random.default_rng(0).random((8, 8, 4), np.float32), np.zeros((8, 8, 4), np.float32)
    tir_mlir.build(mod)["f"](a, b)
    want = np.zeros_like(a)
    for i in range(8):
        want[i, :i] = a[i, :i] * 2
    np.testing.assert_array_equal(b, want)
    sch = tir_mlir.Schedule(mod)
    i, j, k = sch.get_loops(sch.get_block("B"))
    before = sch.mod.script()
    for bad in (lambda: sch.reorder(k, i), lambda: sch.reorder(j, i)):
        with pytest.raises(
            tir_mlir.ScheduleError,
            match="reorder: the bounds of loop 'j' depend on loop 'i', which would move inside it",
        ):
            bad()
        assert sch.mod.script() == before
    with pytest.raises(tir_mlir.ScheduleError, match="bounds that depend on outer loops"):
        sch.fuse(i, j)
    sch.reorder(k, j)
    assert "for i, k in T.grid(8, 4):\n        for j in range(i):" in sch.mod.script()
    remap = text.replace(
        "vi = T.axis.S(8, i)\n                vj = T.axis.S(i, j)\n                vk = T.axis.S(4, k)",
        'vi, vj, vk = T.axis.remap("SSS", [i, j, k])',
    )
    assert "T.axis.remap" in remap
    remapped = tir_mlir.parse(remap)
    assert "vj = T.axis.spatial(7, j)" in remapped.script()
    b[:] = 0
    tir_mlir.build(remapped)["f"](a, b)
    np.testing.assert_array_equal(b, want)


def test_loops_with_variable_extents_inside_a_block_are_relaxed_like_tvm():
    same_as_tvm("""
@T.prim_func
def f(A: T.Buffer((16, 16), "float32")):
    for o in range(2):
        with T.block("b"):
            vo = T.axis.spatial(2, o)
            for i in range(8):
                for j in range(i + 1):
                    A[vo * 8 + i, j] = A[vo * 8 + i, j] + T.float32(1)
""")


def test_loop_bounds_with_a_variable_start():
    # TVM 0.21 prints these but cannot compile them (`is_zero(op->min)`): numbers by numpy
    mod = same_as_tvm(
        """
@T.prim_func
def f(C: T.Buffer((16,), "float32")):
    for i in range(4):
        for j in range(i * 2, i * 3 + 1):
            C[j] = C[j] + T.float32(1)
""",
        run=False,
    )
    want = np.zeros(16, "float32")
    for i in range(4):
        want[i * 2 : i * 3 + 1] += 1
    for run in (lambda c: tir_mlir.build(mod)["f"](c), lambda c: tir_mlir.interpret(mod, "f", c)):
        c = np.zeros(16, "float32")
        run(c)
        np.testing.assert_array_equal(c, want)


def test_a_loop_bound_on_a_block_iter_var_is_refused():
    with pytest.raises(tir_mlir.TIRParseError, match="enclosing loop variables only"):
        tir_mlir.parse("""
@T.prim_func
def f(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("c"):
            vi = T.axis.spatial(16, i)
            for k in range(vi, 16):
                C[vi] = C[vi] + A[vi, k]
""")


@pytest.mark.parametrize(
    "prim",
    ["parallel", "vectorize", "unroll", "add_unit_loop", "split_outer", "split_outer_uneven"],
)
def test_primitives_tvm_accepts_on_loops_with_variable_extents(prim):
    import tvm

    results = []
    for make, mod in (
        (tvm.tir.Schedule, tvm.script.from_source(TRIANGULAR)),
        (tir_mlir.Schedule, tir_mlir.parse(TRIANGULAR)),
    ):
        sch = make(mod)
        b = sch.get_block("b")
        i, j = sch.get_loops(b)
        {
            "parallel": lambda: sch.parallel(i),
            "vectorize": lambda: sch.vectorize(j),
            "unroll": lambda: sch.unroll(j),
            "add_unit_loop": lambda: sch.add_unit_loop(b),
            "split_outer": lambda: sch.split(i, [None, 2]),
            "split_outer_uneven": lambda: sch.split(i, [3, 6]),
        }[prim]()
        results.append(_body(sch.mod.script()))
    assert results[0] == results[1]
    args = [
        np.random.default_rng(1).random((16, 16), "float32"),
        np.zeros((16, 16), "float32"),
        np.zeros(16, "float32"),
    ]
    want = [a.copy() for a in args]
    tir_mlir.interpret(tir_mlir.parse(TRIANGULAR), "f", *want)
    tir_mlir.build(sch.mod)["f"](*args)
    for got, ref in zip(args, want):
        np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_split_of_a_loop_with_a_variable_extent_is_refused_with_the_reason():
    sch = tir_mlir.Schedule(tir_mlir.parse(TRIANGULAR))
    i, j = sch.get_loops(sch.get_block("b"))
    with pytest.raises(tir_mlir.ScheduleError, match="bounds that depend on outer loops"):
        sch.split(j, [None, 2])


MATCH_TILES = """
@T.prim_func
def mb(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("b"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4])
            T.writes(B[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4])
            As = T.match_buffer(A[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4], (4, 4), offset_factor=1)
            Bs = T.match_buffer(B[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4], (4, 4), offset_factor=1, scope="global")
            for x, y in T.grid(4, 4):
                with T.block("c"):
                    vx, vy = T.axis.remap("SS", [x, y])
                    Bs[vx, vy] = As[vx, vy] * T.float32(2)
"""

MATCH_SCOPES = """
@T.prim_func
def mb(A: T.Buffer((16, 16), "float16"), B: T.Buffer((16, 16), "float16")):
    S = T.alloc_buffer((16, 16), "float16", scope="shared")
    for i, j in T.grid(4, 16):
        with T.block("b"):
            vi, vj = T.axis.remap("SS", [i, j])
            As = T.match_buffer(A[vj, vi * 4:vi * 4 + 4], (4,), "float16", align=64, offset_factor=4)
            Ss = T.match_buffer(S[vj, vi * 4:vi * 4 + 4], (4,), "float16", scope="shared", offset_factor=1)
            for x in range(4):
                Ss[x] = As[x]
    for i in range(16):
        with T.block("c"):
            vi = T.axis.spatial(16, i)
            Bs = T.match_buffer(B[vi, 0:16], (16,), "float16", offset_factor=1)
            Sv = T.match_buffer(S[vi, 0:16], (16,), "float16", scope="shared", offset_factor=1)
            for x in range(16):
                Bs[x] = Sv[x]
"""


MATCH_SCALAR = """
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("b"):
            vi, vj = T.axis.remap("SS", [i, j])
            a = T.match_buffer(A[vi, vj], (), offset_factor=1)
            b = T.match_buffer(B[vi, vj], (), offset_factor=1)
            b[()] = a[()] + T.float32(1)
"""


@pytest.mark.parametrize(
    "text", [MATCH_TILES, MATCH_SCOPES, MATCH_SCALAR], ids=["tiles", "scopes", "scalar"]
)
def test_match_buffer_of_a_region_in_a_block(text):
    same_as_tvm(text)


@pytest.mark.parametrize("prim", ["split", "fuse", "reorder", "inner_split", "inner_blockize"])
def test_schedules_of_blocks_with_match_buffer_are_tvms(prim):
    import tvm

    results = []
    for make, mod in (
        (tvm.tir.Schedule, tvm.script.from_source(MATCH_TILES)),
        (tir_mlir.Schedule, tir_mlir.parse(MATCH_TILES)),
    ):
        sch = make(mod)
        b, c = sch.get_block("b"), sch.get_block("c")
        i, j = sch.get_loops(b)
        x, y = sch.get_loops(c)[-2:]
        {
            "split": lambda: sch.split(i, [None, 2]),
            "fuse": lambda: sch.fuse(i, j),
            "reorder": lambda: sch.reorder(j, i),
            "inner_split": lambda: sch.split(x, [2, 2]),
            "inner_blockize": lambda: sch.blockize(y),
        }[prim]()
        results.append(_body(sch.mod.script()))
    assert results[0] == results[1]
    a = np.random.default_rng(2).random((16, 16), "float32")
    out = np.zeros_like(a)
    tir_mlir.build(sch.mod)["mb"](a, out)
    np.testing.assert_allclose(out, a * 2)


@pytest.mark.parametrize(
    "region, message",
    [
        ("A[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4], (16,)", "cannot be matched to shape"),
        ("A[vi * 4:vi * 4 + 4, vj], (4, 1, 1)", "cannot be matched to shape"),
        ('A[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4], (4, 4), "int8"', "T.match_buffer of int8"),
        ("A[vi * 4:vj, 0:4], (4, 4)", "extent of a region must be a positive constant"),
    ],
)
def test_bad_match_buffer_regions_are_located_errors(region, message):
    with pytest.raises(tir_mlir.TIRParseError, match=message):
        tir_mlir.parse(f"""
@T.prim_func
def f(A: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("b"):
            vi, vj = T.axis.remap("SS", [i, j])
            As = T.match_buffer({region})
            As[0, 0] = T.float32(1)
""")


OPAQUE_TILES = """
@T.prim_func
def f(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("tile"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
            T.writes(B[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
            As = T.match_buffer(A[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16], (16, 16), offset_factor=1)
            Bs = T.match_buffer(B[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16], (16, 16), offset_factor=1)
            T.evaluate(T.call_extern("int32", "copy16", T.tvm_access_ptr(T.type_annotation("float32"), Bs.data, Bs.elem_offset, 256, 2), T.tvm_access_ptr(T.type_annotation("float32"), As.data, As.elem_offset, 256, 1)))
"""

INTRIN_DESC = """
@T.prim_func
def desc(a: T.handle, c: T.handle):
    A = T.match_buffer(a, (16, 16), "float16", align=32, offset_factor=16, scope="wmma.matrix_a")
    C = T.match_buffer(c, (16, 16), "float16", align=64, offset_factor=16, scope="shared")
    with T.block("root"):
        T.reads(A[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        for i, j in T.grid(16, 16):
            with T.block("c"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj]
"""


def test_opaque_block_passing_tile_pointers_to_an_extern_call(tmp_path):
    mod = same_as_tvm(OPAQUE_TILES, run=False)  # TVM would need the C function too
    if shutil.which("cc") is None:
        pytest.skip("no C compiler to build the extern function")
    lib = tmp_path / "copy16.c"
    lib.write_text(
        "int copy16(float *dst, const float *src) {\n"
        "  for (int i = 0; i < 16; ++i)\n"
        "    for (int j = 0; j < 16; ++j) dst[i * 64 + j] = src[i * 64 + j] * 2.0f;\n"
        "  return 0;\n}\n"
    )
    a = np.random.default_rng(3).random((64, 64), "float32")
    b = np.zeros_like(a)
    tir_mlir.build(mod, extern_libs=[str(lib)])["f"](a, b)
    np.testing.assert_allclose(b, a * 2)


def test_intrinsic_description_with_scopes_and_an_explicit_root():
    same_as_tvm(INTRIN_DESC, run=False)  # scopes like wmma.matrix_a do not build on CPU


CONST_ROOT = """
@T.prim_func
def f(A: T.Buffer((2, 2), "int32"), B: T.Buffer((2, 2), "int32")):
    K = T.allocate_const([1, -2, 3, 40000], "int32", [2, 2])
    Kb = T.decl_buffer((2, 2), "int32", data=K)
    for i, j in T.grid(2, 2):
        with T.block("b"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + Kb[vi, vj]
"""

CONST_IN_BLOCK = """
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            K = T.allocate_const([1.5, -2.0, 0.25, 4.0], "float32", [4])
            Kb = T.decl_buffer((4,), data=K)
            B[vi] = A[vi] * Kb[vi]
"""


@pytest.mark.parametrize("text", [CONST_ROOT, CONST_IN_BLOCK], ids=["root", "block"])
def test_allocate_const_buffers(text):
    same_as_tvm(text)


def test_allocate_const_survives_a_schedule():
    sch = tir_mlir.Schedule(tir_mlir.parse(CONST_ROOT))
    i, j = sch.get_loops(sch.get_block("b"))
    sch.reorder(j, i)
    sch.cache_read(sch.get_block("b"), 1, "local")
    a = np.arange(4, dtype="int32").reshape(2, 2)
    b = np.zeros_like(a)
    tir_mlir.build(sch.mod)["f"](a, b)
    np.testing.assert_array_equal(b, a + np.array([[1, -2], [3, 40000]]))


@pytest.mark.parametrize(
    "stmts, message",
    [
        ('K = T.allocate_const([1, 2], "int32", [3])', "2 values for extents"),
        (
            'K = T.allocate_const([1, 2], "int32", [2])\n    Kb = T.decl_buffer((2,), "int8", data=K)',
            "must be the constant's",
        ),
        ('Kb = T.decl_buffer((2,), "int32", data=A)', "must name a T.allocate_const"),
    ],
)
def test_bad_constant_buffers_are_located_errors(stmts, message):
    with pytest.raises(tir_mlir.TIRParseError, match=message):
        tir_mlir.parse(f"""
@T.prim_func
def f(A: T.Buffer((2,), "int32")):
    {stmts}
    A[0] = 1
""")


VECTOR_PARAMS = """
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((4,), "float32x4")):
    for i in range(4):
        B[T.Ramp(i * 4, 1, 4)] = A[T.Ramp(i * 4, 1, 4)] * T.Broadcast(T.float32(2), 4) + C[i]
"""

VECTOR_DTYPES = """
@T.prim_func
def k(A: T.Buffer((4,), "int8x4"), B: T.Buffer((4, 8), "int16")):
    for i in range(4):
        A[i] = T.int8x4(1)
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            B[vi, 0:4] = T.Cast("int16x4", A[vi]) + T.Broadcast(T.int16(3), 4)
            B[vi, 4:8] = T.Cast("int16x4", T.Ramp(vi, 2, 4))
"""

VECTOR_RUN = """
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "int8"), D: T.Buffer((16,), "int32")):
    for i in range(4):
        B[i * 4:i * 4 + 4] = A[i * 4:i * 4 + 4] * T.Broadcast(T.float32(2), 4) + T.Cast("float32x4", T.Ramp(i, 3, 4))
        D[i * 4:i * 4 + 4] = T.Cast("int32x4", C[i * 4:i * 4 + 4]) * T.Broadcast(3, 4)
"""


@pytest.mark.parametrize("text", [VECTOR_PARAMS, VECTOR_DTYPES], ids=["ramp", "dtypes"])
def test_vector_dtypes_print_as_tvm(text):
    same_as_tvm(text, run=False)  # vector-dtype parameters: numpy has no float32x4


def test_vector_expressions_run_like_tvm():
    same_as_tvm(VECTOR_RUN)


def test_vector_buffer_in_a_block_runs():
    mod = tir_mlir.parse(INT16X4_BUFFER)
    a = np.arange(32, dtype="int16").reshape(4, 8)
    for run in (
        lambda b: tir_mlir.build(mod)["f"](a, b),
        lambda b: tir_mlir.interpret(mod, "f", a, b),
    ):
        b = np.zeros_like(a)
        run(b)
        np.testing.assert_array_equal(b, int16x4_buffer_reference(a))


@pytest.mark.parametrize(
    "expr, message",
    [
        ("A[T.Ramp(0, 2, 4)]", "stride 1"),
        ('T.Cast("float32x8", A[0:4])', "lanes differ"),
        ("A[0:4] + T.Broadcast(T.float32(1), 8)", "float32x4 and float32x8"),
    ],
)
def test_bad_vector_expressions_are_located_errors(expr, message):
    with pytest.raises(tir_mlir.TIRParseError, match=message):
        tir_mlir.parse(f"""
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    B[0:4] = {expr}
""")


PROGRAMS = {
    name: text
    for name, text in globals().items()
    if name.isupper() and isinstance(text, str) and "@T.prim_func" in text
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_tir_dialect_text_reads_back(name):
    """`parse --emit mlir` output of each construct is accepted as input and prints the same."""
    from tir_mlir.frontend.mlir_input import parse_mlir

    mod = tir_mlir.parse(PROGRAMS[name])
    assert parse_mlir(mod.mlir()).script() == mod.script()
