"""The cache folder holds what every process loads, so nothing in it can run code or crash the
loader: the parser tables are JSON (a planted pickle is ignored), a folder others may write is
refused, a new one is private, and a cached shared object is loaded only when the hash kept
beside it matches (a truncated or planted entry is compiled again)."""

import os
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

from tir_mlir.ir import user_cache
from compile_cache_child import _run

TESTS = str(Path(__file__).parent.parent)
PARSE = "import tir_mlir; print(tir_mlir.load(%r).script())" % str(
    Path(TESTS) / "data" / "programs" / "matmul.tir"
)


class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _env(cache):
    env = {**os.environ, "TIR_MLIR_CACHE_DIR": str(cache)}
    env.pop("TIR_MLIR_CACHE", None)
    return env


def test_planted_pickle_in_place_of_the_parser_tables_never_runs(tmp_path):
    cache, marker = tmp_path / "cache", tmp_path / "pwned"
    first = subprocess.run(
        [sys.executable, "-c", PARSE], env=_env(cache), capture_output=True, text=True, check=False
    )
    assert first.returncode == 0, first.stderr
    (tables,) = cache.glob("grammar-*")
    tables.write_bytes(pickle.dumps(_Payload(str(marker))))
    (cache / tables.name.replace(".json", ".lark")).write_bytes(tables.read_bytes())
    again = subprocess.run(
        [sys.executable, "-c", PARSE], env=_env(cache), capture_output=True, text=True, check=False
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    assert not marker.exists()


def test_new_cache_folder_is_private(tmp_path, monkeypatch):
    monkeypatch.delenv("TIR_MLIR_CACHE", raising=False)
    monkeypatch.setenv("TIR_MLIR_CACHE_DIR", str(tmp_path / "a" / "cache"))
    folder = user_cache.cache_dir()
    assert folder == tmp_path / "a" / "cache"
    assert folder.stat().st_mode & 0o777 == 0o700


def test_folder_others_may_write_is_refused(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.delenv("TIR_MLIR_CACHE", raising=False)
    monkeypatch.setenv("TIR_MLIR_CACHE_DIR", str(shared))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert user_cache.cache_dir() is None
    assert any("other users may write" in str(w.message) for w in caught)


def _planted_library(path: Path, marker: Path):
    src = (
        f"#include <stdio.h>\n__attribute__((constructor)) static void f(void) "
        f'{{ fclose(fopen("{marker}", "w")); }}\n'
    )
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-x", "c", "-", "-o", str(path)],
        input=src,
        text=True,
        check=True,
    )


def test_damaged_or_planted_shared_object_is_rebuilt_not_loaded(tmp_path):
    cache, marker = tmp_path / "cache", tmp_path / "pwned"
    assert _run(cache) == (1, 0)
    (entry,) = cache.glob("*.so")
    good = entry.read_bytes()
    entry.write_bytes(good[: len(good) // 3])  # truncated: SIGBUS if it were loaded
    assert _run(cache) == (1, 0)
    assert entry.read_bytes() == good
    _planted_library(entry, marker)  # replaced by another library
    assert _run(cache) == (1, 0)
    assert not marker.exists()
    assert _run(cache) == (0, 1)  # the rebuilt entry is used again
