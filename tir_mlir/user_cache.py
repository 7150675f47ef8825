"""The user's cache folder for tir-mlir (compiled kernels, the parser tables):
`$TIR_MLIR_CACHE_DIR`, else `$XDG_CACHE_HOME/tir-mlir` (`~/.cache/tir-mlir`); `TIR_MLIR_CACHE=0`
turns it off."""
import atexit
import functools
import os
import shutil
import tempfile
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


@functools.lru_cache(maxsize=1)
def private_dir() -> Path:
    """A folder of this process's own, deleted at exit (used when the cache is off)."""
    path = Path(tempfile.mkdtemp(prefix="tir-mlir-"))
    atexit.register(shutil.rmtree, path, True)
    return path
