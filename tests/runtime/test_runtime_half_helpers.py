"""A float64 -> float16 cast (a libgcc helper call, `__truncdfhf2`) computes the right value
even when a library loaded before exports a helper of that name with another ABI, as TVM's
libtvm does (`import tvm` then a build gave zeros; found by the schedule fuzzer, seed 226 of
unsafe_set_dtype). The child process loads such an impostor globally, then builds both ways:
the JIT (debug=True) and the cached shared object."""

import os
import subprocess
import sys
import textwrap

import pytest

IMPOSTOR = "unsigned short __truncdfhf2(double x) { return 0x7777; }\n"
CHILD = textwrap.dedent("""
    import ctypes, sys
    ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
    import numpy as np, tir_mlir
    mod = tir_mlir.parse('''
    @T.prim_func
    def f(A: T.Buffer((64,), "float64"), B: T.Buffer((64,), "float16")):
        for i in range(64):
            with T.block("B"):
                vi = T.axis.spatial(64, i)
                B[vi] = T.Cast("float16", A[vi] * T.float64(3))
    ''')
    a = np.linspace(-5, 5, 64)
    for debug in (True, False):
        b = np.zeros(64, np.float16)
        tir_mlir.build(mod, debug=debug)["f"](a, b)
        np.testing.assert_array_equal(b, (a * 3).astype(np.float16))
    print("ok")
""")


def test_float64_to_float16_with_an_impostor_helper_loaded(tmp_path):
    src = tmp_path / "impostor.c"
    src.write_text(IMPOSTOR)
    lib = tmp_path / "libimpostor.so"
    if subprocess.run(["cc", "-shared", "-fPIC", "-o", lib, src]).returncode:
        pytest.skip("no C compiler")
    env = {**os.environ, "TIR_MLIR_CACHE_DIR": str(tmp_path / "cache")}
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(lib)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr[-3000:]
