"""What runs inside a measuring process: load an artifact, check its outputs against the
reference, time it. Shared by the local and the distributed runners."""

import os
import time

import numpy as np

from tir_mlir.errors import RuntimeCallError
from tir_mlir.runtime import aligned

_FLUSH_BYTES = 64 << 20  # larger than the last-level cache of the machines we time on
_flush_buffer = None
# what a first call may spend once (starting the thread pool, binding symbols): a candidate
# whose first call is slow by less is called a second time before it is judged slow
_ONE_TIME_SECS = 0.01


class WrongResult(Exception):
    """A candidate's outputs differ from the unscheduled program's."""


def pick_function(lib, func_name=None) -> str:
    if func_name is not None:
        return func_name
    if "main" in lib.sigs or len(lib.sigs) != 1:
        return "main"
    return next(iter(lib.sigs))


def run_artifact(
    path: str,
    args_info_json,
    func_name,
    config: dict,
    reference,
    cooldown_sec=0.0,
    affinity=None,
    slow_secs=None,
):
    """Measure the artifact at `path`: a list of seconds per call, one per repeat; a
    candidate slower than `slow_secs` is timed by its first call alone (by the faster of
    its first two when the first may have been slow for one-time costs)."""
    from tir_mlir.runtime.build import load_module
    from tir_mlir.runtime.run_program import first_mismatch, random_array
    from tir_mlir.runtime.signature import Param
    from tir_mlir.runtime.timer import time_calls

    if affinity:
        os.sched_setaffinity(0, affinity)
    lib = load_module(path)
    fn = lib[pick_function(lib, func_name)]
    params = [p for p in fn.params if p.kind != "var"]  # (the call derives the vars)
    if args_info_json is not None:
        expect = [(str(a[1]), tuple(a[2])) for a in args_info_json]
        have = [(p.dtype, tuple(p.shape)) for p in params]
        if expect != have:
            raise RuntimeCallError(f"{fn.name}: the artifact takes {have}, args_info says {expect}")
    if reference is not None:
        with np.load(reference) as ref:
            inputs = [ref[f"in{k}"] for k in range(len(params))]
            want = [ref[f"out{k}"] for k in range(len(params))]
        got = [aligned.copy(a) if p.kind == "buffer" else a.item() for p, a in zip(params, inputs)]
        start = time.perf_counter()
        fn(*got)
        first = time.perf_counter() - start
        buffers = [k for k, p in enumerate(params) if p.kind == "buffer"]
        bad = first_mismatch(
            [Param(params[k].name, params[k].shape, params[k].dtype) for k in buffers],
            [got[k] for k in buffers],
            [want[k] for k in buffers],
        )
        if bad:
            raise WrongResult(
                f"buffer {bad[0]!r} differs from the unscheduled program's (error {bad[1]})"
            )
        arrays = got
    else:
        rng = np.random.default_rng(0)
        arrays = [random_array(p.shape, p.dtype, rng) for p in params]
    if cooldown_sec:
        time.sleep(cooldown_sec)
    call = fn.prepare(*arrays)
    if (
        reference is not None
        and slow_secs is not None
        and first > max(2 * slow_secs, slow_secs + _ONE_TIME_SECS)
    ):
        return [first]  # slow beyond doubt: no second call
    start = time.perf_counter()
    call()  # warm-up
    warm = time.perf_counter() - start
    if slow_secs is not None and warm > slow_secs:
        return [min(first, warm) if reference is not None else warm]
    secs = []
    for _ in range(max(1, config["repeat"])):
        if config["enable_cpu_cache_flush"]:
            _flush_caches()
        res = time_calls(call, config["number"], 1, config["min_repeat_ms"], warmup=False)
        secs.append(res.results[0])
    return secs


def _flush_caches():
    global _flush_buffer
    if _flush_buffer is None:
        _flush_buffer = np.zeros(_FLUSH_BYTES // 8)
    _flush_buffer += 1.0


def write_reference(mlir_text: str, func_name, seed: int, path: str, size=None) -> str:
    """Build the unscheduled program, run it on random inputs, save inputs and outputs, and
    the time of one more call (`baseline_sec`: the unscheduled time tuning starts from).
    `size`: the values of a symbolic function's sizes ({"n": 128}) the inputs have."""
    from tir_mlir.module import module_from_mlir
    from tir_mlir.runtime.build import build
    from tir_mlir.runtime.run_program import random_array
    from tir_mlir.analysis.size_exprs import evaluate

    lib = build(module_from_mlir(mlir_text), target="llvm")
    fn = lib[pick_function(lib, func_name)]
    rng = np.random.default_rng(seed)
    env = dict(size or {})

    def make(p):
        if p.kind == "buffer":
            return random_array(tuple(evaluate(s, env) for s in p.shape), p.dtype, rng)
        if p.kind == "index":
            return np.array(env[p.name])
        return random_array((), p.dtype, rng)  # a scalar parameter

    explicit = [p for p in fn.params if p.kind != "var"]
    inputs = [make(p) for p in explicit]
    outputs = [a.copy() for a in inputs]

    def args(arrays):  # (scalar parameters are passed as Python numbers)
        return [a if p.kind == "buffer" else a.item() for p, a in zip(explicit, arrays)]

    fn(*args(outputs))
    arrays = {f"in{k}": a for k, a in enumerate(inputs)}
    arrays.update({f"out{k}": a for k, a in enumerate(outputs)})
    timed = lib.time_evaluator(fn.name, number=1, repeat=1)(*args([a.copy() for a in inputs]))
    arrays["baseline_sec"] = np.array(timed.median)
    tmp = path + ".tmp.npz"
    # (pyright matches a ** dict against savez's allow_pickle too; no key here is that name)
    np.savez(tmp, **arrays)  # pyright: ignore[reportArgumentType]
    os.replace(tmp, path)
    return path
