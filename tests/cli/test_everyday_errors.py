"""Errors as a user meets them, from the CLI and from Python: a `--transform` script that fails
while it is imported, the trace `print(sch.trace)` writes fed back, a TVMScript error in a `.py`
file (a SyntaxError with the source line and a caret), "did you mean" for misspelt names,
unknown targets and CPUs, a missing optional extra, TVMScript in a `.mlir` file, and what
`run --check` compares with."""

import subprocess
import sys
import textwrap
import traceback
from pathlib import Path

import pytest
from click.testing import CliRunner

import tir_mlir
from tir_mlir.cli import main

ROOT = Path(__file__).parent.parent.parent
PROGRAM = str(ROOT / "examples" / "mm_relu.tir")
SCRIPT = str(ROOT / "examples" / "mm_relu_schedule.py")


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


# --- --transform scripts -------------------------------------------------------------------
def test_a_script_failing_while_imported_is_located_in_the_script(tmp_path):
    s = _write(
        tmp_path,
        "s.py",
        """\
        import numpy as np

        x = undefined_thing + 1
        def schedule(sch):
            pass
        """,
    )
    r = cli("schedule", PROGRAM, "--transform", s)
    assert r.exit_code == 1
    assert r.output == (
        f"{s}:3:5: error: NameError: name 'undefined_thing' is not defined\n"
        f"x = undefined_thing + 1\n    ^\n"
    )


def test_a_tvm_import_without_tvm_says_what_to_import_instead(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tvm", None)  # as on a machine without TVM
    s = _write(tmp_path, "s.py", "from tvm import tir\ndef schedule(sch):\n    pass\n")
    r = cli("schedule", PROGRAM, "--transform", s)
    assert r.exit_code == 1
    assert r.output.startswith(f"{s}:1:1: error: ModuleNotFoundError: ")
    assert "`from tir_mlir import tir`" in r.output and "frozen" not in r.output


def test_the_printed_trace_is_a_transform_script(tmp_path):
    """`print(sch.trace)` writes `def apply_trace(sch: tir.Schedule) -> None:` under a
    commented-out TVM import; fed back, it schedules as the script that made it did."""
    made = cli("schedule", PROGRAM, "--transform", SCRIPT, "--print-trace")
    assert made.exit_code == 0
    trace = made.output[made.output.index("# from tvm import tir") :]
    assert "def apply_trace(sch: tir.Schedule) -> None:" in trace
    with_annotation = _write(tmp_path, "trace.py", trace)
    without = _write(tmp_path, "plain.py", trace.replace("sch: tir.Schedule", "sch"))
    want = cli("schedule", PROGRAM, "--transform", SCRIPT).output
    for s in (with_annotation, without):
        r = cli("schedule", PROGRAM, "--transform", s)
        assert r.exit_code == 0, r.output
        assert r.output == want


def test_a_script_without_an_entry_point_names_both_forms(tmp_path):
    s = _write(tmp_path, "s.py", "def sched(sch):\n    pass\n")
    r = cli("schedule", PROGRAM, "--transform", s)
    assert r.exit_code == 2
    assert "does not define a function `schedule(sch)` (or `apply_trace(sch)`" in r.output


# --- TVMScript errors in Python files ------------------------------------------------------
BAD_PY = """\
from tir_mlir.script import tir as T


@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            A[vi] = undefined_x + T.float32(1)
"""


MODULE_PY = BAD_PY.replace(
    """@T.prim_func
def f(""",
    """@I.ir_module
class M:
  @T.prim_func
  def f(""",
).replace("from tir_mlir.script import tir as T", "from tir_mlir.script import ir as I, tir as T")


@pytest.mark.parametrize(
    "source, line, col",
    [
        (BAD_PY, 9, 21),
        (BAD_PY.replace("@T.prim_func\n", "@T.prim_func(private=True)\n"), 9, 21),
        (MODULE_PY, 11, 21),
    ],
)
def test_a_tvmscript_error_in_a_python_file_is_a_syntax_error_with_a_caret(
    tmp_path, source, line, col
):
    path = _write(tmp_path, "bad_ts.py", source)
    r = subprocess.run(
        [sys.executable, "-c", "import bad_ts"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 1
    tail = r.stderr.splitlines()[-4:]
    text = source.splitlines()[line - 1]
    assert tail == [
        f'  File "{path}", line {line}',
        f"    {text.lstrip()}",
        " " * (4 + col - 1 - (len(text) - len(text.lstrip()))) + "^",
        "tir_mlir.errors.TVMScriptError: undefined variable 'undefined_x'",
    ]
    ours = [x for x in r.stderr.splitlines() if x.startswith('  File "') and "tir_mlir" in x]
    assert len(ours) == 1  # the decorator's frame; the parser's are cut
    assert len(r.stderr.splitlines()) == 11


def test_the_tvmscript_error_carries_its_location(tmp_path, monkeypatch):
    _write(tmp_path, "bad_ts2.py", BAD_PY)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(SyntaxError) as info:
        __import__("bad_ts2")
    e = info.value
    assert isinstance(e, tir_mlir.TIRParseError)
    assert (Path(e.filename).name, e.lineno, e.offset) == ("bad_ts2.py", 9, 21)
    assert e.text == "            A[vi] = undefined_x + T.float32(1)"
    assert str(e).endswith("bad_ts2.py:9:21: undefined variable 'undefined_x'")
    shown = "".join(traceback.format_exception_only(type(e), e))
    assert shown.splitlines()[-2:] == [
        "            ^",
        ("tir_mlir.errors.TVMScriptError: undefined variable 'undefined_x'"),
    ]


# --- did you mean ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call, error, text",
    [
        (
            lambda s: s.get_block("YY", func_name="mm_relu"),
            tir_mlir.ScheduleError,
            "Cannot find a block with the name: YY (in function 'mm_relu') (did you mean 'Y'?)",
        ),
        (
            lambda s: s.get_block("c", func_name="mm_relu"),
            tir_mlir.ScheduleError,
            "(did you mean 'C'?)",
        ),
        (
            lambda s: s.split(s.get_loops(s.get_block("Y"))[0], factor=[None, 4]),
            TypeError,
            "Schedule.split() got an unexpected keyword argument 'factor' (did you mean 'factors'?)",
        ),
        (
            lambda s: s.get_block(nam="Y"),
            TypeError,
            "Schedule.get_block() got an unexpected keyword argument 'nam' (did you mean 'name'?)",
        ),
        (
            lambda s: s.cache_read(s.get_block("Y"), "a", "global"),
            tir_mlir.ScheduleError,
            "does not read a buffer named 'a' (did you mean 'A'?); its read buffers: A, B",
        ),
        (
            lambda s: s.transform_layout(s.get_block("Y"), "Yy", lambda i, j: (j, i)),
            tir_mlir.ScheduleError,
            "buffer named 'Yy' (did you mean 'Y'?); it accesses A, B, Y",
        ),
    ],
)
def test_misspelt_names_get_a_suggestion(call, error, text):
    sch = tir_mlir.Schedule(tir_mlir.load(PROGRAM))
    before = sch.mod.script()
    with pytest.raises(error) as info:
        call(sch)
    assert text in str(info.value)
    assert sch.mod.script() == before


# --- targets --------------------------------------------------------------------------------
def test_an_unknown_target_lists_llvm():
    with pytest.raises(tir_mlir.BuildError) as info:
        tir_mlir.build(tir_mlir.load(PROGRAM), target="llvmx")
    assert str(info.value) == (
        "unknown target 'llvmx' (did you mean 'llvm'?); known: llvm, cpu, cuda, c, nvptx"
    )
    r = cli("run", PROGRAM, "--target", "llvmx")
    assert r.exit_code == 1 and "known: llvm, cpu" in r.output


@pytest.mark.parametrize(
    "target, text",
    [
        (
            "llvm -mcpu=skylak",
            (
                "target -mcpu: LLVM does not know the CPU 'skylak' for "
                "x86_64-unknown-linux-gnu (did you mean 'skylake'?)"
            ),
        ),
        ("llvm -mattr=+avx3", "target -mattr: LLVM does not know the CPU feature 'avx3'"),
    ],
)
def test_an_unknown_cpu_is_our_error_not_llvms_warning(target, text):
    r = cli("run", PROGRAM, "--target", target)
    assert r.exit_code == 1
    assert r.output.startswith(f"error: {text}")
    assert "ignoring" not in r.output


# --- optional extras, file kinds ------------------------------------------------------------
def test_a_missing_extra_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # as without dask installed
    r = cli(
        "tune",
        PROGRAM,
        "--trials",
        1,
        "--work-dir",
        tmp_path / "w",
        "--runner",
        "dask",
        "--address",
        "tcp://127.0.0.1:1",
    )
    assert r.exit_code == 1
    assert r.output == (
        "error: the Dask runner needs Dask, which is not installed: "
        "pip install 'tir-mlir[distributed]' (dask[distributed])\n"
    )


def test_tvmscript_in_a_mlir_file_gets_a_hint(tmp_path):
    p = tmp_path / "mm.mlir"
    p.write_text(Path(PROGRAM).read_text())
    r = cli("parse", p)
    assert r.exit_code == 1
    assert r.output.splitlines()[0] == (
        f"{p}:1:1: error: invalid attribute name (the file holds TVMScript, not MLIR: name it "
        f".tir, or .py for Python, to parse it as TVMScript)"
    )


# --- run --check ----------------------------------------------------------------------------
def test_check_compares_a_scheduled_program_with_the_compiled_unscheduled_one():
    r = cli("run", PROGRAM, "--transform", SCRIPT, "--check")
    assert r.exit_code == 0, r.output
    assert "check: OK (matches the unscheduled program, compiled)" in r.output
    r = cli("run", PROGRAM, "--transform", SCRIPT, "--check=interp")
    assert r.exit_code == 0 and "check: OK (matches the interpreter)" in r.output
    r = cli("run", PROGRAM, "--check")
    assert r.exit_code == 0 and "check: OK (matches the interpreter)" in r.output
    r = cli("run", "--check=fast", PROGRAM)
    assert r.exit_code == 2 and "--check=fast: expected --check, or --check=interp" in r.output


def test_check_reports_a_schedule_that_changes_the_results(tmp_path):
    from tir_mlir.runtime.run_program import run_program

    mod = tir_mlir.load(PROGRAM)
    wrong = tir_mlir.parse(
        Path(PROGRAM)
        .read_text()
        .replace("T.max(Y[vi, vj], T.float32(0))", "T.max(Y[vi, vj], T.float32(1))")
    )
    assert wrong.script() != mod.script()
    with pytest.raises(tir_mlir.TIRError) as info:
        list(run_program(wrong, check=True, reference=mod))
    assert "differs from the unscheduled program, compiled" in str(info.value)
