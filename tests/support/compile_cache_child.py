"""A child process that builds one program through the compile cache and reports (compiles, disk
hits): how the cache tests see what a new process reuses."""

import os
import subprocess
import sys
from pathlib import Path


TESTS = str(Path(__file__).parent.parent)


CHILD = """
import sys, numpy as np, tir_mlir
sys.path.insert(0, {tests!r} + "/support")
import lowering_programs as P
from tir_mlir.runtime.compile_cache import STATS
lib = tir_mlir.build(P.matmul(24))
a = np.ones((24, 24), np.float32); c = np.zeros((24, 24), np.float32)
lib["matmul"](a, a, c)
assert (c == 24).all()
print(STATS["compiles"], STATS["disk_hits"])
"""


def _run(cache, extra_env=None, wait=True):
    env = {k: v for k, v in os.environ.items() if k != "TIR_MLIR_CACHE"}
    env.update({"TIR_MLIR_CACHE_DIR": str(cache), **(extra_env or {})})
    p = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(tests=TESTS)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return _result(p) if wait else p


def _result(p):
    out, err = p.communicate()
    assert p.returncode == 0, err
    return tuple(int(x) for x in out.split()[-2:])
