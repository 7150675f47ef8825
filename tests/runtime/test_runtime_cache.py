"""The compile cache: shared objects on disk reused by a new process without compiling, safe
under concurrent writers, off with TIR_MLIR_CACHE=0, pruned past its size; an LRU bound on the
libraries kept loaded; the parser's cached tables."""

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import tir_mlir
from tir_mlir.runtime import build as build_mod, compile_cache

import lowering_programs as P
from compile_cache_child import TESTS, _result, _run


def test_new_process_loads_the_cached_shared_object(tmp_path):
    assert _run(tmp_path) == (1, 0)  # compiled once ...
    entries = list(tmp_path.glob("*.so"))
    assert len(entries) == 1
    assert _run(tmp_path) == (0, 1)  # ... then loaded, not compiled
    assert list(tmp_path.glob("*.so")) == entries
    assert not list(tmp_path.glob("*.tmp"))


def test_concurrent_writers_leave_one_complete_entry(tmp_path):
    procs = [_run(tmp_path, wait=False) for _ in range(4)]
    results = [_result(p) for p in procs]
    assert all(compiles + hits == 1 for compiles, hits in results)
    assert len(list(tmp_path.glob("*.so"))) == 1
    assert not list(tmp_path.glob("*.tmp"))
    assert _run(tmp_path) == (0, 1)


def test_cache_off_writes_nothing(tmp_path):
    assert _run(tmp_path, {"TIR_MLIR_CACHE": "0"}) == (1, 0)
    assert not list(tmp_path.iterdir())


def test_memory_lru_keeps_a_bounded_number_of_libraries(monkeypatch, tmp_path):
    monkeypatch.setenv("TIR_MLIR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(build_mod, "_LIBRARIES", build_mod.LRU(2))
    hits = compile_cache.STATS["disk_hits"]
    libs = [tir_mlir.build(P.matmul(n)) for n in (4, 5, 6)]
    assert len(build_mod._LIBRARIES) == 2
    assert compile_cache.STATS["disk_hits"] == hits
    tir_mlir.build(P.matmul(4))  # evicted from memory: loaded again from disk
    assert compile_cache.STATS["disk_hits"] == hits + 1
    tir_mlir.build(P.matmul(6))  # still in memory
    assert compile_cache.STATS["disk_hits"] == hits + 1
    a = np.ones((4, 4), np.float32)
    c = np.zeros((4, 4), np.float32)
    libs[0]["matmul"](a, a, c)
    assert (c == 4).all()


def test_prune_deletes_least_recently_used_entries(tmp_path):
    now = time.time()
    for k in range(8):
        p = tmp_path / f"{k}.so"
        p.write_bytes(b"x" * 1000)
        os.utime(p, (now - 100 + k, now - 100 + k))
    compile_cache._prune(tmp_path, 4000)
    assert sorted(p.name for p in tmp_path.glob("*.so")) == ["5.so", "6.so", "7.so"]


def test_parser_tables_are_cached_and_a_broken_cache_file_is_ignored(tmp_path):
    code = "import tir_mlir; print(tir_mlir.load(%r).script())" % str(
        Path(TESTS) / "data" / "programs" / "matmul.tir"
    )
    env = {**os.environ, "TIR_MLIR_CACHE_DIR": str(tmp_path)}
    env.pop("TIR_MLIR_CACHE", None)
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    tables = list(tmp_path.glob("grammar-*.json"))
    assert len(tables) == 1 and tables[0].stat().st_size > 10000
    # A new process loads the tables: it never builds a parser.
    no_build = "import lark; lark.Lark.__init__ = None; " + code
    loaded = subprocess.run(
        [sys.executable, "-c", no_build], env=env, capture_output=True, text=True
    )
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout == first.stdout and 'T.block("C")' in first.stdout
    tables[0].write_bytes(b"garbage")
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert tables[0].stat().st_size > 10000  # rebuilt and saved again


def test_target_description_is_cached(monkeypatch, tmp_path):
    from tir_mlir.passes.lowering import cpu_target as ct

    monkeypatch.setenv("TIR_MLIR_CACHE_DIR", str(tmp_path))
    probe = ct._cached_probe.__wrapped__
    first = probe("x86_64-unknown-linux-gnu", "x86-64", "+avx2")
    assert first.cpu == "x86-64" and first.features[-1] == "+avx2"
    assert len(list(tmp_path.glob("target-*.json"))) == 1

    def no_tool(*_):
        raise AssertionError("opt was run again")

    monkeypatch.setattr(ct, "_probe", no_tool)
    assert probe("x86_64-unknown-linux-gnu", "x86-64", "+avx2") == first


def test_folder_is_scanned_when_this_process_could_have_filled_it(monkeypatch, tmp_path):
    """No stat of every entry after each compile: a scan when what this process wrote since
    its last one could have filled the room left, or every RESCAN compiles."""
    scans = []
    real = compile_cache._prune
    monkeypatch.setattr(
        compile_cache, "_prune", lambda folder, limit: scans.append(1) or real(folder, limit)
    )
    monkeypatch.setattr(compile_cache, "_ROOM", {})
    monkeypatch.setattr(compile_cache, "RESCAN", 4)

    def write(name, size, limit):
        p = tmp_path / name
        p.write_bytes(b"x" * size)
        compile_cache._maybe_prune(tmp_path, limit, p)

    write("a.so", 1000, 10000)  # first compile of the process: scanned
    assert len(scans) == 1
    write("b.so", 1000, 10000)  # 8000 bytes of room left: not scanned
    write("c.so", 1000, 10000)
    assert len(scans) == 1
    write("d.so", 7500, 10000)  # could have filled the room: scanned, and pruned
    assert len(scans) == 2
    assert sum(p.stat().st_size for p in tmp_path.glob("*.so")) <= 7500
    for k in range(4):  # RESCAN compiles: scanned even with room left
        write(f"e{k}.so", 1, 10**9)
    assert len(scans) == 3
