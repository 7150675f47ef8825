"""`tir-mlir schedule` and `--transform` on lower/run."""

import json

from click.testing import CliRunner

from tir_mlir.cli import main

DATA = __file__.replace("cli/test_schedule_cli.py", "data")
PROGRAM = f"{DATA}/mlir/mm_relu.mlir"
SCRIPT = """
def schedule(sch):
    block_Y = sch.get_block("Y", func_name="mm_relu")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
"""


def _script(tmp_path, text=SCRIPT):
    p = tmp_path / "s.py"
    p.write_text(text)
    return str(p)


def test_schedule_prints_program_and_trace(tmp_path):
    trace_json = tmp_path / "t.json"
    r = CliRunner().invoke(
        main,
        [
            "schedule",
            PROGRAM,
            "--transform",
            _script(tmp_path),
            "--print-trace",
            "--trace",
            str(trace_json),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "for i, j_0, k, j_1 in T.grid(128, 32, 128, 4):" in r.output
    assert "vj = T.axis.spatial(128, j_0 * 4 + j_1)" in r.output
    assert "  sch.reorder(l4, l3, l5)" in r.output
    assert [i["name"] for i in json.loads(trace_json.read_text())["insts"]] == [
        "get_block",
        "get_loops",
        "split",
        "reorder",
    ]
    # the saved trace replays to the same program
    out = tmp_path / "o.tir"
    r2 = CliRunner().invoke(
        main, ["schedule", PROGRAM, "--transform", str(trace_json), "-o", str(out)]
    )
    assert r2.exit_code == 0, r2.output
    assert out.read_text() in r.output


def test_schedule_error_is_reported(tmp_path):
    bad = SCRIPT.replace("[None, 4]", "[None, None]")
    r = CliRunner().invoke(main, ["schedule", PROGRAM, "--transform", _script(tmp_path, bad)])
    assert r.exit_code == 1
    assert "error: split: only one factor can be None" in r.output


def test_run_with_transform_checks_against_interpreter(tmp_path):
    r = CliRunner().invoke(main, ["run", PROGRAM, "--transform", _script(tmp_path), "--check"])
    assert r.exit_code == 0, r.output
    assert "check: OK" in r.output


def test_lower_with_transform(tmp_path):
    r = CliRunner().invoke(
        main, ["lower", PROGRAM, "--transform", _script(tmp_path), "--emit", "affine"]
    )
    assert r.exit_code == 0, r.output
    assert "affine.for %arg5 = 0 to 32" in r.output or "to 32" in r.output


def test_errors_in_the_schedule_script_point_at_its_line(tmp_path):
    """An illegal primitive, an exception or a syntax error in S.py: `S.py:LINE:COL: error:`,
    exit status 1, no traceback."""
    cases = {
        "def schedule(sch):\n    b = sch.get_block('Y', func_name='mm_relu')\n"
        "    sch.vectorize(sch.get_loops(b)[2])\n": (
            ":3:5: error: ",
            "is not a data parallel block iter",
        ),
        "def schedule(sch):\n    raise ValueError('oops')\n": (":2:5: error: ", "ValueError: oops"),
        "def schedule(sch):\n    x = (\n": (":2:9: error: ", "SyntaxError: '(' was never closed"),
    }
    for text, (where, what) in cases.items():
        path = _script(tmp_path, text)
        r = CliRunner().invoke(main, ["schedule", PROGRAM, "--transform", path])
        assert r.exit_code == 1, r.output
        assert f"{path}{where}" in r.output and what in r.output
        assert "Traceback" not in r.output


ROWSUM_N = """@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 16))
    B = T.match_buffer(b, (n,))
    for i, k in T.grid(n, 16):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""
SPLIT_I = """
def schedule(sch):
    i, k = sch.get_loops(sch.get_block("B"))
    sch.split(i, factors=[None, 4])
"""


def test_symbolic_tir_text_prints_schedules_and_runs_specialized(tmp_path):
    prog = tmp_path / "rowsum.tir"
    prog.write_text(ROWSUM_N)
    r = CliRunner().invoke(main, ["parse", str(prog)])
    assert r.exit_code == 0, r.output
    assert "    n = T.int32()\n    A = T.match_buffer(a, (n, 16))\n" in r.output
    r = CliRunner().invoke(main, ["schedule", str(prog), "--transform", _script(tmp_path, SPLIT_I)])
    assert r.exit_code == 0, r.output
    assert "for i_0, i_1, k in T.grid((n + 3) // 4, 4, 16):" in r.output
    assert "T.where(i_0 * 4 + i_1 < n)" in r.output
    r = CliRunner().invoke(
        main,
        [
            "run",
            str(prog),
            "--specialize",
            "n=37",
            "--check",
            "--transform",
            _script(tmp_path, SPLIT_I),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "A[37, 16]:float32" in r.output and "check: OK" in r.output
    r = CliRunner().invoke(main, ["lower", str(prog), "--specialize", "n=8", "--emit", "affine"])
    assert r.exit_code == 0 and "memref<8x16xf32>" in r.output, r.output


def test_symbolic_program_without_values_is_a_located_error(tmp_path):
    prog = tmp_path / "rowsum.tir"
    prog.write_text(ROWSUM_N)
    r = CliRunner().invoke(main, ["run", str(prog)])  # inputs need sizes
    assert r.exit_code == 1
    assert (
        f"{prog}:2:1: error: the program has symbolic shapes or scalar parameters (n): "
        "give their values with --specialize NAME=VALUE"
    ) in r.output
    r = CliRunner().invoke(main, ["parse", "--emit", "mlir", str(prog)])  # the dialect holds n
    assert r.exit_code == 0 and "memref<?x16xf32>" in r.output and "tir.match_shape" in r.output
    r = CliRunner().invoke(main, ["lower", str(prog), "--emit", "affine"])  # one kernel
    assert r.exit_code == 0 and "memref<?x16xf32>" in r.output, r.output
    r = CliRunner().invoke(main, ["run", str(prog), "--specialize", "m=3"])
    assert r.exit_code == 2 and "main has no symbolic var or scalar parameter 'm'" in r.output
    r = CliRunner().invoke(main, ["run", str(prog), "--specialize", "n"])
    assert r.exit_code == 2 and "--specialize n: expected NAME=NUMBER" in r.output
