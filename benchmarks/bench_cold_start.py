"""Cold start: a fresh process parses, schedules and builds the hand-scheduled 1024 matmul
(the program and schedule of `schedules/hand_mm.py`), once
with tir-mlir and once with TVM 0.21's `tvm.build` (when installed), each in its own process.

    python benchmarks/bench_cold_start.py [--runs 5]

tir-mlir runs three ways: `cold` (an empty cache folder: the parser tables are built and the
kernel compiled), `tables` (parser tables cached, kernel compiled: a new program in a new
process) and `warm` (the kernel's shared object cached too: a rebuild in a new process).
Medians of --runs processes (and the best `total`: import + parse + schedule + build), wall
seconds (and CPU seconds, the tools run included: less noisy
on a loaded machine); `import` is the import of the package alone. Children
run with byte-code caching on (PYTHONDONTWRITEBYTECODE unset), as an installed package would."""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _cpu():
    """CPU seconds of this process and of the tools it ran (less noisy than wall time on a
    loaded machine)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def child(which):
    c0, t0 = _cpu(), time.perf_counter()
    sys.path.insert(0, str(HERE / "schedules"))
    import hand_mm

    if which == "tvm":
        import tvm
    else:
        import tir_mlir
    c1, t1 = _cpu(), time.perf_counter()
    if which == "tvm":
        mod = tvm.script.from_source(hand_mm.TEXT)
        sch = tvm.tir.Schedule(mod)
        hand_mm.schedule(sch)
        t2 = time.perf_counter()
        tvm.build(sch.mod, target=f"llvm -mcpu={tvm.target.codegen.llvm_get_system_cpu()}")
    else:
        sch = tir_mlir.Schedule(tir_mlir.parse(hand_mm.TEXT))
        hand_mm.schedule(sch)
        t2 = time.perf_counter()
        tir_mlir.build(sch.mod, target="llvm")
    c3, t3 = _cpu(), time.perf_counter()
    print(
        json.dumps(
            {
                "import": t1 - t0,
                "parse+schedule": t2 - t1,
                "build": t3 - t2,
                "after import": t3 - t1,
                "total": t3 - t0,
                "CPU import": c1 - c0,
                "CPU after import": c3 - c1,
            }
        )
    )


def run(which, env):
    out = subprocess.run(
        [sys.executable, __file__, "--child", which], env=env, capture_output=True, text=True
    )
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        return child(args.child)
    print("load average:", os.getloadavg())
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("TIR_MLIR_CACHE", "PYTHONDONTWRITEBYTECODE")
    }
    rows = {}
    cache = Path(tempfile.mkdtemp(prefix="tir-mlir-bench-"))
    try:
        env = {**base, "TIR_MLIR_CACHE_DIR": str(cache)}
        for _ in range(args.runs):
            for entry in cache.iterdir():
                entry.unlink()
            rows.setdefault("tir-mlir cold", []).append(run("proj", env))
            for so in cache.glob("*.so"):
                so.unlink()
            rows.setdefault("tir-mlir tables", []).append(run("proj", env))
            rows.setdefault("tir-mlir warm", []).append(run("proj", env))
            try:
                rows.setdefault("TVM 0.21", []).append(run("tvm", base))
            except SystemExit as e:
                if "No module named 'tvm'" not in str(e):
                    raise
                rows.pop("TVM 0.21", None)
    finally:
        shutil.rmtree(cache)
    keys = [
        "import",
        "parse+schedule",
        "build",
        "after import",
        "total",
        "CPU import",
        "CPU after import",
    ]
    print(f"{'':16}" + "".join(f"{k:>17}" for k in keys) + f"{'best total':>17}")
    for name, runs in rows.items():
        print(
            f"{name:16}"
            + "".join(f"{statistics.median(r[k] for r in runs):17.3f}" for k in keys)
            + f"{min(r['total'] for r in runs):17.3f}"
        )
    print("load average:", os.getloadavg())


if __name__ == "__main__":
    main()
