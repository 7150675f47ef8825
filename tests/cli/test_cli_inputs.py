"""Bad input to every subcommand and option: `FILE:LINE:COL: error: ...` (with the source line
and a caret), exit status 1 (2 for a usage error), never a traceback; and the everyday
conveniences (stdin, --version, -h, .mlir input, .npy in and out, --print-ir-after-all)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from tir_mlir.cli import main

ROOT = Path(__file__).parent.parent.parent
PROGRAM = str(ROOT / "examples" / "mm_relu.tir")
MLIR = str(ROOT / "tests" / "data" / "mlir" / "mm_relu.mlir")
EXE = str(Path(sys.executable).with_name("tir-mlir"))
SMALL = """# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
"""


def cli(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


def _file(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return str(p)


BAD_INPUTS = {
    "not_utf8.tir": (b"# \xff\xfe\n", "1:3: error: the file is not valid UTF-8 (byte 0xff)"),
    "empty.tir": ("", "1:1: error: the program defines no @T.prim_func"),
    "comment.tir": ("# nothing here\n", "1:1: error: the program defines no @T.prim_func"),
    "digits.tir": (SMALL.replace("T.float32(2)", "9" * 5000), "8:29: error: number literal"),
    "leading_zero.tir": (SMALL.replace("T.float32(2)", "09"), "8:29: error: invalid number"),
    "float_range.tir": (
        SMALL.replace("T.float32(2)", "T.float32(1e39)"),
        "error: literal 1e+39 does not fit in float32",
    ),
    "div_zero.tir": (SMALL.replace("A[vi]", "A[vi // 0]"), "8:23: error: division by zero"),
    "tabs.tir": (SMALL.replace("        with", "\twith"), "6:1: error: inconsistent use of tabs"),
    "bad.mlir": (
        "module {\n func.func @f() {\n  %0 = arith.addi 1\n }\n}\n",
        "bad.mlir:3:18: error: expected SSA operand",
    ),
    "llvm_op.mlir": (
        "module {\n func.func @f(%a: memref<4xf32>) {\n"
        "  %0 = llvm.mlir.constant(1 : i32) : i32\n  return\n }\n}\n",
        "3:8: error: 'llvm.mlir.constant' is not an op of a tir program",
    ),
    "zero.mlir": (
        "module {\n func.func @f(%a: memref<0xf32>) {\n  return\n }\n}\n",
        "2:2: error: parameter 0: buffer has a zero-sized dimension",
    ),
    "bad_name.mlir": (
        'module {\n func.func @f(%a: memref<4xf32> {tir.name = "a b"}) {\n  return\n }\n}\n',
        "2:2: error: parameter 0: name 'a b' is not a Python identifier",
    ),
    "arity.mlir": (
        'module {\n func.func @f(%a: memref<4xf32> {tir.name = "A"}) '
        "attributes {tir.prim_func} {\n  affine.for %i = 0 to 4 {\n"
        '   "tir.block"(%i) ({\n   ^bb0(%vi: index):\n'
        "    %c = arith.constant 1.0 : f32\n    memref.store %c, %a[%vi] : "
        "memref<4xf32>\n    gpu.yield\n   }, {\n   }) {bindings = affine_map<(d0, d1)"
        ' -> (d0)>, domains = [[0, 4]], iter_names = ["vi"], iter_types = ["S"], '
        'name = "B"} : (index) -> ()\n  }\n  return\n }\n}\n',
        "4:4: error: block 'B': bindings (d0, d1) -> (d0) must map its 1 operands to 1 iterators",
    ),
    "loop_kind.mlir": (
        "module {\n func.func @f(%a: memref<4xf32>) attributes {tir.prim_func} "
        '{\n  affine.for %i = 0 to 4 {\n  } {tir.kind = "seri>al"}\n  return\n'
        " }\n}\n",
        '3:3: error: loop: tir.kind must be a #tir.for_kind<...>, got "seri>al"',
    ),
    "index_buffer.mlir": (
        "module {\n func.func @f(%a: memref<4xindex>) {\n  return\n }\n}\n",
        "error: parameter 0: element type index is not a TensorIR dtype",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
@pytest.mark.parametrize(
    "command", [["parse"], ["parse", "--emit", "mlir"], ["lower", "--emit", "affine"], ["run"]]
)
def test_bad_input_every_subcommand(tmp_path, name, command):
    data, want = BAD_INPUTS[name]
    path = _file(tmp_path, name, data)
    r = cli(*command, path)
    assert r.exit_code == 1, r.output
    assert want in r.output
    assert "Traceback" not in r.output


def test_error_shows_source_line_and_caret_plain_when_piped(tmp_path):
    path = _file(tmp_path, "dz.tir", SMALL.replace("A[vi]", "A[vi // 0]"))
    r = subprocess.run([EXE, "parse", path], capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.split("\n")[:3] == [
        f"{path}:8:23: error: division by zero",
        "            B[vi] = A[vi // 0] * T.float32(2)",
        "                      ^",
    ]
    assert "\033[" not in r.stderr


def test_error_is_coloured_on_a_terminal_unless_no_color():
    from tir_mlir.diagnostics import render
    from tir_mlir.errors import SourceLoc

    sources = {"x.tir": "abc\n"}
    coloured = render("bad", SourceLoc("x.tir", 1, 2), sources, color=True)
    assert "\033[1;31merror: " in coloured and coloured.endswith("\033[1;32m^\033[0m")
    assert render("bad", SourceLoc("x.tir", 1, 2), sources) == "x.tir:1:2: error: bad\nabc\n ^"


def test_stdin_tvmscript_and_mlir():
    r = cli("parse", "-", input=SMALL)
    assert r.exit_code == 0 and "B[vi] = A[vi] * T.float32(2.0)" in r.output
    mlir = cli("parse", "--emit", "mlir", "-", input=SMALL).output
    r = cli("run", "-", "--check", input=mlir)
    assert r.exit_code == 0 and "check: OK" in r.output
    r = cli("parse", "-", input="@T.prim_func\ndef f(:\n")
    assert r.exit_code == 1 and r.output.startswith("<stdin>:2:7: error:")


def test_parse_reads_mlir_files():
    r = cli("parse", MLIR)
    assert r.exit_code == 0 and "def mm_relu(" in r.output


def test_version_and_short_help():
    r = cli("--version")
    assert r.exit_code == 0 and r.output.startswith("tir-mlir, version ")
    assert cli("-h").exit_code == 0 and "Usage:" in cli("run", "-h").output


def test_emit_tir_means_tvmscript_everywhere():
    assert cli("lower", PROGRAM, "--emit", "tir").output == cli("parse", PROGRAM).output
    assert (
        cli("lower", PROGRAM, "--emit", "mlir").output
        == cli("parse", PROGRAM, "--emit", "mlir").output
    )


def test_bounds_check_and_its_alias(tmp_path):
    oob = _file(tmp_path, "oob.tir", SMALL.replace("B[vi] = A[vi]", "B[vi] = A[vi + 1]"))
    for flag in ("--bounds-check", "--debug"):
        r = cli("run", oob, flag)
        assert r.exit_code == 1, r.output
        assert "oob.tir:8:21: error: out-of-bounds load of buffer 'A': index 8" in r.output


def test_print_ir_after_all_and_gpu_hint():
    r = subprocess.run(
        [EXE, "lower", PROGRAM, "--emit", "scf", "--print-ir-after-all"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0
    dumps = [line for line in r.stderr.split("\n") if line.startswith("// -----// IR Dump")]
    assert dumps[:3] == [
        "// -----// IR Dump After static-bounds //----- //",
        "// -----// IR Dump After indirect-mark //----- //",
        "// -----// IR Dump After alloc-limit //----- //",
    ]
    r = subprocess.run(
        [EXE, "lower", PROGRAM, "--emit", "affine", "--print-ir-after-all", "--bounds-check"],
        capture_output=True,
        text=True,
    )
    # a step over a second also writes a "tir-mlir: ...: done in" note (a loaded machine)
    dump = "\n".join(ln for ln in r.stderr.split("\n") if not ln.startswith("tir-mlir: "))
    assert r.returncode == 0 and dump.startswith("// -----// IR Dump After bounds-check")
    assert "// -----// IR Dump After tir-to-affine (--emit affine) //----- //" in dumps
    assert dumps[-1].startswith("// -----// IR Dump After prefetch-strided (--emit scf)")
    r = cli("lower", PROGRAM, "--emit", "ptx")
    assert r.exit_code == 2 and "add --target cuda" in r.output


def test_run_npy_inputs_and_outputs(tmp_path):
    a = np.arange(8, dtype=np.float32)
    np.save(tmp_path / "a.npy", a)
    path = _file(tmp_path, "p.tir", SMALL)
    r = cli(
        "run",
        path,
        "-i",
        f"A={tmp_path / 'a.npy'}",
        "-O",
        f"B={tmp_path / 'b.npy'}",
        "--check",
        "--bench",
        "--number",
        "1",
        "--repeat",
        "2",
        "--target",
        "llvm",
    )
    assert r.exit_code == 0, r.output
    np.testing.assert_array_equal(np.load(tmp_path / "b.npy"), a * 2)
    np.save(tmp_path / "wrong.npy", np.zeros(3, np.float64))
    for opt, match in (
        (f"Q={tmp_path / 'a.npy'}", "--input Q: no buffer of that name"),
        (f"A={tmp_path / 'wrong.npy'}", "expected shape [8] float32"),
        (f"A={path}", "cannot read a .npy array"),
        ("A", "expected NAME=FILE"),
    ):
        r = cli("run", path, "-i", opt)
        assert r.exit_code in (1, 2) and match in r.output, r.output


def test_output_into_missing_directory_and_bad_transform(tmp_path):
    r = cli("parse", PROGRAM, "-o", str(tmp_path / "no" / "x.tir"))
    assert r.exit_code == 1 and "directory" in r.output and "does not exist" in r.output
    r = cli("schedule", PROGRAM, "--transform", PROGRAM)
    assert r.exit_code == 2 and "expected a schedule script (.py" in r.output
    r = cli("schedule", PROGRAM, "--transform", str(tmp_path / "missing.py"))
    assert r.exit_code == 2


@pytest.mark.parametrize(
    "trace, match",
    [
        ("not json", "not valid JSON"),
        ('[["GetBlock", [], ["C", "main"]]]', "a trace is a JSON object"),  # TVM's JSON format
        ('{"insts": [{"name": "__init__", "args": {}}]}', "unknown schedule primitive '__init__'"),
        (
            '{"insts": [{"name": "split", "args": {"loop": {"rv": "l9"}, "factors": [2, null]}}]}',
            "trace uses l9 before it is defined",
        ),
    ],
)
def test_bad_trace_json(tmp_path, trace, match):
    path = _file(tmp_path, "t.json", trace)
    r = cli("schedule", PROGRAM, "--transform", path)
    assert r.exit_code == 1
    assert f"{path}:1:1: error: " in r.output and match in r.output
    assert "Traceback" not in r.output


def test_trace_option_writes_a_replayable_trace(tmp_path):
    script = _file(
        tmp_path,
        "s.py",
        "def schedule(sch):\n    b = sch.get_block('Y')\n"
        "    sch.split(sch.get_loops(b)[1], factors=[None, 4])\n",
    )
    out = tmp_path / "t.json"
    r = cli("schedule", PROGRAM, "--transform", script, "--trace", str(out))
    assert r.exit_code == 0
    assert json.loads(out.read_text())["insts"][2]["name"] == "split"
    assert cli("schedule", PROGRAM, "--transform", str(out)).output == r.output


def test_slow_command_says_so_on_stderr(tmp_path, monkeypatch):
    import tir_mlir.cli as cli_module
    import time

    lines = []
    monkeypatch.setattr(
        cli_module.click, "echo", lambda m="", err=False, **k: lines.append((m, err))
    )
    with cli_module._progress("testing"):
        time.sleep(1.3)
    assert ("tir-mlir: testing...", True) in lines
    assert any(m.startswith("tir-mlir: testing: done in") for m, _ in lines)
    lines.clear()
    with cli_module._progress("quick"):
        pass
    assert lines == []


@pytest.mark.parametrize(
    "args, want",
    [
        (
            ["tune", PROGRAM, "--trials", "-5", "--work-dir", "W"],
            "'--trials': -5 is not in the range",
        ),
        (
            ["tune", PROGRAM, "--trials", "0", "--work-dir", "W"],
            "'--trials': 0 is not in the range",
        ),
        (
            ["tune", PROGRAM, "--timeout", "0", "--work-dir", "W"],
            "'--timeout': 0.0 is not in the range",
        ),
        (["tune", PROGRAM, "--trials-per-iter", "0", "--work-dir", "W"], "'--trials-per-iter'"),
        (["run", PROGRAM, "--bench", "--number", "0"], "'--number': 0 is not in the range"),
        (["run", PROGRAM, "--bench", "--repeat", "-1"], "'--repeat': -1 is not in the range"),
    ],
)
def test_bad_option_values_are_usage_errors(tmp_path, args, want):
    r = cli(*[str(tmp_path / a) if a == "W" else a for a in args])
    assert r.exit_code == 2 and want in r.output, r.output
    assert not (tmp_path / "W").exists()


def test_running_a_module_without_functions(tmp_path):
    path = _file(tmp_path, "empty.tir", "@I.ir_module\nclass M:\n    pass\n")
    r = cli("run", path)
    assert r.exit_code == 1
    assert f"{path}:1:1: error: the program has no function to run" in r.output
