"""`tir-mlir parse F.tir --emit mlir` is plain MLIR: upstream mlir-opt reads it with the IRDL file."""

import subprocess
from pathlib import Path

import mlir
import pytest
from click.testing import CliRunner

from tir_mlir.cli import main

ROOT = Path(__file__).parent.parent.parent
MLIR_OPT = next(
    (
        Path(p) / "bin" / "mlir-opt"
        for p in mlir.__path__
        if (Path(p) / "bin" / "mlir-opt").exists()
    ),
    Path("mlir-opt-not-found"),
)
PROGRAMS = sorted((ROOT / "tests" / "data").glob("*.tir")) + [
    ROOT / "tests" / "data" / "frontend" / "constructs.tir"
]


@pytest.mark.skipif(not MLIR_OPT.exists(), reason="mlir-opt is not installed")
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.name)
def test_mlir_opt_accepts_parsed_program(path, tmp_path):
    out = tmp_path / "prog.mlir"
    # the CLI in this process: a `tir-mlir` child per program would only repeat its start-up
    r = CliRunner().invoke(main, ["parse", str(path), "--emit", "mlir", "-o", str(out)])
    assert r.exit_code == 0, r.output
    r = subprocess.run(
        [str(MLIR_OPT), f"--irdl-file={ROOT / 'dialect' / 'tir.irdl.mlir'}", str(out)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert '"tir.block"' in r.stdout or "tir.block" in r.stdout
    assert r.stdout.count("func.func") == out.read_text().count("func.func")
