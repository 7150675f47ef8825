"""Front-end gaps found by round trips: a block iterating a loop that does not start at 0,
a reindex of a reindex block, identifiers read NFKC-normalised as Python reads them, duplicate
parameters, vector-dtype parameters of a built function, and sums of 10,000 terms printed."""

import re

import numpy as np
import pytest

import tir_mlir
from shared_programs import MATMUL_16 as MM
from tir_mlir import Schedule
from tir_mlir.errors import BuildError, TIRParseError

HEAD = '@T.prim_func\ndef main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):\n'


def test_remap_of_a_loop_not_starting_at_zero():
    mod = tir_mlir.parse(
        HEAD
        + """    for i in range(10, 16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi]
"""
    )
    text = mod.script()
    assert "vi = T.axis.spatial((10, 16), i)" in text
    assert tir_mlir.parse(text).script() == text
    a, b = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
    tir_mlir.build(mod)["main"](a, b)
    np.testing.assert_array_equal(b, np.where(np.arange(16) >= 10, a, 0))


def test_loop_partition_output_parses_back():
    sch = Schedule(tir_mlir.parse(MM))
    i = sch.get_loops(sch.get_block("C"))[0]
    sch.loop_partition(i, [None, 6])
    back = tir_mlir.parse(sch.mod.script())
    a, b = (np.random.default_rng(0).random((16, 16), np.float32) for _ in range(2))
    c = np.zeros((16, 16), np.float32)
    tir_mlir.build(back)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_reindex_of_a_reindex_block_names_its_copy_uniquely():
    sch = Schedule(tir_mlir.parse(MM))
    sch.reindex(sch.get_block("C"), ("write", 0))
    sch.reindex(sch.get_block("C_reindex"), ("write", 0))
    names = re.findall(r'T.block\("([^"]*)"\)', sch.mod.script())
    assert sorted(names) == ["C", "C_reindex", "C_reindex_1", "root"]


def test_identifiers_are_nfkc_normalised():
    body = """    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            {second}
            B[vi] = A[\uff56i]
"""
    with pytest.raises(TIRParseError, match=r":6:13: block iter var 'vi' defined twice"):
        tir_mlir.parse(HEAD + body.format(second="\uff56i = T.axis.spatial(16, 15 - i)"), "f.tir")
    mod = tir_mlir.parse(HEAD + body.format(second="pass"))
    assert "B[vi] = A[vi]" in mod.script()


def test_duplicate_parameter_is_refused():
    with pytest.raises(TIRParseError, match=r"f.tir:2:41: duplicate argument 'A' in function"):
        tir_mlir.parse(HEAD.replace("B: T.Buffer", "A: T.Buffer") + "    A[0] = A[1]\n", "f.tir")


def test_vector_dtype_parameter_is_a_clear_build_error():
    mod = tir_mlir.parse(HEAD.replace('"float32"),', '"float32x4"),', 1) + "    B[0] = B[1]\n")
    with pytest.raises(
        BuildError,
        match="parameter 'A' is a buffer of float32x4, but a built function takes numpy arrays",
    ):
        tir_mlir.build(mod)


def test_sum_of_10000_terms_prints_and_parses_back():
    terms = " + ".join(f"A[{k % 16}]" for k in range(10000))
    mod = tir_mlir.parse(HEAD + f"    B[0] = {terms}\n")
    text = mod.script()
    assert f"B[0] = {terms}" in text
    assert tir_mlir.parse(text).script() == text


def test_parameters_beyond_memory_are_named(tmp_path):
    import resource
    import subprocess
    import sys

    f = tmp_path / "big.tir"
    f.write_text(
        HEAD.replace("A: T.Buffer((16,)", "A: T.Buffer((4294967296,)")
        + "    for i in range(16):\n        B[i] = A[i]\n"
    )

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    p = subprocess.run(
        [sys.executable, "-m", "tir_mlir.cli", "run", str(f)],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        check=False,
    )
    assert p.returncode == 1
    assert "not enough memory for buffer 'A' (4294967296 float32: 16.0 GiB)" in p.stderr
