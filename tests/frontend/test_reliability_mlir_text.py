"""Any MLIR text ends in a located error, never in a signal: op names MLIR's parser aborts on
and brackets nested deep enough to overflow its stack are refused before it runs, and a parse
in a forked child turns any other crash into an error (tir-mlir parse F.mlir, schedule
--transform S.mlir, a database's stored workload)."""

import re
import subprocess
import sys

import pytest

from tir_mlir.context import get_context
from tir_mlir.errors import TIRParseError, TraceError
from tir_mlir.frontend import mlir_guard
from tir_mlir.frontend.mlir_input import parse_mlir
from tir_mlir.meta_schedule.database.workload import Workload
from tir_mlir.schedule.mlir_script import trace_from_mlir

DEEP = "module attributes {x = " + "[" * 10000 + "]" * 10000 + "} {}"
CRASHERS = [
    ('module { "tir."() : () -> () }', "f.mlir:1:10: 'tir.' is not an op name"),
    ('module { "arith"() : () -> () }', "f.mlir:1:10: 'arith' is not an op name"),
    (
        'module { func.func @f() {\n  "func."() : () -> ()\n} }',
        "f.mlir:2:3: 'func.' is not an op name",
    ),
    ('module { "tir_schedule."() : () -> () }', "f.mlir:1:10: "),
    (DEEP, "f.mlir:1:1023: brackets nested more than 1000 deep"),
]


@pytest.mark.parametrize("text, error", CRASHERS)
def test_program_text_that_crashed_the_parser_is_a_located_error(text, error):
    with pytest.raises(TIRParseError) as e:
        parse_mlir(text, "f.mlir")
    assert str(e.value).startswith(error)


@pytest.mark.parametrize("text, error", CRASHERS)
def test_schedule_script_text_is_a_located_trace_error(text, error):
    with pytest.raises(TraceError) as e:
        trace_from_mlir(text, "f.mlir")
    assert str(e.value).startswith(error)


def test_stored_workload_text_is_an_error():
    with pytest.raises(TIRParseError, match="not an op name"):
        Workload(shash="0", mlir_text=CRASHERS[0][0]).mod


def test_a_crash_the_scan_misses_is_caught_in_the_child(monkeypatch):
    """With the scan off, the child's crash (abort, segfault) becomes the error."""
    monkeypatch.setattr(mlir_guard, "check_text", lambda text, filename: None)
    with get_context():
        for text, signal in ((CRASHERS[0][0], "SIGABRT: LLVM ERROR"), (DEEP, "SIGSEGV")):
            with pytest.raises(TIRParseError, match=f"crashes on this text .signal {signal}"):
                mlir_guard.parse_untrusted(text, "f.mlir")


def test_child_parse_does_not_hang_after_the_context_used_its_threads():
    """A context whose thread pool ran (a module of many functions verified) still parses:
    the forked child builds its own context."""
    many = "module {" + "".join(f"func.func @f{i}() {{ return }}\n" for i in range(50)) + "}"
    code = (
        "from mlir import ir; from tir_mlir.context import get_context\n"
        "from tir_mlir.frontend import mlir_guard as g\ng.CHILD_SECONDS = 20\n"
        f"with get_context():\n  ir.Module.parse({many!r}).operation.verify()\n"
        f"  print(g.parse_untrusted({many!r}, 'f.mlir') is not None)"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert p.stdout.strip() == "True", p.stderr


def test_deeply_nested_regions_are_refused():
    """4,000 nested regions (MLIR's parser overflows its stack past ~2,000) are refused by
    the scan, with their location."""
    text = "module {\n" + "scf.execute_region {\n" * 4000 + "scf.yield\n}\n" * 4000 + "}"
    with pytest.raises(TIRParseError, match="brackets nested more than 1000 deep"):
        parse_mlir(text, "f.mlir")


def test_cli_parse_reports_the_location(tmp_path):
    f = tmp_path / "f.mlir"
    f.write_text(CRASHERS[0][0] + "\n")
    p = subprocess.run(
        [sys.executable, "-m", "tir_mlir.cli", "parse", str(f)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 1 and p.stderr.startswith(f"{f}:1:10: error: 'tir.' is not"), p.stderr


def test_func_attrs_the_printer_could_not_write_back_are_refused():
    """Found by the MLIR mutator: a `tir.noalias` list was accepted, printed, and refused when
    the printed program was parsed again."""
    text = (
        'module {\n  func.func @f(%arg0: memref<4xf32> {tir.name = "A"}) attributes '
        "{tir.func_attrs = {tir.noalias = [[0, 0]]}, tir.prim_func} {\n    return\n  }\n}\n"
    )
    with pytest.raises(TIRParseError, match="f.mlir:2:3: T.func_attr: 'tir.noalias' must be"):
        parse_mlir(text, "f.mlir")


@pytest.mark.parametrize(
    "attrs, error",
    [
        ('tir.name = "A", tir.param = "None"', "parameter 0: handle name 'None' is not a Python"),
        ('tir.name = "A", tir.param = ""', "parameter 0: handle name '' is not a Python"),
        ('tir.name = "A", tir.dtype = "uint8uint8"', 'parameter 0: tir.dtype "uint8uint8" is not'),
    ],
)
def test_names_and_dtypes_the_printer_could_not_write_back_are_refused(attrs, error):
    """Found by the MLIR mutator: a handle parameter named None and an op's dtype "uint8uint8"
    were accepted, printed, and refused when the printed program was parsed again."""
    text = (
        f"module {{\n  func.func @f(%arg0: memref<4xi8> {{{attrs}}}) attributes "
        "{tir.prim_func} {\n    return\n  }\n}\n"
    )
    with pytest.raises(TIRParseError, match="f.mlir:2:3: " + re.escape(error)):
        parse_mlir(text, "f.mlir")


def test_an_op_dtype_that_is_not_a_dtype_is_refused():
    text = (
        'module {\n  func.func @f(%arg0: memref<4xi8> {tir.name = "A"}) attributes '
        '{tir.prim_func} {\n    %c = arith.constant {tir.dtype = "uint8uint8"} 1 : i8\n'
        "    memref.store %c, %arg0[%c0] : memref<4xi8>\n    return\n  }\n}\n"
    )
    text = text.replace("    memref.store", "    %c0 = arith.constant 0 : index\n    memref.store")
    with pytest.raises(
        TIRParseError, match='f.mlir:3:10: arith.constant: tir.dtype "uint8uint8" is not a dtype'
    ):
        parse_mlir(text, "f.mlir")


def test_a_call_whose_callee_is_a_keyword_is_refused():
    """Found by the MLIR mutator: a `tir.call` to "if" printed as `T.if(...)`."""
    text = (
        'module {\n  func.func @f(%arg0: memref<4xi64> {tir.name = "A"}) attributes '
        "{tir.prim_func} {\n    %c0 = arith.constant 0 : index\n"
        '    %c = "tir.call"(%c0) {callee = "if"} : (index) -> i64\n'
        "    memref.store %c, %arg0[%c0] : memref<4xi64>\n    return\n  }\n}\n"
    )
    with pytest.raises(TIRParseError, match="f.mlir:4:10: tir.call: callee 'if' is not a"):
        parse_mlir(text, "f.mlir")
