"""OpenMP worker threads are bound to cores; the Python main thread (and what it starts later)
keeps every core; a binding the user chose wins."""

import json
import os
import subprocess
import sys

import pytest

CHILD = r'''
import json, os, numpy as np, tir_mlir
mod = tir_mlir.parse("""
@T.prim_func
def main(A: T.Buffer((64, 1024), "float32"), B: T.Buffer((64, 1024), "float32")):
    for i in T.parallel(64):
        for j in range(1024):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
""")
a = np.ones((64, 1024), "float32"); b = np.zeros_like(a)
tir_mlir.build(mod)["main"](a, b)
assert (b == 2).all()
pid = os.getpid()
masks = {t: open(f"/proc/{pid}/task/{t}/status").read().split("Cpus_allowed_list:")[1].split()[0]
         for t in os.listdir(f"/proc/{pid}/task")}
print(json.dumps({"main": masks.pop(str(pid)), "threads": list(masks.values()),
                  "env": os.environ.get("OMP_PROC_BIND")}))
'''


def _run(env):
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.splitlines()[-1])


needs_two_cores = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core")


@needs_two_cores
def test_workers_bound_main_thread_free():
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OMP_PROC_BIND", "OMP_PLACES", "KMP_AFFINITY", "GOMP_CPU_AFFINITY")
    }
    env["OMP_NUM_THREADS"] = "2"
    got = _run(env)
    cores = os.sched_getaffinity(0)
    assert got["env"] is None  # not passed on to children
    main = got["main"]
    assert "-" in main or "," in main, main  # still more than one core
    singles = [t for t in got["threads"] if t.isdigit() and int(t) in cores]
    assert singles, got  # an OpenMP worker, bound


@needs_two_cores
def test_user_binding_wins():
    env = {**os.environ, "OMP_PROC_BIND": "false", "OMP_NUM_THREADS": "2"}
    env.pop("OMP_PLACES", None)
    got = _run(env)
    assert got["env"] == "false"
    assert not any(t.isdigit() for t in got["threads"]), got  # nobody bound to one core
