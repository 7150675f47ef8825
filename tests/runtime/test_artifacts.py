"""export_library / load_module under abuse: re-export to one path, concurrent exports,
truncated, corrupt or swapped files, signature files that lie. Every case is either the right
numbers or a RuntimeCallError, never a crash or wrong numbers."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tir_mlir
from tir_mlir.errors import BuildError, RuntimeCallError

SRC = """
# from tvm.script import tir as T

@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32({k}) + T.float32(1)
"""
A = np.arange(32, dtype=np.float32).reshape(8, 4)


def export(k, path):
    tir_mlir.build(tir_mlir.parse(SRC.format(k=k))).export_library(path)


def result(lib):
    b = np.zeros_like(A)
    lib["f"](A, b)
    return b


def test_reexport_to_the_same_path_loads_the_new_code(tmp_path):
    path = tmp_path / "f.so"
    for k in (2, 3, 5):
        export(k, path)
        np.testing.assert_array_equal(result(tir_mlir.load_module(path)), A * k + 1)


def test_writes_leave_no_temporary_files(tmp_path):
    export(2, tmp_path / "f.so")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.so", "f.so.json"]


@pytest.mark.parametrize("damage", ["truncate", "empty", "flip", "garbage"])
def test_damaged_library_is_refused(tmp_path, damage):
    path = tmp_path / "f.so"
    export(2, path)
    data = path.read_bytes()
    path.write_bytes(
        {
            "truncate": data[: len(data) // 2],
            "empty": b"",
            "flip": data[:-100] + bytes([data[-100] ^ 0xFF]) + data[-99:],
            "garbage": b"\x7fELF" + b"\0" * 4000,
        }[damage]
    )
    with pytest.raises(RuntimeCallError, match="does not match"):
        tir_mlir.load_module(path)


def test_library_from_another_export_is_refused(tmp_path):
    export(2, tmp_path / "a.so")
    export(3, tmp_path / "b.so")
    (tmp_path / "a.so").write_bytes((tmp_path / "b.so").read_bytes())
    with pytest.raises(RuntimeCallError, match="does not match"):
        tir_mlir.load_module(tmp_path / "a.so")


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda m: m["functions"]["f"][0].update(shape=[4, 8]), "differ from the ones compiled"),
        (lambda m: m["functions"]["f"][1].update(shape=[64, 64]), "differ from the ones compiled"),
        (lambda m: m["functions"]["f"][0].update(dtype="float64"), "differ from the ones compiled"),
        (lambda m: m["functions"].update(g=m["functions"].pop("f")), "differ from the ones"),
        (lambda m: m["functions"]["f"][0].update(dtype="complex64"), "malformed"),
        (lambda m: m["functions"]["f"][0].update(shape=[0, 4]), "malformed"),
        (lambda m: m["functions"]["f"][0].update(shape=[-8, 4]), "malformed"),
        (lambda m: m["functions"]["f"][0].update(shape="8x4"), "malformed"),
        (lambda m: m.update(functions={}), "malformed"),
        (lambda m: m.update(functions=[]), "malformed"),
        (lambda m: m.pop("sha256"), "malformed"),
        (lambda m: m.update(format=0), "malformed"),
        (lambda m: m.update(sha256="0" * 64), "does not match"),
    ],
)
def test_signature_file_that_lies_is_refused(tmp_path, edit, match):
    path = tmp_path / "f.so"
    export(2, path)
    meta_path = Path(str(path) + ".json")
    meta = json.loads(meta_path.read_text())
    edit(meta)
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(RuntimeCallError, match=match):
        tir_mlir.load_module(path)


@pytest.mark.parametrize("text", ["", "not json", "[]", "{" * 100000, "null", '{"format": 1}'])
def test_malformed_signature_file(tmp_path, text):
    path = tmp_path / "f.so"
    export(2, path)
    Path(str(path) + ".json").write_text(text)
    with pytest.raises(RuntimeCallError):
        tir_mlir.load_module(path)


def test_missing_files_and_directories(tmp_path):
    with pytest.raises(RuntimeCallError, match="no such library"):
        tir_mlir.load_module(tmp_path / "nope.so")
    export(2, tmp_path / "f.so")
    Path(str(tmp_path / "f.so") + ".json").unlink()
    with pytest.raises(RuntimeCallError, match="no such library"):
        tir_mlir.load_module(tmp_path / "f.so")
    with pytest.raises(BuildError, match="does not exist"):
        export(2, tmp_path / "missing" / "f.so")


def test_concurrent_exports_to_one_path(tmp_path):
    """Four processes export different code to one path at once: what is left is one writer's
    complete, consistent pair of files."""
    path = tmp_path / "f.so"
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_artifacts import export
        for _ in range(3):
            export(int(sys.argv[1]), sys.argv[2])
    """)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(k), str(path)], stderr=subprocess.PIPE, text=True
        )
        for k in (2, 3, 5, 7)
    ]
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stderr.read()
    b = result(tir_mlir.load_module(path))
    assert any(np.array_equal(b, A * k + 1) for k in (2, 3, 5, 7))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.so", "f.so.json"]
