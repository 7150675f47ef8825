"""T.call_extern: parsed and printed as TVM prints it, lowered to a declared C function linked
from `build(..., extern_libs=[...])`, and the target of tensorize (TVMScript and TE intrinsics,
the TE seed example 18 with the article's `gemv_update` kernel) computing numpy's numbers."""

import shutil
import subprocess

import numpy as np
import pytest

import tir_mlir
from tir_mlir import Schedule, TensorIntrin
from tir_mlir.errors import BuildError, RuntimeCallError, TIRParseError
from shared_programs import GEMV_DESC, MM_T
from te_examples import run_example

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")

SCALE_ROW_C = """
int scale_row(float *out, const float *in, int n, float s) {
  for (int i = 0; i < n; ++i) out[i] = in[i] * s;
  return 0;
}
"""
SCALE_ROW_LL = """
define i32 @scale_row(ptr %out, ptr %in, i32 %n, float %s) {
entry:
  br label %loop
loop:
  %i = phi i32 [0, %entry], [%next, %body]
  %more = icmp slt i32 %i, %n
  br i1 %more, label %body, label %exit
body:
  %pi = getelementptr float, ptr %in, i32 %i
  %v = load float, ptr %pi
  %m = fmul float %v, %s
  %po = getelementptr float, ptr %out, i32 %i
  store float %m, ptr %po
  %next = add i32 %i, 1
  br label %loop
exit:
  ret i32 0
}
"""
# The C kernel of TVM's tensorize tutorial (the article's example 18).
GEMV_C = """
int gemv_update(float *cc, float *aa, float *bb, int m, int l, int stride) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < l; ++j)
      cc[i] += aa[j] * bb[i * stride + j];
  return 0;
}
"""

ROWS = """
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32")):
    for i in range(8):
        T.call_extern("int32", "scale_row", T.address_of(B[i, 0]), T.address_of(A[i, 0]), 16, T.float32(2.5))
"""

ROWS_BLOCK = """
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32")):
    for i in range(8):
        with T.block("row"):
            vi = T.axis.spatial(8, i)
            T.call_extern("int32", "scale_row", T.address_of(B[vi, 0]), T.address_of(A[vi, 0]), 16, T.float32(2.5))
"""

CALLS = """# from tvm.script import tir as T

@T.prim_func
def main(a: T.handle, B: T.Buffer((16, 64), "float32"), C: T.Buffer((16,), "float32")):
    A = T.match_buffer(a, (64,))
    T.call_extern("int32", "gemv_update", T.tvm_access_ptr(T.type_annotation("float32"), C.data, C.elem_offset, 16, 2), T.tvm_access_ptr(T.type_annotation("float32"), A.data, A.elem_offset, 64, 1), B.data, 16, 64, B.strides[0])
    T.call_extern("int32", "f", T.address_of(B[1, 2]), A.data)
    for i in range(4):
        T.call_pure_extern("float32", "g", A[i], T.address_of(B[i, i * 2]))"""


@pytest.fixture
def c_file(tmp_path):
    def write(text, name="kernel.c"):
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


def test_print_round_trip():
    mod = tir_mlir.parse(CALLS)
    assert mod.script().strip() == CALLS
    assert tir_mlir.parse(mod.script()).script() == mod.script()


@pytest.mark.tvm
def test_access_ptr_method_prints_as_tvm():
    import tvm

    text = """
@T.prim_func
def main(A: T.Buffer((16, 64), "float32"), C: T.Buffer((16,), "float32")):
    T.call_extern("int32", "f", C.access_ptr("w"), A.access_ptr("r"), T.address_of(A[2, 3]), A.data)
"""
    ours = tir_mlir.parse(text).script()
    theirs = tvm.script.from_source(text).script()
    # TVM writes a parameter's elem_offset as its value 0; tir_mlir keeps the buffer's name
    assert ours.replace("C.elem_offset", "0").replace("A.elem_offset", "0") == theirs


@pytest.mark.parametrize(
    "bad, message",
    [
        ('T.call_extern("int32")', "takes a dtype, the function's name and its arguments"),
        ('T.call_extern("int31", "f")', "unknown dtype 'int31'"),
        ('T.call_extern("int32", "f", A.strides[2])', "A.strides takes one constant index below 2"),
        ('T.call_extern("int32", "f", A.size)', "buffer 'A' has no attribute 'size'"),
        ('T.call_extern("int32", "f", T.address_of(A))', "T.address_of takes a buffer element"),
        ('T.call_extern("int32", "f", A.access_ptr("x"))', "access_ptr takes an access mask"),
        (
            'T.call_extern("int32", "f", T.tvm_access_ptr(T.type_annotation("float32"), A, 0, 1, 1))',
            "second argument must be a pointer",
        ),
    ],
)
def test_bad_calls_are_located_errors(bad, message):
    text = f"""
@T.prim_func
def main(A: T.Buffer((4, 4), "float32")):
    {bad}
"""
    with pytest.raises(TIRParseError, match=message) as e:
        tir_mlir.parse(text, filename="t.tir")
    assert e.value.loc.line == 4


@pytest.mark.parametrize("kind", ["c", "so", "o", "ll"])
def test_extern_libs_of_every_kind(c_file, tmp_path, kind):
    src = c_file(SCALE_ROW_C)
    lib_path = {"c": src}.get(kind)
    if kind == "so":
        lib_path = tmp_path / "libk.so"
        subprocess.run(["cc", "-shared", "-fPIC", "-O2", str(src), "-o", str(lib_path)], check=True)
    elif kind == "o":
        lib_path = tmp_path / "k.o"
        subprocess.run(["cc", "-c", "-fPIC", "-O2", str(src), "-o", str(lib_path)], check=True)
    elif kind == "ll":
        lib_path = tmp_path / "k.ll"
        lib_path.write_text(SCALE_ROW_LL)
    a = np.random.default_rng(0).random((8, 16), dtype="float32")
    b = np.zeros_like(a)
    tir_mlir.build(tir_mlir.parse(ROWS), extern_libs=[lib_path])["main"](a, b)
    np.testing.assert_allclose(b, a * 2.5)


def test_debug_build_runs_extern_calls_in_the_jit(c_file):
    a = np.random.default_rng(1).random((8, 16), dtype="float32")
    b = np.zeros_like(a)
    tir_mlir.build(tir_mlir.parse(ROWS), debug=True, extern_libs=[c_file(SCALE_ROW_C)])["main"](
        a, b
    )
    np.testing.assert_allclose(b, a * 2.5)


def test_editing_the_kernel_rebuilds(c_file):
    a = np.ones((8, 16), "float32")
    b = np.zeros_like(a)
    src = c_file(SCALE_ROW_C)
    tir_mlir.build(tir_mlir.parse(ROWS), extern_libs=[src])["main"](a, b)
    src.write_text(SCALE_ROW_C.replace("in[i] * s", "in[i] * s + 1"))
    tir_mlir.build(tir_mlir.parse(ROWS), extern_libs=[src])["main"](a, b)
    np.testing.assert_allclose(b, a * 2.5 + 1)


def test_missing_symbol_and_bad_libs_are_errors(tmp_path, c_file):
    mod = tir_mlir.parse(ROWS.replace("scale_row", "no_such_kernel_xyz"))
    with pytest.raises(RuntimeCallError, match="undefined symbol: no_such_kernel_xyz.*extern_libs"):
        tir_mlir.build(mod)
    with pytest.raises(BuildError, match="does not exist"):
        tir_mlir.build(mod, extern_libs=[tmp_path / "missing.c"])
    with pytest.raises(BuildError, match="expected a .so, .o, .a"):
        tir_mlir.build(mod, extern_libs=[c_file("x", "notes.txt")])
    with pytest.raises(BuildError, match="cc failed on"):
        tir_mlir.build(mod, extern_libs=[c_file("int broken(", "broken.c")])


LOCAL = """
@T.prim_func
def main(A: T.Buffer((8, 4), "float32")):
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            L = T.alloc_buffer((4,), "float32", scope="local")
            L[0] = T.float32(-1)
            T.call_extern("int32", "fill", T.address_of(L[0]), 4, T.Cast("float32", vi))
            for j in range(4):
                A[vi, j] = L[j] * T.float32(2)
"""
FILL_C = (
    "int fill(float *p, int n, float v) { for (int i = 0; i < n; ++i) p[i] = v + i; return 0; }"
)


def test_a_local_buffer_written_by_c_is_not_kept_in_registers(c_file):
    mod = tir_mlir.parse(LOCAL)
    a = np.zeros((8, 4), "float32")
    tir_mlir.build(mod, extern_libs=[c_file(FILL_C)])["main"](a)
    np.testing.assert_allclose(a, 2 * (np.arange(8)[:, None] + np.arange(4)[None, :]))
    with pytest.raises(tir_mlir.TIRError, match="T.call_extern.*not interpreted"):
        tir_mlir.interpret(mod, "main", a)


def test_one_symbol_two_signatures_is_an_error():
    mod = tir_mlir.parse("""
@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    T.call_extern("int32", "f", A.data)
    T.call_extern("int32", "f", A.data, 1)
""")
    with pytest.raises(BuildError, match="'f' is called with arguments"):
        tir_mlir.build(mod)


GEMV_IMPL = """
@T.prim_func
def gemv_impl(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (64,), offset_factor=1)
    B = T.match_buffer(b, (16, 64), offset_factor=1)
    C = T.match_buffer(c, (16,), offset_factor=1)
    T.call_extern("int32", "gemv_update", C.access_ptr("w"), A.access_ptr("r"), B.access_ptr("r"), 16, 64, B.strides[0])
"""


def test_tensorize_onto_a_c_kernel(c_file):
    TensorIntrin.register("test_gemv_extern", GEMV_DESC, GEMV_IMPL, override=True)
    sch = Schedule(tir_mlir.parse(MM_T))
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, [None, 16])
    sch.tensorize(j1, "test_gemv_extern")
    text = sch.mod.script()
    # TVM's form: the impl's buffers are match_buffer views of the matched regions
    assert (
        "B_1 = T.match_buffer(B[vj_o * 16:vj_o * 16 + 16, 0:64], (16, 64), offset_factor=1)" in text
    )
    assert (
        'T.call_extern("int32", "gemv_update", T.tvm_access_ptr(T.type_annotation('
        '"float32"), C_1.data, C_1.elem_offset, 16, 2), T.tvm_access_ptr('
        'T.type_annotation("float32"), A_1.data, A_1.elem_offset, 64, 1), T.tvm_access_ptr('
        'T.type_annotation("float32"), B_1.data, B_1.elem_offset, 1024, 1), 16, 64, '
        "B_1.strides[0])"
    ) in text
    assert "T.reads(A[vi_o, 0:64], B[vj_o * 16:vj_o * 16 + 16, 0:64])" in text
    assert "T.writes(C[vi_o, vj_o * 16:vj_o * 16 + 16])" in text
    rng = np.random.default_rng(2)
    a = rng.random((32, 64), dtype="float32")
    b = rng.random((48, 64), dtype="float32")
    for mod in (sch.mod, tir_mlir.parse(text)):  # also the printed program
        c = rng.random((32, 48), dtype="float32")  # the kept T.init zeroes it
        tir_mlir.build(mod, extern_libs=[c_file(GEMV_C)])["main"](a, b, c)
        np.testing.assert_allclose(c, a @ b.T, rtol=1e-5)


def test_te_seed_example_18_runs_with_the_c_kernel(c_file):
    g, printed = run_example("18_tensorize")
    assert printed.count("@T.prim_func") == 2
    mod = tir_mlir.lower(g["s"], [g["A"], g["B"], g["C"]])
    assert str(mod) in printed
    assert 'T.call_extern("int32", "gemv_update"' in str(mod)
    rng = np.random.default_rng(3)
    a = rng.random((1024, 64), dtype="float32")
    b = rng.random((512, 64), dtype="float32")
    c = np.full((1024, 512), np.nan, "float32")
    tir_mlir.build(mod, extern_libs=[c_file(GEMV_C)])["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-4)


def test_import_pragmas_carry_the_code():
    """TVM's way: the kernel travels with the program (TE pragma, TensorIR annotation)."""
    g, _ = run_example("18_tensorize")
    s, C = g["s"], g["C"]
    s[C].pragma(s[C].op.axis[0], "import_c", GEMV_C)
    mod = tir_mlir.lower(s, [g["A"], g["B"], C])
    assert '"pragma_import_c": "\\nint gemv_update(float *cc' in mod.script()
    rng = np.random.default_rng(4)
    a, b = rng.random((1024, 64), dtype="float32"), rng.random((512, 64), dtype="float32")
    c = np.zeros((1024, 512), "float32")
    tir_mlir.build(mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-4)
    sch = Schedule(tir_mlir.parse(ROWS_BLOCK))
    sch.annotate(sch.get_loops(sch.get_block("row"))[0], "pragma_import_llvm", SCALE_ROW_LL)
    a = np.ones((8, 16), "float32")
    out = np.zeros_like(a)
    tir_mlir.build(sch.mod)["main"](a, out)
    np.testing.assert_allclose(out, 2.5)
    with pytest.raises(tir_mlir.ScheduleError, match="takes the code as a string"):
        s[C].pragma(s[C].op.axis[0], "import_llvm", 1)


def test_cli_run_links_extern_lib(c_file, tmp_path):
    import sys
    from pathlib import Path

    tir = Path(sys.executable).with_name("tir-mlir")
    prog = tmp_path / "rows.tir"
    prog.write_text(ROWS)
    np.save(tmp_path / "a.npy", np.full((8, 16), 2, "float32"))
    r = subprocess.run(
        [
            str(tir),
            "run",
            str(prog),
            "--extern-lib",
            str(c_file(SCALE_ROW_C)),
            "-i",
            f"A={tmp_path / 'a.npy'}",
            "-O",
            f"B={tmp_path / 'b.npy'}",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(np.load(tmp_path / "b.npy"), 5.0)
    r = subprocess.run([str(tir), "run", str(prog)], capture_output=True, text=True)
    assert r.returncode == 1 and "undefined symbol: scale_row" in r.stderr
    assert "--extern-lib" in r.stderr and "Traceback" not in r.stderr
