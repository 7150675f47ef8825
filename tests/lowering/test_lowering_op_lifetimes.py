"""No lowering stage reads an op it has erased.

In these MLIR bindings `op.erase()` invalidates only the Python object it is called on: any
other handle of that op, or of an op nested in it, still points at the freed memory. Reading
one usually finds the old op still there (the read seems to work) until the allocator hands
the memory out again; then the process crashes, or reads another op. tir-to-affine listed
every op of a function, then erased each block it flattened together with the terminators
still in its list; jam-carried-loops listed the bodies of the loops it then fused away.

The child process runs with glibc's MALLOC_PERTURB_, which overwrites freed memory at once, so
any such read crashes it on the spot. It lowers scheduled programs of several kinds (everyday
schedules of the benchmark workloads, a tuner's register tile whose carried loops get jammed,
a GPU softmax with cross-thread reductions), keeps all of them built, and then runs each
against the unscheduled program."""

import os
import subprocess
import sys
from pathlib import Path

SUPPORT = Path(__file__).parent.parent / "support"

CHILD = """
import sys
sys.path.insert(0, {support!r})
import numpy as np
import tir_mlir
from gpu_example_schedules import softmax_schedule
from gpu_sim import simulate
from schedule_check import random_args
from schedule_everyday import draw, schedule_fn, workloads
from tir_mlir import Schedule, ScheduleError
from tir_mlir.passes.lowering.pipeline import lower
from workloads import matmul

def everyday(name):
    src = workloads(small=True)[name]
    mod = tir_mlir.parse(src)
    for seed in range(5):
        sch = Schedule(mod)
        try:
            schedule_fn(draw(src, seed))(sch)
        except ScheduleError:
            continue
        return mod, sch.mod
    raise AssertionError("no draw of seeds 0-4 applies to " + name)

def register_tile():
    mod = tir_mlir.parse(matmul(128, noalias=True))
    sch = Schedule(mod)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1, i2, i3 = sch.split(i, factors=[2, 8, 2, 4])
    j0, j1, j2, j3 = sch.split(j, factors=[4, 2, 2, 8])
    k0, k1 = sch.split(k, factors=[4, 32])
    sch.reorder(i0, j0, i1, j1, k0, i2, j2, k1, i3, j3)
    sch.parallel(sch.fuse(i0, j0))
    sch.vectorize(j3)
    sch.decompose_reduction(c, k0)
    return mod, sch.mod

NAMES = {names!r}
kept = []
for before, after in [everyday(n) for n in NAMES] + [register_tile()]:
    kept.append((before, tir_mlir.build(after), random_args(before, "main")))
gpu = lower(softmax_schedule().module, "cuda", "gpu")
for before, lib, args in kept:
    want = [a.copy() for a in args]
    tir_mlir.interpret(before, "main", *want)
    got = [a.copy() for a in args]
    lib["main"](*got)
    for x, y in zip(want, got):
        np.testing.assert_allclose(y, x, rtol=1e-4, atol=1e-4)
a = np.random.default_rng(0).standard_normal((16, 256)).astype(np.float32)
b = np.zeros_like(a)
simulate(gpu, a, b)
e = np.exp(a - a.max(1, keepdims=True))
np.testing.assert_allclose(b, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
print(len(kept), "ran")
"""

# Reductions with init (peeled or guarded), rfactor and decompose_reduction, cache reads and
# writes, inlined producers, blocks computed at others' loops, vectorized and parallel loops.
NAMES = ["conv2d_nchw32x28", "softmax256x1024", "layernorm128x1024", "matmul256_int8"]


def test_lowering_reads_no_erased_op():
    env = {**os.environ, "MALLOC_PERTURB_": "165"}
    code = CHILD.format(support=str(SUPPORT), names=NAMES)
    p = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, f"exit status {p.returncode}:\n{p.stderr[-4000:]}"
    assert p.stdout.split() == [str(len(NAMES) + 1), "ran"]
