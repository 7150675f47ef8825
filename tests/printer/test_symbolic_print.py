"""Symbolic programs (tests/data/symbolic/*.tir, shared with the build and schedule tests)
parse to tir-dialect IR, print as TVM 0.21 prints them (goldens under tests/golden/symbolic,
recorded from TVM's printer), print-parse-print is a fixed point, and `--emit mlir` is MLIR that
mlir-opt reads with the dialect's IRDL file. With TVM installed, TVM's own print of the
program equals the golden and TVM re-parses our text to a structurally equal function."""

import subprocess
import sys
from pathlib import Path

import mlir
import pytest

from tir_mlir.frontend.mlir_input import parse_mlir
from tir_mlir.frontend.parser import build, parse_ast
from tir_mlir.printer import script

ROOT = Path(__file__).parent.parent.parent
PROGRAMS = sorted((ROOT / "tests" / "data" / "symbolic").glob("*.tir"))
GOLDEN = ROOT / "tests" / "golden" / "symbolic"
MLIR_OPT = next(
    Path(p) / "bin" / "mlir-opt" for p in mlir.__path__ if (Path(p) / "bin" / "mlir-opt").exists()
)
TIR = Path(sys.executable).with_name("tir-mlir")


def _parse(text, name="<string>"):
    return build(parse_ast(text, name), name)


def test_the_workload_has_twenty_programs():
    assert len(PROGRAMS) >= 20


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_prints_tvms_text(path, request):
    text = script(_parse(path.read_text(), str(path))) + "\n"
    golden = GOLDEN / path.name
    if request.config.getoption("--update-golden"):
        golden.write_text(text)
    assert text == golden.read_text()
    assert script(_parse(text)) + "\n" == text


@pytest.mark.tvm
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_tvm_prints_the_golden_and_reparses_ours(path):
    import tvm

    theirs = tvm.script.from_source(path.read_text())
    assert theirs.script() + "\n" == (GOLDEN / path.name).read_text()
    ours = script(_parse(path.read_text(), str(path)))
    tvm.ir.assert_structural_equal(tvm.script.from_source(ours), theirs)


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_emitted_mlir_verifies_with_mlir_opt(path, tmp_path):
    out = tmp_path / "prog.mlir"
    out.write_text(_parse(path.read_text(), str(path)).mlir())
    r = subprocess.run(
        [str(MLIR_OPT), f"--irdl-file={ROOT / 'dialect' / 'tir.irdl.mlir'}", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert "tir.match_shape" in r.stdout


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_the_mlir_holds_the_whole_program(path):
    """Printed back from its `--emit mlir` text alone, the program prints the same."""
    mod = _parse(path.read_text(), str(path))
    assert parse_mlir(mod.mlir(), "prog.mlir").script() == script(mod)


def test_symbolic_ir_shape():
    mod = _parse((ROOT / "tests" / "data" / "symbolic" / "extent_product.tir").read_text())
    text = mod.mlir()
    assert '%arg1: index {tir.dtype = "int32", tir.implicit, tir.name = "n"}' in text
    assert "arith.muli %arg1, %arg2 : index" in text  # n * m + 1: a top-level symbol
    assert "memref.alloc(" in text and "memref<?xf32>" in text
