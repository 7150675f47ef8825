"""The files of an exported library, written and read so that no damaged or mismatched file
reaches the loader or the compiled code.

`f.so` is the code; `f.so.json` the signatures plus the SHA-256 of `f.so`. The signatures are
also compiled into `f.so` (symbol `tir_mlir_signature`), so the code carries its own:
  * writing is atomic (a temporary file in the same directory, then `os.replace`), so
    concurrent exports to one path leave one writer's complete files, never a mixture;
  * loading checks the JSON's form, then the hash before `dlopen` (a truncated or corrupt
    `.so`, or one from another export, is refused instead of crashing the process), and after
    `dlopen` that the embedded signatures equal the JSON's;
  * the library is loaded from a private copy with a unique name, because `dlopen` returns
    the already-loaded library for a path it has seen, however the file changed since.
"""

import hashlib
import json
import mmap
import os
import tempfile
from typing import NoReturn
from pathlib import Path

from tir_mlir.dtypes import DTYPES
from tir_mlir.errors import RuntimeCallError

SYMBOL = "tir_mlir_signature"
FORMAT = 1
MAX_META_BYTES = 1 << 20
MAX_LIBRARY_BYTES = 1 << 30  # far above any exported kernel library


def signature_global(meta_text: str) -> str:
    """LLVM IR of a global holding `meta_text` (appended to the module before compiling)."""
    data = meta_text.encode() + b"\0"
    body = "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}" for b in data)
    return f'\n@{SYMBOL} = constant [{len(data)} x i8] c"{body}"\n'


def signatures_text(functions: dict) -> str:
    """The canonical text of {function: [param json]} (what is embedded and compared)."""
    return json.dumps(functions, sort_keys=True, separators=(",", ":"))


def _umask() -> int:
    """The process's umask, read without changing it (setting it to read it back would
    race with threads creating files), where Linux tells it."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _atomic_write(path: Path, data: bytes, mode: int = 0o666):
    """Write `path` whole or not at all, with the permissions a plain `open` (`mode` 0o666)
    or a linker (0o777) gives under the umask: a temporary file is private (0600) until it
    is renamed over `path`."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            os.fchmod(f.fileno(), mode & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def publish(built_so: Path, path: Path, functions: dict, extra=None):
    """Install the shared object `built_so` at `path` with its `.json`, each atomically;
    `extra` adds entries to the JSON (a CUDA library's target, PTX, device memory needs)."""
    data = built_so.read_bytes()
    meta = {
        "format": FORMAT,
        "sha256": hashlib.sha256(data).hexdigest(),
        "functions": functions,
        **(extra or {}),
    }
    _atomic_write(path, data, 0o777)
    _atomic_write(Path(str(path) + ".json"), json.dumps(meta, indent=1).encode())


def read_meta(path: Path) -> tuple:
    """(functions, private copy of the .so to dlopen) after checking the files; the caller
    deletes the copy once it is loaded."""
    meta_path = Path(str(path) + ".json")
    if not path.is_file() or not meta_path.is_file():
        raise RuntimeCallError(f"{path}: no such library (or its .json signature file)")
    try:
        raw = meta_path.read_bytes()
        if len(raw) > MAX_META_BYTES:
            raise ValueError("too large")
        meta = json.loads(raw)
    except (ValueError, RecursionError, OSError) as e:
        raise RuntimeCallError(
            f"{meta_path}: not a signature file written by export_library ({e})"
        ) from None
    functions = _check_meta(meta, meta_path)
    size = path.stat().st_size
    if size > MAX_LIBRARY_BYTES:
        raise RuntimeCallError(
            f"{path}: {size} bytes, larger than any library export_library "
            f"writes ({MAX_LIBRARY_BYTES}); refused"
        )
    fd, copy = tempfile.mkstemp(prefix="tir_mlir_lib_", suffix=".so")
    try:
        with os.fdopen(fd, "wb") as out, open(path, "rb") as f:
            digest = hashlib.sha256()  # hashed as copied: memory stays bounded
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != meta["sha256"]:
            raise RuntimeCallError(
                f"{path}: the library does not match {meta_path.name} "
                f"(changed, truncated or written by another export); "
                f"export it again"
            )
        if not _holds(copy, signatures_text(functions).encode() + b"\0"):
            raise RuntimeCallError(
                f"{path}: the signatures in {meta_path.name} differ from "
                f"the ones compiled into the library (or it is not a "
                f"library written by export_library); not loaded"
            )
    except OSError as e:
        os.unlink(copy)
        raise RuntimeCallError(f"{path}: cannot read the library ({e})") from None
    except BaseException:
        os.unlink(copy)
        raise
    return functions, copy


def _holds(path: str, data: bytes) -> bool:
    """Whether the file contains `data` (the embedded signatures, looked for before dlopen
    runs any of the library's code)."""
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return False
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            return m.find(data) >= 0


def _check_meta(meta, where) -> dict:
    def bad(why) -> NoReturn:
        raise RuntimeCallError(f"{where}: malformed signature file: {why}")

    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        bad(f"expected format {FORMAT} (re-export libraries written by older versions)")
    if not isinstance(meta.get("sha256"), str):
        bad("no sha256 of the library")
    funcs = meta.get("functions")
    if not isinstance(funcs, dict) or not funcs:
        bad("no functions")
    for name, params in funcs.items():
        if not name.isidentifier() or not isinstance(params, list):
            bad(f"function {name!r}")
        for p in params:
            if (
                not isinstance(p, dict)
                or not {"name", "shape", "dtype"} <= set(p)
                or not set(p) <= {"name", "shape", "dtype", "kind", "source"}
                or not isinstance(p["name"], str)
                or p["dtype"] not in DTYPES
                or not isinstance(p["shape"], list)
                or not all(_size(d, top=True) for d in p["shape"])
            ):
                bad(f"parameter {p!r} of {name!r}")
    return funcs


def _size(d, top=False) -> bool:
    """A dimension of a signature: a positive int, a size expression over parameter names
    (analysis/size_exprs.py: an int inside one may be any), or null (unchecked)."""
    if d is None or isinstance(d, str):
        return True
    if isinstance(d, list):
        return len(d) == 3 and isinstance(d[0], str) and _size(d[1]) and _size(d[2])
    return type(d) is int and (d > 0 or not top)
