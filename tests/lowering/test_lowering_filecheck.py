"""Per-stage FileCheck tests, the way MLIR and xDSL test passes: each file under
tests/lowering/filecheck/ is a small hand-written MLIR input with `// RUN:` lines
(`[not] tir-mlir opt %s -p STAGES [2>&1] | FileCheck %s [--check-prefix=P]`) and the
`// CHECK:` lines LLVM's FileCheck matches against the output. `tir-mlir opt` runs in this
process (click's runner); `not` expects it to fail, `2>&1` checks its error output too."""

import shlex
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tir_mlir.cli import main

from filecheck import FILECHECK

FILES = sorted((Path(__file__).parent.parent / "lowering" / "filecheck").glob("*.mlir"))


def run_lines(path: Path):
    return [
        line.split("RUN:", 1)[1].strip()
        for line in path.read_text().splitlines()
        if line.startswith("// RUN:")
    ]


def _run(command: str, path: Path):
    tool, _, check = (part.strip() for part in command.partition("|"))
    args = shlex.split(tool.replace("%s", str(path)))
    expect_failure = args[0] == "not"
    args = args[1:] if expect_failure else args
    with_stderr = args[-1] == "2>&1"
    args = args[:-1] if with_stderr else args
    assert args[:2] == ["tir-mlir", "opt"], command
    result = CliRunner().invoke(main, args[1:])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert (result.exit_code != 0) == expect_failure, result.output
    output = result.output if with_stderr else result.stdout
    check_args = shlex.split(check.replace("%s", str(path)))
    assert check_args[0] == "FileCheck", command
    if not FILECHECK.exists():
        pytest.skip(f"FileCheck not found at {FILECHECK}")
    r = subprocess.run(
        [str(FILECHECK), *check_args[1:]], input=output, capture_output=True, text=True
    )
    assert r.returncode == 0, f"{command}\n{r.stderr[-4000:]}"


def test_every_main_cpu_stage_has_a_file():
    names = {p.stem for p in FILES}
    for stage in (
        "tir-to-affine",
        "unroll-loops",
        "compact-buffers",
        "vectorize-loops",
        "float-min-max",
        "vector-tanh-erf",
        "vector-log",
        "vector-exp",
        "safe-division",
        "affine-to-scf",
        "scalar-replace",
        "scf-to-llvm",
    ):
        assert stage in names and any(
            f"-p {stage}" in r for r in run_lines(FILES[sorted(names).index(stage)])
        ), stage


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_stage(path):
    commands = run_lines(path)
    assert commands, f"{path.name} has no RUN line"
    for command in commands:
        _run(command, path)
