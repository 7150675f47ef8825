"""The user's cache folder for tir-mlir (compiled kernels, the parser tables):
`$TIR_MLIR_CACHE_DIR`, else `$XDG_CACHE_HOME/tir-mlir` (`~/.cache/tir-mlir`); `TIR_MLIR_CACHE=0`
turns it off.

What is in it is loaded (shared objects are dlopen'ed), so it must be the user's alone: it is
created private (0700), and a folder that another user owns or that its group or others may
write is refused (the cache is then off, with a warning). A shared object is stored with the
SHA-256 of its bytes beside it (`<name>.sha256`) and loaded only when they still match: a
truncated or damaged entry is built again instead of crashing the process that loads it."""

import atexit
import functools
import hashlib
import json
import os
import shutil
import stat
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable, Optional


def cache_dir() -> Optional[Path]:
    """The cache folder, or None when it is turned off, cannot be created or is not private."""
    if os.environ.get("TIR_MLIR_CACHE", "1").lower() in ("0", "off", "false", "no"):
        return None
    root = (
        os.environ.get("TIR_MLIR_CACHE_DIR")
        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tir-mlir"
    )
    try:
        Path(root).mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(root)
    except OSError:
        return None
    why = unsafe_reason(st)
    if why:
        _warn_once(str(root), why)
        return None
    return Path(root)


def unsafe_reason(st: os.stat_result) -> str:
    """Why a folder with this stat may not hold what this process loads ("" if it may)."""
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        return "another user owns it"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "its group or other users may write to it"
    return ""


@functools.lru_cache(maxsize=None)
def _warn_once(root: str, why: str) -> None:
    warnings.warn(
        f"tir-mlir: not using the cache folder {root}: {why} (make it private: "
        f"chmod 700 {root}); compiling without a cache",
        stacklevel=3,
    )


@functools.lru_cache(maxsize=1)
def private_dir() -> Path:
    """A folder of this process's own, deleted at exit (used when the cache is off)."""
    return process_temp_dir("tir-mlir-")


def process_temp_dir(prefix: str) -> Path:
    """A new temporary folder `<prefix><pid>-<random>`, deleted at exit. A process killed
    (kill -9) cannot delete its folder, so the folders of this prefix whose process is gone
    are deleted first."""
    _sweep(prefix)
    path = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))
    atexit.register(shutil.rmtree, path, True)
    return path


def _sweep(prefix: str) -> None:
    """Delete this user's `<prefix><pid>-*` folders whose process no longer exists."""
    root = Path(tempfile.gettempdir())
    try:
        entries = list(root.glob(f"{prefix}*-*"))
    except OSError:
        return
    for path in entries:
        pid = path.name[len(prefix) :].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            if path.lstat().st_uid != os.geteuid() or not path.is_dir():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except OSError:  # alive (another user's pid: EPERM), or gone meanwhile
            continue


def _digest_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def seal_as(tmp: Path, path: Path) -> None:
    """Record the hash of `tmp` for `path`, the name it is about to be renamed to."""
    final = _digest_path(path)
    out = final.with_name(f"{final.name}.{os.getpid()}.tmp")
    out.write_text(_sha256(tmp))
    os.replace(out, final)


def intact(path: Path) -> bool:
    """Whether `path` still has the bytes its recorded hash says (False without a record)."""
    try:
        return _digest_path(path).read_text().strip() == _sha256(path)
    except OSError:
        return False


def discard(path: Path) -> None:
    """Delete an entry and its hash."""
    path.unlink(missing_ok=True)
    _digest_path(path).unlink(missing_ok=True)


def tool_answer(kind: str, tool: Path, key: str, probe: Callable[[], Any]) -> Any:
    """`probe()`'s answer (JSON data) for `key`, kept in the cache folder as `<kind>-<hash>.json`
    under a name that also holds the tool's size and time (a new tool answers again); None
    when the tool is missing. A falsy answer (the tool could not say) is not kept."""
    folder = cache_dir()
    if folder is None:
        return probe()
    try:
        st = tool.stat()
    except OSError:
        return None
    tag = hashlib.sha256(f"{key}\0{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()[:20]
    path = folder / f"{kind}-{tag}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        pass
    answer = probe()
    if answer:
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(answer))
            os.replace(tmp, path)
        except OSError:
            tmp.unlink(missing_ok=True)
    return answer
