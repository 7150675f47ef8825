"""The user's cache folder for tir-mlir (compiled kernels, the parser tables):
`$TIR_MLIR_CACHE_DIR`, else `$XDG_CACHE_HOME/tir-mlir` (`~/.cache/tir-mlir`); `TIR_MLIR_CACHE=0`
turns it off."""
import os
from pathlib import Path


def cache_dir():
    """The cache folder, or None when it is turned off or cannot be created."""
    if os.environ.get("TIR_MLIR_CACHE", "1").lower() in ("0", "off", "false", "no"):
        return None
    root = os.environ.get("TIR_MLIR_CACHE_DIR") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tir-mlir"
    try:
        Path(root).mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return Path(root)
