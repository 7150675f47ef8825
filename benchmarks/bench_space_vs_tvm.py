"""Code generation on the schedules the tuner explores: candidates sampled from tir-mlir's design
space (the default CPU rules, postprocessors applied) run under tir-mlir and under TVM 0.21 (the
same printed TensorIR parsed by `tvm.script`, built for generic `llvm` and for the host CPU, the
faster kept), each side in its own process.

    python benchmarks/bench_space_vs_tvm.py [--workload matmul512|matmul1024|conv2d|softmax]
                                            [--samples 16] [--seed 1] [--threads 1]

`--threads 1` (the default) times single-threaded code: ratios that hold on a loaded machine.
Printed per candidate: milliseconds on each side and tir-mlir / TVM; then geomean and worst.
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from programs import (  # noqa: E402
    conv2d_tvmscript,
    matmul_tvmscript,
    softmax_tvmscript,
    tvm_target,
)

WORKLOADS = {
    "matmul512": lambda: matmul_tvmscript(512),
    "matmul1024": lambda: matmul_tvmscript(1024),
    "conv2d": lambda: conv2d_tvmscript(1, 64, 56, 64, 3),
    "softmax": lambda: softmax_tvmscript(256, 1024),
}


def _best_secs(fn, args, repeat=5, min_secs=0.05):
    best = math.inf
    for _ in range(repeat):
        n, start = 0, time.perf_counter()
        while n == 0 or time.perf_counter() - start < min_secs:
            fn(*args)
            n += 1
        best = min(best, (time.perf_counter() - start) / n)
    return best


def sample(workload, samples, seed, folder):
    """Write `samples` candidates' TVMScript into `folder` (0.py, 1.py, ...)."""
    import tir_mlir
    from tir_mlir.meta_schedule.tune_context import TuneContext

    mod = tir_mlir.parse(WORKLOADS[workload]())
    ctx = TuneContext(mod, "llvm", search_strategy="replay-trace", rand_state=seed)
    spaces = ctx.generate_design_space()
    ctx.search_strategy.pre_tuning(samples, samples, spaces)
    k = tries = 0
    while k < samples and tries < 20 * samples:
        cand = ctx.search_strategy.sample(spaces[tries % len(spaces)].trace)
        tries += 1
        if cand is not None:
            (Path(folder) / f"{k}.py").write_text(cand.mod.script())
            k += 1
    return k


def _files(folder):
    return sorted(Path(folder).glob("*.py"), key=lambda p: int(p.stem))


def time_ours(folder):
    import tir_mlir
    from tir_mlir.runtime import aligned

    out = {}
    for path in _files(folder):
        mod = tir_mlir.parse(path.read_text())
        lib = tir_mlir.build(mod)
        name = next(iter(lib.sigs))
        fn = lib[name]
        # 64-byte aligned, as TVM's NDArrays are (numpy's 16-byte alignment splits every
        # vector load across two cache lines: up to 2x on a matmul tile)
        args = [aligned.copy(np.random.rand(*p.shape).astype(p.dtype)) for p in fn.params]
        out[path.stem] = _best_secs(fn.prepare(*args), ())
    return out


def time_tvm(folder):
    import tvm

    out = {}
    for path in _files(folder):
        text = path.read_text()
        name = re.search(r"def (\w+)\(", text).group(1)
        func = tvm.script.from_source(text)
        mod = tvm.IRModule({name: func.with_attr("global_symbol", name)})
        args = [
            tvm.nd.array(
                np.random.rand(*[int(x) for x in func.buffer_map[v].shape]).astype(
                    func.buffer_map[v].dtype
                )
            )
            for v in func.params
        ]
        best = math.inf
        for target in ("llvm", tvm_target()):
            lib = tvm.compile(mod, target=target)
            best = min(best, _best_secs(lib[name], args))
        out[path.stem] = best
    return out


def _side(which, folder, threads):
    env = {**os.environ, "TVM_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
    proc = subprocess.run(
        [sys.executable, __file__, "--side", which, "--folder", folder],
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode:
        raise SystemExit(f"{which} side failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", default="matmul512", choices=sorted(WORKLOADS))
    ap.add_argument("--samples", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--side", help=argparse.SUPPRESS)
    ap.add_argument("--folder", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.side:
        print(json.dumps((time_ours if a.side == "ours" else time_tvm)(a.folder)))
        return
    print(
        f"{a.workload}: {a.samples} candidates (seed {a.seed}), {a.threads} thread(s), "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    with tempfile.TemporaryDirectory() as folder:
        n = sample(a.workload, a.samples, a.seed, folder)
        ours, theirs = _side("ours", folder, a.threads), _side("tvm", folder, a.threads)
    ratios = []
    print(f"{'candidate':>9} {'tir-mlir ms':>12} {'TVM ms':>9} {'ratio':>7}")
    for k in map(str, range(n)):
        ratios.append(ours[k] / theirs[k])
        print(f"{k:>9} {ours[k] * 1e3:12.3f} {theirs[k] * 1e3:9.3f} {ratios[-1]:7.2f}")
    print(
        f"geomean {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}  "
        f"worst {max(ratios):.2f}  best candidate: tir-mlir {min(ours.values()) * 1e3:.3f} ms, "
        f"TVM {min(theirs.values()) * 1e3:.3f} ms"
    )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
