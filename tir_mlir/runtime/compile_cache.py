"""Compiled shared objects by content key, on disk, so a rebuild in a later process only loads.

Where: `tir_mlir.ir.user_cache.cache_dir()`; when it is turned off (`TIR_MLIR_CACHE=0`) shared
objects go to a private temporary folder deleted at exit. An entry is `<key>.so`; the key hashes the lowered IR (which carries the target), the target's tool flags,
the compiler tools' identity and FORMAT. A writer compiles into a file of its own and renames it
into place (atomic), so processes building the same program at once never read a partial file;
the SHA-256 of its bytes is kept beside it and checked before every load (user_cache.py), so
a damaged or replaced entry is compiled again.
A hit touches the file; past `TIR_MLIR_CACHE_MAX_MB` (default 1024) the least recently used
entries are deleted. The folder is scanned for that (a stat per entry: ~0.1 s per build of a
tuning run with thousands of entries) only when what this process compiled since its last scan
could have filled the room that scan left, or every RESCAN compiles (other processes write
too), not after every compile."""

import collections
import functools
import hashlib
import os
import threading
from pathlib import Path

from tir_mlir.passes.lowering import llvm_ir
from tir_mlir.passes.lowering.cpu_target import LLVM_BIN
from tir_mlir.ir.user_cache import cache_dir, discard, intact, private_dir, seal_as

FORMAT = 2  # bumped when the way an entry is built changes (2: linked with -lm)
# Counters for tests and benchmarks: compiles (misses), disk_hits, damaged (entries rebuilt).
STATS = collections.Counter()
# Compiles between two scans of the folder at most.
RESCAN = 64
# folder -> [bytes free after this process's last scan, minus what it wrote since; compiles since]
_ROOM = {}


@functools.lru_cache(maxsize=1)
def _toolchain() -> str:
    """Identity of the compiler: the tools' and runtime libraries' size and mtime."""
    files = [LLVM_BIN / "opt", LLVM_BIN / "llc", llvm_ir.LIBOMP, llvm_ir.C_RUNNER_UTILS]
    return ";".join(f"{f}:{s.st_size}:{s.st_mtime_ns}" for f in files for s in [os.stat(f)])


def key(*parts: str) -> str:
    h = hashlib.sha256(f"{FORMAT}\0{_toolchain()}".encode())
    for p in parts:
        h.update(b"\0" + p.encode())
    return h.hexdigest()


def shared_object(key: str, compile_to) -> Path:
    """The shared object for `key`: the cached file if there is one, else `compile_to(path)`
    writes it."""
    disk = cache_dir()
    folder = disk or private_dir()
    path = folder / f"{key}.so"
    if path.exists():
        if intact(path):
            try:
                os.utime(path)
                STATS["disk_hits"] += 1
                return path
            except FileNotFoundError:  # pruned by another process just now
                pass
        else:  # damaged or planted: built again
            STATS["damaged"] += 1
            discard(path)
    tmp = folder / f"{key}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        compile_to(tmp)
        seal_as(tmp, path)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    STATS["compiles"] += 1
    if disk is not None:
        _maybe_prune(folder, int(os.environ.get("TIR_MLIR_CACHE_MAX_MB", "1024")) << 20, path)
    return path


def _maybe_prune(folder: Path, max_bytes: int, written: Path):
    room = _ROOM.get(folder)
    if room is not None:
        try:
            room[0] -= written.stat().st_size
        except FileNotFoundError:
            pass
        room[1] += 1
        if room[0] > 0 and room[1] < RESCAN:
            return
    _ROOM[folder] = [max_bytes - _prune(folder, max_bytes), 0]


def _prune(folder: Path, max_bytes: int) -> int:
    """Delete the least recently used entries until the folder holds 3/4 of max_bytes (when
    it holds more than max_bytes); the bytes it then holds."""
    entries = []
    for p in folder.glob("*.so"):
        try:
            s = p.stat()
        except FileNotFoundError:
            continue
        entries.append((s.st_mtime, s.st_size, p))
    total = sum(size for _, size, _ in entries)
    if total <= max_bytes:
        return total
    for _, size, p in sorted(entries, key=lambda e: e[0]):
        if total <= max_bytes * 3 // 4:
            break
        discard(p)
        total -= size
    return total
