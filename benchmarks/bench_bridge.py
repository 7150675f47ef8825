"""The linalg bridge end to end: PyTorch models exported by torch-mlir (the recorded
tests/data/linalg/*.mlir), imported with `tir_mlir.from_linalg` and timed four ways, 2 threads
each:

    python benchmarks/bench_bridge.py [--trials 32] [--only mlp,conv_relu] [--threads 2]

- import: the imported function unscheduled (tir-mlir's lowering, no schedule);
- tuned: the meta schedule over the imported function (`tune_tir`, `--trials` candidates;
  the default is a quick look, a real comparison wants 256 or more), then `compile_tir`;
- torch: the model in eager mode (`torch.set_num_threads`), when torch is installed;
- iree: IREE's llvm-cpu backend on the same linalg text (`iree-base-compiler` and
  `iree-base-runtime`), when installed.
Every result is checked against torch's recorded outputs before it is timed. Every model is
tuned first; then `--rounds` rounds each time torch, IREE and both tir-mlir programs of every
model, one after the other, and each reports the best (minimum) over rounds of the best of 5
repeats of at least 100 ms of calls: on a shared, loaded machine the minimum is the time the
code takes when it gets the cores, and interleaving gives every side the same load. torch
and IREE run in child processes (IREE's compiler cannot load beside tir_mlir's MLIR
bindings, and tir-mlir's idle OpenMP threads would spin on the cores they use). The header
line gives the date, the CPU and the load average before and after.
"""

import argparse
import datetime
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "linalg"
MODELS = ("mlp", "layernorm", "conv_relu", "attention", "transformer_block", "small_cnn")


def best_secs(fn, repeat=5, min_ms=100):
    fn()
    times = []
    for _ in range(repeat):
        n, start = 0, time.perf_counter()
        while n == 0 or (time.perf_counter() - start) * 1e3 < min_ms:
            fn()
            n += 1
        times.append((time.perf_counter() - start) / n)
    return min(times)


def machine() -> str:
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} cores"


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def header() -> str:
    """The date, the CPU and the load average, for a table's first line."""
    return (
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"{machine()}, load {load()}"
    )


def load_model(name):
    """(linalg text, inputs, torch's recorded outputs, weights) of a recorded model."""
    data = dict(np.load(DATA / f"{name}.npz"))
    count = sum(k.startswith("in") for k in data)
    return (
        (DATA / f"{name}.mlir").read_text(),
        [data[f"in{i}"] for i in range(count)],
        [data[k] for k in sorted(data) if k.startswith("out")],
        {k[2:]: v for k, v in data.items() if k.startswith("w.")},
    )


def imported(name):
    """(the recorded model imported with `tir_mlir.from_linalg`, its inputs, torch's outputs)."""
    import tir_mlir

    text, inputs, expected, _ = load_model(name)
    return tir_mlir.from_linalg(text, str(DATA / f"{name}.mlir")), inputs, expected


def check(outs, expected, what):
    for o, e in zip(outs, expected):
        np.testing.assert_allclose(o, e, rtol=1e-3, atol=1e-4, err_msg=what)


def tir_timer(mod, inputs, expected, what):
    """A function timing the built program (checked first)."""
    import tir_mlir

    lib = tir_mlir.build(mod)
    outs = [np.zeros_like(e) for e in expected]
    lib["main"](*inputs, *outs)
    check(outs, expected, what)
    return lambda: best_secs(lambda: lib["main"](*inputs, *outs))


def tuned(mod, trials, threads):
    import tir_mlir.meta_schedule as ms

    target = f"llvm -num-cores={threads}"
    with tempfile.TemporaryDirectory() as work:
        db = ms.tune_tir(
            mod, target, work, max_trials_global=trials, num_trials_per_iter=min(64, trials), seed=0
        )
        sch = ms.tir_integration.compile_tir(db, mod, target)
    return None if sch is None else sch.mod


def time_torch(name, inputs, weights, expected, threads):
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    spec = importlib.util.spec_from_file_location("linalg_regenerate", DATA / "regenerate.py")
    regen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(regen)
    torch.set_num_threads(threads)
    model, _ = regen.models()[name]
    model.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
    model.eval()
    args = [torch.from_numpy(a) for a in inputs]
    with torch.no_grad():
        check([model(*args).numpy()], expected, "torch")
        return best_secs(lambda: model(*args))


# IREE's compiler carries its own MLIR Python bindings, which cannot load in a process that
# loaded upstream's (tir_mlir's): it compiles in a child process.
_IREE_COMPILE = """
import sys
import iree.compiler as ic
sys.stdout.buffer.write(ic.compile_str(sys.stdin.read(), target_backends=["llvm-cpu"],
                                       extra_args=["--iree-llvmcpu-target-cpu=host"]))
"""


def time_iree(text, inputs, expected, threads):
    try:
        import iree.runtime as rt
    except ImportError:
        return "iree-base-compiler / iree-base-runtime are not installed"
    proc = subprocess.run(
        [sys.executable, "-c", _IREE_COMPILE], input=text.encode(), capture_output=True, check=False
    )
    if proc.returncode:
        return f"iree compile failed: {proc.stderr.decode()[-300:]}"
    vmfb = proc.stdout
    rt.flags.parse_flags(f"--task_topology_max_group_count={threads}")
    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    main = ctx.modules.module["main"]
    out = main(*inputs)
    check(
        [np.asarray(o) for o in (out if isinstance(out, (list, tuple)) else [out])],
        expected,
        "iree",
    )
    return best_secs(lambda: main(*inputs))


def fmt(t) -> str:
    return f"{t * 1e6:10.1f}" if isinstance(t, float) else f"{'-':>10}"


def worker(kind, names, threads):
    """Time torch or IREE on each model in this process, which never loads tir_mlir: its
    OpenMP threads keep spinning after each parallel call and would take the cores."""
    out = {}
    for name in names:
        text, inputs, expected, weights = load_model(name)
        out[name] = (
            time_torch(name, inputs, weights, expected, threads)
            if kind == "torch"
            else time_iree(text, inputs, expected, threads)
        )
    print(json.dumps(out))


def child_results(what, names, args) -> dict:
    """Run python `args` in a child process whose last line of output is a JSON object: that
    object (model name -> result), or for every name why the child failed."""
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=False)
    if proc.returncode:
        return dict.fromkeys(names, f"{what} failed: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def others(kind, names, threads) -> dict:
    """Time torch or IREE on each model in a child process (`worker`)."""
    args = [__file__, "--worker", kind, "--only", ",".join(names), "--threads", str(threads)]
    return child_results(kind, names, args)


def keep_faster(row: dict, column: str, t) -> None:
    """row[column] becomes `t` (seconds, or why there is no time) unless it holds a faster time."""
    old = row.get(column)
    row[column] = t if not isinstance(old, float) or isinstance(t, float) and t < old else old


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default=",".join(MODELS), help="models, comma-separated")
    p.add_argument(
        "--trials", type=int, default=32, help="meta schedule candidates per model (0: skip tuning)"
    )
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds")
    p.add_argument("--worker", choices=["torch", "iree"], help=argparse.SUPPRESS)
    a = p.parse_args()
    names = a.only.split(",")
    if a.worker:
        return worker(a.worker, names, a.threads)
    started = header()
    os.environ["TVM_NUM_THREADS"] = str(a.threads)  # tir-mlir's OpenMP thread count
    rows = {name: {} for name in names}
    timers, notes = {}, []
    for name in names:
        mod, inputs, expected = imported(name)
        timers[name, "import"] = tir_timer(mod, inputs, expected, f"{name} imported")
        if a.trials:
            start = time.perf_counter()
            best = tuned(mod, a.trials, a.threads)
            notes.append(f"{name}: tuned {a.trials} trials in {time.perf_counter() - start:.0f} s")
            if best is not None:
                timers[name, "tuned"] = tir_timer(best, inputs, expected, f"{name} tuned")
    for _ in range(a.rounds):
        for kind in ("torch", "iree"):
            for name, t in others(kind, names, a.threads).items():
                keep_faster(rows[name], kind, t)
        for (name, kind), timer in timers.items():
            rows[name][kind] = min(rows[name].get(kind, float("inf")), timer())
    notes += [
        f"{c} skipped: {t}" for row in rows.values() for c, t in row.items() if isinstance(t, str)
    ]
    print(f"{started} -> {load()}")
    print(
        f"{a.threads} threads, {a.trials} tuning trials, best of {a.rounds} interleaved "
        f"rounds; microseconds per call"
    )
    print(f"{'model':<18}{'import':>10}{'tuned':>10}{'torch':>10}{'iree':>10}")
    for name in names:
        print(
            f"{name:<18}"
            + "".join(fmt(rows[name].get(c)) for c in ("import", "tuned", "torch", "iree"))
        )
    for n in dict.fromkeys(notes):
        print(n, file=sys.stderr)


if __name__ == "__main__":
    main()
