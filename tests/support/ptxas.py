"""The CUDA assembler the GPU tests check PTX with (no GPU needed), or None."""

import shutil
from pathlib import Path

PTXAS = shutil.which("ptxas") or (
    "/usr/local/bin/ptxas" if Path("/usr/local/bin/ptxas").exists() else None
)
