"""docs/handoff.md's recipes run as written (after its setup block) and print the right numbers:
the `mlir-opt | mlir-runner` run of a scheduled program's affine stage (with OpenMP) and the C
program linking the llvm-dialect stage of a scheduled matmul + ReLU."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
from handoff_doc import block


def _run(name, cwd) -> str:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    r = subprocess.run(
        ["bash", "-e", "-c", block("handoff-setup") + block(name)],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_mlir_runner_recipe_runs_the_parallel_loop_on_openmp(tmp_path):
    out = _run("handoff", tmp_path).strip().splitlines()
    assert out[0] == "1"  # one omp.wsloop
    rows = [[float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", line)] for line in out[2:]]
    np.testing.assert_array_equal(rows, np.arange(64).reshape(4, 16) + 1)


def test_c_program_links_the_scheduled_kernel(tmp_path):
    _run("handoff-c", tmp_path)
    i, j = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
    a = ((i * 7 + j) % 5 - 2).astype("float32")
    b = ((i + 3 * j) % 7 - 3).astype("float32")
    got = np.loadtxt(tmp_path / "C.txt", dtype="float32")
    np.testing.assert_array_equal(got, np.maximum(a @ b, 0))
    assert (got > 0).sum() > 1000  # not a ReLU of zeros
    symbols = subprocess.run(
        ["nm", str(tmp_path / "mm_relu.o")], capture_output=True, text=True
    ).stdout
    assert "__kmpc_fork_call" in symbols  # the parallel loop runs on OpenMP
