"""Timing one scheduled program on one side (tir-mlir, or TVM 0.21 for generic x86-64 or for the
host CPU), for the benchmarks that run each side in its own process (bench_vs_tvm.py,
bench_random_vs_tvm.py). Both sides get the same seeded inputs, so outputs can be compared.
"""

import time
import zlib
from pathlib import Path

import numpy as np

SIDES = ("proj", "tvm-llvm", "tvm-host")


def inputs(name: str, params) -> list:
    """Seeded arrays for [(shape, dtype)]: the same for both sides of case `name`."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    out = []
    for shape, dtype in params:
        dt = np.dtype(dtype)
        out.append(
            rng.standard_normal(shape).astype(dt)
            if dt.kind == "f"
            else rng.integers(-4, 4, shape).astype(dt)
        )
    return out


def cpu_seconds(call, repeat: int = 15, min_seconds: float = 0.03) -> float:
    """Best over `repeat` rounds of the CPU seconds per call of this thread."""
    start = time.thread_time()
    call()
    if time.thread_time() - start > 0.1:  # a slow kernel: a few calls say enough
        repeat = 3
    best = float("inf")
    for _ in range(repeat):
        n, start = 0, time.thread_time()
        while n == 0 or time.thread_time() - start < min_seconds:
            call()
            n += 1
        best = min(best, (time.thread_time() - start) / n)
    return best


def schedule_proj(src: str, schedule):
    """tir-mlir's module after `schedule` (raises what the schedule raises)."""
    import tir_mlir

    sch = tir_mlir.Schedule(tir_mlir.parse(src))
    schedule(sch)
    return sch.mod


def run_proj(name: str, mod, repeat: int = 7, cpu_time: bool = False):
    """(best seconds per call, output arrays) of tir-mlir's build of `mod`."""
    import tir_mlir
    from tir_mlir.context import get_context
    from tir_mlir.runtime.signature import signatures

    with get_context():
        fname, params = next(iter(signatures(mod.module).items()))
    lib = tir_mlir.build(mod, target="llvm")
    # tir_mlir.nd.array: 64-byte aligned, as tvm.nd.array gives TVM's side
    args = [tir_mlir.nd.array(a) for a in inputs(name, [(tuple(p.shape), p.dtype) for p in params])]
    lib[fname](*args)
    if cpu_time:
        return cpu_seconds(lib[fname].prepare(*args)), args
    res = lib.time_evaluator(fname, number=1, repeat=repeat, min_repeat_ms=20)(*args)
    return min(res.results), args


def schedule_tvm(src: str, schedule):
    """TVM's IRModule after `schedule`."""
    import tvm

    mod = tvm.script.from_source(src)
    if isinstance(mod, tvm.tir.PrimFunc):
        mod = tvm.IRModule({"main": mod})
    sch = tvm.tir.Schedule(mod)
    schedule(sch)
    return sch.mod


def run_tvm(name: str, mod, side: str, repeat: int = 7, cpu_time: bool = False):
    """(best seconds per call, output arrays) of TVM's build of `mod` for `side`."""
    import tvm

    gv = mod.get_global_vars()[0]
    func = mod[gv]
    params = [
        (tuple(int(x) for x in func.buffer_map[p].shape), func.buffer_map[p].dtype)
        for p in func.params
    ]
    target = "llvm"
    if side == "tvm-host":
        target += " -mcpu=" + tvm.target.codegen.llvm_get_system_cpu()
    lib = tvm.build(mod, target=target)
    dev = tvm.cpu()
    args = [tvm.nd.array(a, dev) for a in inputs(name, params)]
    fname = (
        str(func.attrs["global_symbol"])
        if func.attrs and "global_symbol" in func.attrs
        else gv.name_hint
    )
    f = lib[fname]
    f(*args)
    outs = [a.numpy() for a in args]
    if cpu_time:
        return cpu_seconds(lambda: f(*args)), outs
    res = lib.time_evaluator(fname, dev, number=1, repeat=repeat, min_repeat_ms=20)(*args)
    return min(res.results), outs


def same_outputs(out_dir: str, name: str, a: str, b: str) -> bool:
    """Whether sides `a` and `b` saved the same outputs of case `name` (savez in out_dir)."""
    stem = Path(out_dir) / name.replace("/", "_")
    x, y = np.load(f"{stem}.{a}.npz"), np.load(f"{stem}.{b}.npz")
    return all(np.allclose(x[k], y[k], rtol=1e-3, atol=1e-3) for k in x.files)
