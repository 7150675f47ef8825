"""load_module refuses what export_library did not write, before dlopen runs any of it: a bad
"target", deeply nested JSON, a huge (sparse) file, or a library without the embedded
signatures (its constructor never runs) are clear errors, and no temporary copy is left."""

import glob
import hashlib
import json
import os
import subprocess
import tempfile

import numpy as np
import pytest

import tir_mlir
from lowering_programs import matmul
from tir_mlir.errors import RuntimeCallError
from tir_mlir.runtime import artifact


@pytest.fixture
def exported(tmp_path):
    path = tmp_path / "mm.so"
    tir_mlir.build(matmul(8)).export_library(str(path))
    return path


def _copies():
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "tir_mlir_lib_*")))


def _set_meta(path, **changes):
    meta_path = str(path) + ".json"
    meta = json.loads(open(meta_path).read())
    meta.update(changes)
    open(meta_path, "w").write(json.dumps(meta))


def test_exported_library_still_loads(exported):
    fn = tir_mlir.load_module(str(exported))["matmul"]
    a = np.ones((8, 8), np.float32)
    c = np.zeros((8, 8), np.float32)
    fn(a, a, c)
    assert (c == 8).all()


@pytest.mark.parametrize("target", ["", 5, None, ["cuda"], "rocm -arch=x"])
def test_bad_target_is_a_clear_error(exported, target):
    _set_meta(exported, target=target)
    with pytest.raises(RuntimeCallError, match="malformed signature file: target"):
        tir_mlir.load_module(str(exported))


def test_deeply_nested_json_is_a_clear_error(exported):
    (exported.parent / "mm.so.json").write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(RuntimeCallError, match="not a signature file written by"):
        tir_mlir.load_module(str(exported))


def test_huge_sparse_library_is_refused_without_a_copy(exported):
    before = _copies()
    with open(exported, "r+b") as f:
        f.truncate(artifact.MAX_LIBRARY_BYTES + 1)  # sparse: no disk used
    with pytest.raises(RuntimeCallError, match="larger than any library"):
        tir_mlir.load_module(str(exported))
    assert _copies() == before


def test_library_without_signatures_is_refused_before_dlopen(exported, tmp_path):
    marker = tmp_path / "ran"
    other = tmp_path / "other.so"
    src = (
        f"#include <stdio.h>\n__attribute__((constructor)) static void f(void) "
        f'{{ fclose(fopen("{marker}", "w")); }}\n'
    )
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-x", "c", "-", "-o", str(other)],
        input=src,
        text=True,
        check=True,
    )
    os.replace(other, exported)  # the JSON's hash made to match it
    _set_meta(exported, sha256=hashlib.sha256(exported.read_bytes()).hexdigest())
    before = _copies()
    with pytest.raises(
        RuntimeCallError,
        match="differ from the ones compiled into the library .or it is not a library written by export_library",
    ):
        tir_mlir.load_module(str(exported))
    assert not marker.exists()
    assert _copies() == before
