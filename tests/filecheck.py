"""`filecheck(text, checks)`: LLVM's FileCheck (shipped in the LLVM tools wheel) run on `text`
with the check lines `checks`; a mismatch fails the test with FileCheck's own report."""
import subprocess
import tempfile
from pathlib import Path

import mlir.ir

FILECHECK = Path(mlir.ir.__file__).resolve().parent.parent / "llvm" / "bin" / "FileCheck"


def filecheck(text: str, checks: str) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".check") as f:
        f.write(checks)
        f.flush()
        p = subprocess.run([str(FILECHECK), f.name, "--dump-input=never"], input=text,
                           capture_output=True, text=True, check=False)
    assert p.returncode == 0, f"FileCheck failed:\n{p.stderr}"
