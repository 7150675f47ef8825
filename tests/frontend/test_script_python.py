"""TVMScript in Python files: the decorators (`tir_mlir.script`) and `tir-mlir parse file.py`.

TVM 0.21 is the oracle: the same decorated file, imported with TVM's `T`/`I` and with ours,
must give structurally equal functions.
"""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import tir_mlir
from tir_mlir.cli import main
from tir_mlir.errors import TIRParseError
from tir_mlir.script.pyfile import load_python, parse_python

DATA = Path(__file__).parent.parent / "data" / "frontend" / "python"
OURS = "from tir_mlir.script import tir as T, ir as I"
TVMS = "from tvm.script import tir as T, ir as I"
EXPECTED = {
    "captured.py": ["scaled", "matmul", "add_100_f32", "add_8_i32"],
    "module.py": ["Module"],
    "metaprog.py": ["rows", "clamp", "packed", "meta", "sum_16", "max_16"],
}


def import_file(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as an import does: inspect finds classes through it
    spec.loader.exec_module(module)
    return module


def with_imports(src: Path, tmp_path: Path, line: str, tag: str) -> Path:
    out = tmp_path / f"{tag}_{src.name}"
    out.write_text(src.read_text().replace(TVMS, line))
    return out


@pytest.mark.tvm
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_decorated_file_equals_tvm(name, tmp_path):
    import tvm

    ours = import_file(with_imports(DATA / name, tmp_path, OURS, "ours"), f"ours_{name[:-3]}")
    theirs = import_file(with_imports(DATA / name, tmp_path, TVMS, "tvm"), f"tvm_{name[:-3]}")
    for attr in EXPECTED[name]:
        mine, expected = getattr(ours, attr), getattr(theirs, attr)
        assert isinstance(mine, tir_mlir.IRModule)
        got = tvm.script.from_source(mine.script())
        if isinstance(expected, tvm.tir.PrimFunc):
            # TVM names a PrimFunc by its def; compare the function bodies
            got, expected = (
                got.without_attr("global_symbol"),
                expected.without_attr("global_symbol"),
            )
        tvm.ir.assert_structural_equal(got, expected)


def test_cli_reads_the_top_level_definitions_without_running_the_file():
    mod = load_python(DATA / "captured.py")
    assert list(mod) == ["scaled", "matmul"]  # make_add's functions need a call
    text = mod.script()
    assert 'A: T.Buffer((64, 32), "float32")' in text and "T.float32(2.5)" in text
    out = CliRunner().invoke(main, ["parse", str(DATA / "module.py")])
    assert out.exit_code == 0, out.output
    assert out.stdout == load_python(DATA / "module.py").script() + "\n"


def test_decorated_functions_build_and_run(tmp_path):
    m = import_file(with_imports(DATA / "captured.py", tmp_path, OURS, "run"), "run_captured")
    a = np.random.rand(64, 32).astype("float32")
    b = np.random.rand(32, 32).astype("float32")
    c = np.zeros((64, 32), "float32")
    sch = tir_mlir.Schedule(m.matmul)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.split(j, factors=[None, 8])
    tir_mlir.build(sch.mod, "llvm")["matmul"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    x, y = np.arange(8, dtype="int32"), np.full(8, 3, "int32")
    z = np.zeros(8, "int32")
    tir_mlir.build(m.add_8_i32, "llvm")["add"](x, y, z)
    np.testing.assert_array_equal(z, x + y)


def test_hygienic_macro_renames_a_local_that_would_capture_an_argument():
    mod = parse_python("""
from tvm.script import tir as T

@T.macro
def fill_row(B, row):
    for i in range(4):
        B[row, i] = T.float32(1)

@T.prim_func
def f(B: T.Buffer((4, 4), "float32")):
    for i in range(4):
        fill_row(B, i)
""")
    assert "B[i, i_1] = T.float32(1.0)" in mod.script()
    b = np.zeros((4, 4), "float32")
    tir_mlir.build(mod, "llvm")["f"](b)
    np.testing.assert_array_equal(b, np.ones((4, 4)))


@pytest.mark.parametrize(
    "source, message",
    [
        (
            "import os\nP = os.getcwd()\n@T.prim_func\ndef f(A: T.Buffer((P,), 'float32')):\n    pass\n",
            "'P' is assigned at line 2 by an expression that only running the file would evaluate",
        ),
        (
            "@T.macro\ndef m(A):\n    A[0] = T.float32(0)\n@T.prim_func\ndef f(A: T.Buffer((1,), "
            "'float32')):\n    A[0] = m\n",
            "macro 'm' can only be called, as a statement",
        ),
        (
            "@T.macro(hygienic=False)\ndef m(A):\n    m(A)\n@T.prim_func\n"
            "def f(A: T.Buffer((1,), 'float32')):\n    m(A)\n",
            "expands more than 32 levels deep",
        ),
        (
            "@T.macro\ndef m(A, i):\n    A[i] = T.float32(0)\n@T.prim_func\n"
            "def f(A: T.Buffer((1,), 'float32')):\n    m(A)\n",
            "macro 'm' is missing argument 'i'",
        ),
        ("import os\n", "no @T.prim_func or @I.ir_module definition"),
        (
            "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    n = T.meta_var(len(A))\n",
            "T.meta_var: tir-mlir never runs Python",
        ),
        (
            "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    n, m = T.meta_var((1, 2, 3))\n",
            "T.meta_var: cannot unpack (1, 2, 3) into 2 names",
        ),
        (
            "S = (4, 8)\n@T.prim_func\ndef f(A: T.Buffer((S[2],), 'float32')):\n    pass\n",
            "index 2 is out of range for 'S' (a tuple of 2)",
        ),
        ("def f(:\n", "not a Python file"),
    ],
)
def test_python_file_errors_are_located(source, message):
    with pytest.raises(TIRParseError) as e:
        parse_python(source, "t.py")
    assert message in e.value.message
    assert e.value.loc.file == "t.py"


class _Sneaky(type):
    """A metaclass whose `__name__` would run code if the error message asked for it."""

    @property
    def __name__(cls):
        raise AssertionError("user code ran")


class _Value(metaclass=_Sneaky):
    def __index__(self):
        raise AssertionError("user code ran")

    __int__ = __eq__ = __hash__ = __index__


class _EqMeta(type):
    """A metaclass whose `==` and `hash` would run code (`type(x) in (int, ...)` calls them)."""

    def __eq__(cls, other):
        raise AssertionError("user code ran")

    def __hash__(cls):
        raise AssertionError("user code ran")


class _Eq(metaclass=_EqMeta):
    pass


class _ClassProperty:
    """`isinstance(x, C)` reads `x.__class__`, which this property answers by running code."""

    @property
    def __class__(self):
        raise AssertionError("user code ran")


def test_captured_objects_are_never_called(tmp_path):
    path = tmp_path / "sneaky.py"
    path.write_text(f"""{OURS}
def make(n):
    @T.prim_func
    def f(A: T.Buffer((n,), "float32")):
        for i in range(n):
            A[i] = T.float32(0)
    return f
""")
    m = import_file(path, "sneaky")
    with pytest.raises(TIRParseError) as e:
        m.make(_Value())
    assert "'n' is a _Value in the enclosing Python scope" in e.value.message
    assert e.value.loc.file == str(path) and e.value.loc.line == 4
    with pytest.raises(TIRParseError, match="'n' is a function"):
        m.make(lambda: 0)
    for hostile in (_Eq(), _ClassProperty(), [_Eq()], (1, _ClassProperty())):
        with pytest.raises(TIRParseError, match="in the enclosing Python scope"):
            m.make(hostile)
    assert list(m.make(np.int64(3))) == ["f"]


# Every position of a decorated Python file, with a payload that would create MARKER if run.
PAYLOAD = "__import__('pathlib').Path(MARKER).touch()"
HOSTILE = {
    "shape": "@T.prim_func\ndef f(A: T.Buffer(({p},), 'float32')):\n    pass\n",
    "dtype": "@T.prim_func\ndef f(A: T.Buffer((4,), {p})):\n    pass\n",
    "default": "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32') = {p}):\n    pass\n",
    "decorator": "@T.prim_func({p})\ndef f(A: T.Buffer((4,), 'float32')):\n    pass\n",
    "decorator_above": "@evil({p})\n@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    pass\n",
    "return_annotation": "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')) -> {p}:\n    pass\n",
    "body": "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    {p}\n",
    "loop_extent": "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    for i in range({p}):\n"
    "        A[i] = T.float32(0)\n",
    "fstring": "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    T.func_attr({{'a': "
    "f'{{{p}}}'}})\n",
    "class_base": "@I.ir_module\nclass M({p}):\n    @T.prim_func\n    def f(A: T.Buffer((4,), "
    "'float32')):\n        pass\n",
    "class_body": "@I.ir_module\nclass M:\n    x = {p}\n    @T.prim_func\n    def f(A: "
    "T.Buffer((4,), 'float32')):\n        pass\n",
    "macro": "@T.macro\ndef m(A):\n    {p}\n@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n"
    "    m(A)\n",
    "constant": "N = {p}\n@T.prim_func\ndef f(A: T.Buffer((N,), 'float32')):\n    pass\n",
    "module_code": "{p}\n@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    pass\n",
    "lambda": "K = (lambda: {p})()\n@T.prim_func\ndef f(A: T.Buffer((K,), 'float32')):\n    pass\n",
    "meta_var": "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    n = T.meta_var({p})\n",
    "subscript": "S = (4,)\n@T.prim_func\ndef f(A: T.Buffer((S[{p}],), 'float32')):\n    pass\n",
    "if_condition": "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    if {p}:\n"
    "        A[0] = T.float32(1)\n",
}


@pytest.mark.parametrize("where", sorted(HOSTILE))
def test_no_payload_runs_from_a_python_file(where, tmp_path):
    marker = tmp_path / "ran"
    source = f"MARKER = {str(marker)!r}\n{TVMS}\n" + HOSTILE[where].format(p=PAYLOAD)
    path = tmp_path / "hostile.py"
    path.write_text(source)
    out = CliRunner().invoke(main, ["parse", str(path)])
    assert not marker.exists()
    assert out.exception is None or isinstance(out.exception, SystemExit), out.exception
    if out.exit_code:
        assert out.stderr.startswith(f"{path}:"), out.stderr


def test_no_payload_in_a_decorated_body_runs(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "body.py"
    path.write_text(f"""{OURS}
@T.macro
def m(A):
    {PAYLOAD.replace("MARKER", repr(str(marker)))}

@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    {PAYLOAD.replace("MARKER", repr(str(marker)))}
""")
    with pytest.raises(TIRParseError):
        import_file(path, "body_payload")
    assert not marker.exists()


def test_tvmscript_doc_python_example():
    doc = (Path(__file__).parent.parent.parent / "docs" / "tvmscript.md").read_text()
    section = doc.split("## TVMScript in Python files")[1].split("## Not supported")[0]
    source = section.split("```python\n")[1].split("```")[0]
    mod = parse_python(source, "doc.py")
    a, b = np.random.rand(128).astype("float32"), np.zeros(128, "float32")
    tir_mlir.build(mod, "llvm")["main"](a, b)
    np.testing.assert_allclose(b, a * 2.5)


def test_cli_runs_a_python_file_against_the_interpreter():
    out = CliRunner().invoke(
        main, ["run", str(DATA / "captured.py"), "--func", "scaled", "--check"]
    )
    assert out.exit_code == 0, out.output
    assert "check: OK" in out.output


def test_cli_prints_symbolic_functions_as_tvm_and_runs_them_specialized(tmp_path):
    src = (DATA / "symbolic.py").read_text()
    path = tmp_path / "add.py"
    path.write_text(src[: src.index("@T.prim_func", src.index("def add"))])  # `add` alone
    out = CliRunner().invoke(main, ["parse", str(path)])
    assert out.exit_code == 0, out.output
    assert "    n = T.int32()\n" in out.output and "T.match_buffer(a, (n," in out.output
    printed = tmp_path / "printed.py"
    printed.write_text(out.output)
    again = CliRunner().invoke(main, ["parse", str(printed)])
    assert again.exit_code == 0 and again.output == out.output, again.output
    out = CliRunner().invoke(main, ["run", str(path)])
    assert out.exit_code == 1
    assert out.output.startswith(
        f"{path}:6:1: error: the program has symbolic shapes or "
        "scalar parameters (n): give their values with --specialize"
    )
    out = CliRunner().invoke(main, ["run", str(path), "--specialize", "n=5", "--check"])
    assert out.exit_code == 0 and "check: OK" in out.output, out.output


def test_cli_prints_non_affine_uses_of_symbolic_vars():
    out = CliRunner().invoke(main, ["parse", str(DATA / "symbolic.py")])
    assert out.exit_code == 0, out.output  # axpy loops over T.ceildiv(n, chunk): printed
    assert "T.grid((n + chunk - 1) // chunk, chunk)" in out.output
    path = str(DATA / "symbolic_forms.py")  # mean_sq divides by T.Cast("float32", n * n)
    out = CliRunner().invoke(main, ["parse", path])
    assert out.exit_code == 0, out.output
    assert 'T.Cast("float32", n * n)' in out.output
