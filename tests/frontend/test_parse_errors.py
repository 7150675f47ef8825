"""Bad TVMScript: one TIRParseError with FILE:LINE:COL and a message saying what was wrong."""

import subprocess
import sys
from pathlib import Path

import pytest

import tir_mlir
from tir_mlir import TIRParseError

HDR = '@T.prim_func\ndef f(A: T.Buffer((8, 8), "float32")):\n'
LOOPS = HDR + '    for i, j in T.grid(8, 8):\n        with T.block("B"):\n'

CASES = {
    "syntax_missing_colon": (
        HDR + "    for i in range(8)\n        A[i, 0] = 1.0\n",
        "3:22",
        "unexpected end of line; expected ':'",
    ),
    "syntax_unexpected_eof": (
        HDR + "    A[0, 0] = (1.0 +\n",
        "3:21",
        "unexpected end of file; expected one of '('",
    ),
    "syntax_bad_character": (HDR + "    A[0, 0] = 1.0 $ 2\n", "3:19", "unexpected character '$'"),
    "syntax_unmatched_paren": (HDR + "    A[0, 0] = 1.0)\n", "3:18", "unexpected ')'"),
    "unknown_function": (
        HDR + "    A[0, 0] = T.expp(1.0)\n",
        "3:15",
        "unknown function 'T.expp' (did you mean T.exp?)",
    ),
    "statement_intrinsic_in_expression": (
        HDR + "    A[0, 0] = T.grid(2)\n",
        "3:15",
        "T.grid cannot be used inside an expression",
    ),
    "undefined_buffer": (HDR + "    A[0, 0] = B[0, 0]\n", "3:15", "undefined variable 'B'"),
    "undefined_variable": (
        HDR + "    for i in range(8):\n        A[i, j] = 1.0\n",
        "4:14",
        "undefined variable 'j'",
    ),
    "undefined_buffer_in_reads": (
        LOOPS + '            vi, vj = T.axis.remap("SS", [i, j])\n'
        "            T.reads(Q[vi, vj])\n            A[vi, vj] = 1.0\n",
        "6:21",
        "undefined buffer 'Q' in T.reads",
    ),
    "wrong_index_count": (
        HDR + "    A[0] = 1.0\n",
        "3:5",
        "buffer 'A' has 2 dimensions but is indexed with 1 index",
    ),
    "wrong_index_count_load": (
        HDR + "    A[0, 0] = A[0, 0, 0]\n",
        "3:15",
        "buffer 'A' has 2 dimensions but is indexed with 3",
    ),
    "remap_length": (
        LOOPS + '            vi, vj = T.axis.remap("S", [i, j])\n            A[vi, vj] = 1.0\n',
        "5:35",
        "T.axis.remap kinds 'S' has 1 letter but there are 2 variables",
    ),
    "remap_letter": (
        LOOPS + '            vi, vj = T.axis.remap("SX", [i, j])\n            A[vi, vj] = 1.0\n',
        "5:35",
        "T.axis.remap kind 'X' is not S (spatial) or R (reduce)",
    ),
    "unknown_dtype": (
        '@T.prim_func\ndef f(A: T.Buffer((8, 8), "float33")):\n    pass\n',
        "2:27",
        "unknown dtype 'float33' (did you mean 'float32'?)",
    ),
    "unknown_dtype_alloc": (
        HDR + '    B = T.alloc_buffer((4,), dtype="int7")\n',
        "3:36",
        "unknown dtype 'int7'",
    ),
    "block_without_name": (
        HDR + "    with T.block():\n        A[0, 0] = 1.0\n",
        "3:10",
        "T.block needs a name",
    ),
    "duplicate_block_name": (
        HDR + '    with T.block("B"):\n        A[0, 0] = 1.0\n'
        '    with T.block("B"):\n        A[0, 1] = 1.0\n',
        "5:10",
        "duplicate block name 'B'",
    ),
    "reads_twice": (
        LOOPS + '            vi, vj = T.axis.remap("SS", [i, j])\n'
        "            T.reads(A[vi, vj])\n            T.reads(A[vi, vj])\n"
        "            A[vi, vj] = 1.0\n",
        "7:13",
        "T.reads given twice",
    ),
    "block_attr_twice": (
        LOOPS + '            vi, vj = T.axis.remap("SS", [i, j])\n'
        '            T.block_attr({"a": 1})\n            T.block_attr({"b": 1})\n'
        "            A[vi, vj] = 1.0\n",
        "7:13",
        "T.block_attr given twice",
    ),
    "iter_var_used_before_definition": (
        LOOPS + "            T.reads(A[vi, vj])\n"
        '            vi, vj = T.axis.remap("SS", [i, j])\n'
        "            A[vi, vj] = 1.0\n",
        "5:23",
        "undefined variable 'vi' (it is defined later in the block)",
    ),
    "buffer_allocated_twice": (
        HDR + '    X = T.alloc_buffer((8,), "float32")\n    X = T.alloc_buffer((4,), "float32")\n',
        "4:5",
        "buffer 'X' is already defined",
    ),
    "region_literal_out_of_range": (
        LOOPS + '            vi, vj = T.axis.remap("SS", [i, j])\n'
        "            T.reads(A[vi, vj - 2**63])\n"
        "            A[vi, vj] = 1.0\n",
        "6:32",
        "literal 9223372036854775808 does not fit in int64",
    ),
    "null_byte": (
        HDR + "    # a comment with \0 in it\n    A[0, 0] = 1.0\n",
        "3:22",
        "source code cannot contain null bytes",
    ),
    "deep_nesting": (
        HDR
        + "".join("    " * (i + 1) + "if True:\n" for i in range(200))
        + "    " * 201
        + "A[0, 0] = 1.0\n",
        "103:405",
        "statements nested too deeply (more than 100 levels)",
    ),
    "bad_dedent": (
        HDR + "    for i in range(8):\n        A[i, 0] = 1.0\n      A[0, 0] = 2.0\n",
        "5:7",
        "bad indentation: dedent to column 7 does not match any enclosing block",
    ),
    "unexpected_indent": (
        HDR + "    A[0, 0] = 1.0\n        A[0, 1] = 2.0\n",
        "4:9",
        "unexpected indent",
    ),
    "missing_indented_block": (
        HDR + "    for i in range(8):\n",
        "3:23",
        "unexpected end of file; expected an indented block",
    ),
    "non_affine_where": (
        LOOPS + '            vi, vj = T.axis.remap("SS", [i, j])\n'
        "            T.where(i * j < 4 or i > 2)\n            A[vi, vj] = 1.0\n",
        "6:21",
        "T.where condition must be affine: 'or' in a condition must read 'i < min + 1 or k <= e'",
    ),
    "non_affine_binding": (
        LOOPS + "            vi = T.axis.spatial(64, i * 0.5)\n            A[vi // 8, 0] = 1.0\n",
        "5:41",
        "binding of 'vi' must be affine",
    ),
    "store_type_mismatch": (
        HDR + '    B = T.alloc_buffer((2,), "int32")\n    A[0, 0] = B[0]\n',
        "4:5",
        "cannot store a int32 value into buffer 'A' of float32",
    ),
    "float_index": (HDR + "    A[0, 0.5] = 1.0\n", "3:5", "an index must be an integer"),
    "literal_out_of_range": (
        HDR + '    A[0, 0] = T.Cast("float32", T.int8(300))\n',
        "3:33",
        "literal 300 does not fit in int8",
    ),
    "handle_never_matched": (
        "@T.prim_func\ndef f(a: T.handle):\n    pass\n",
        "2:7",
        "handle parameter 'a' is never bound by T.match_buffer",
    ),
    "missing_decorator": (
        'def f(A: T.Buffer((8,), "float32")):\n    pass\n',
        "1:1",
        "f needs the decorator @T.prim_func",
    ),
    "axis_outside_block": (
        HDR + "    for i in range(8):\n        vi = T.axis.spatial(8, i)\n",
        "4:9",
        "T.axis.spatial must be directly inside a T.block",
    ),
    "expression_without_effect": (
        HDR + "    A[0, 0] + 1.0\n",
        "3:5",
        "this expression has no effect",
    ),
    "bool_condition": (
        HDR + "    if A[0, 0]:\n        A[0, 0] = 1.0\n",
        "3:8",
        "an if condition must be bool, found a float32 value",
    ),
    "division_by_zero": (HDR + "    A[0, 0] = T.float32(1 // 0)\n", "3:25", "division by zero"),
    "if_then_else_arity": (
        HDR + "    A[0, 0] = T.if_then_else(True, 1.0)\n",
        "3:15",
        "T.if_then_else takes 3 arguments, got 2",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_error_message_and_location(name):
    src, where, message = CASES[name]
    with pytest.raises(TIRParseError) as info:
        tir_mlir.parse(src, filename="bad.tir")
    e = info.value
    assert f"{e.loc.line}:{e.loc.col}" == where, str(e)
    assert e.loc.file == "bad.tir"
    assert message in e.message, e.message


def test_default_filename_is_string():
    with pytest.raises(TIRParseError) as info:
        tir_mlir.parse(HDR + "    A[0, 0] = T.expp(1.0)\n")
    assert str(info.value).startswith("<string>:3:15: unknown function")


def test_cli_reports_one_error_line_without_traceback(tmp_path):
    bad = tmp_path / "bad.tir"
    bad.write_text(CASES["remap_letter"][0])
    exe = Path(sys.executable).with_name("tir-mlir")
    r = subprocess.run(
        [str(exe), "parse", str(bad), "--emit", "mlir"], capture_output=True, text=True
    )
    assert r.returncode == 1
    assert r.stderr.rstrip("\n").split("\n") == [
        f"{bad}:5:35: error: T.axis.remap kind 'X' is not S (spatial) or R (reduce)",
        '            vi, vj = T.axis.remap("SX", [i, j])',
        "                                  ^",
    ]  # mlir-opt's source line and caret
    assert "Traceback" not in r.stderr


NOTES = {
    "index_rank": (HDR + "    A[0] = 1.0\n", "3:5", "2:7"),
    "store_dtype": (
        HDR + '    X = T.alloc_buffer((4,), "int32")\n    X[0] = A[0, 0]\n',
        "4:5",
        "3:5",
    ),
    "region_rank": (
        LOOPS + '            vi, vj = T.axis.remap("SS", [i, j])\n'
        "            T.reads(A[vi])\n            A[vi, vj] = 1.0\n",
        "6:21",
        "2:7",
    ),
    "match_buffer": (
        '@T.prim_func\ndef f(a: T.handle):\n    A = T.match_buffer(a, (8,), "float32")\n'
        "    A[0, 1] = 1.0\n",
        "4:5",
        "3:5",
    ),
}


@pytest.mark.parametrize("name", sorted(NOTES))
def test_errors_about_a_buffer_point_at_its_declaration(name):
    src, where, declared = NOTES[name]
    with pytest.raises(TIRParseError) as info:
        tir_mlir.parse(src, filename="bad.tir")
    e = info.value
    assert f"{e.loc.line}:{e.loc.col}" == where, str(e)
    assert [(m, str(loc)) for m, loc in e.notes] == [
        (
            "buffer 'A' declared here" if "A" in e.message else "buffer 'X' declared here",
            f"bad.tir:{declared}",
        )
    ]
    assert str(e).endswith(f"\nbad.tir:{declared}: note: {e.notes[0][0]}")


def test_cli_shows_the_related_location_like_mlir_opt(tmp_path):
    bad = tmp_path / "bad.tir"
    bad.write_text(CASES["duplicate_block_name"][0])
    exe = Path(sys.executable).with_name("tir-mlir")
    r = subprocess.run([str(exe), "parse", str(bad)], capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.rstrip("\n").split("\n") == [
        f"{bad}:5:10: error: duplicate block name 'B'",
        '    with T.block("B"):',
        "         ^",
        f"{bad}:3:10: note: first defined here",
        '    with T.block("B"):',
        "         ^",
    ]
