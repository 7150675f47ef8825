"""tir-mlir against TVM 0.21 at its best, on every schedule TVM accepts.

    python benchmarks/bench_vs_tvm.py [--rounds 3] [--filter SUBSTR] [--classic|--realistic|--unscheduled]

Cases: the classic schedules of the TVM-differential test suite (tests/differential/test_schedule_tvm_
differential.py, small programs: these times are mostly call overhead) and the realistic ones of
vs_tvm_cases.py (matmul, batch matmul, conv1d/conv2d, depthwise, elementwise, softmax with the
schedules a TVM user writes every day), and bench_unscheduled.py's programs as written. Each side runs in its own process (TVM's thread pool and
libomp spin against each other in one process): `proj` (tir-mlir), `tvm-llvm` (generic x86-64) and
`tvm-host` (`llvm -mcpu=<host>`); a round runs the three one after the other, rounds interleave,
and each case keeps its best time over rounds. TVM's time is the faster of its two builds. Outputs
are compared between the sides (same seeded inputs): a mismatch is reported, not timed.
Prints a table, `geomean` and `worst` of tir-mlir time / TVM time (< 1: tir-mlir is faster).

`--cpu-time`: on a loaded machine, compare the code rather than the machine's mood: one thread
each side, the kernel's CPU time (`time.thread_time` over a Python loop of calls, best of
repeats) instead of wall time. Microsecond kernels then include each side's Python call cost.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from vs_tvm_timing import (
    SIDES,
    run_proj,
    run_tvm,
    same_outputs,
    schedule_proj,
    schedule_tvm,
)

HERE = Path(__file__).resolve().parent


def all_cases(which="all"):
    sys.path[:0] = [
        str(HERE),
        str(HERE.parent / "tests" / "differential"),
        str(HERE.parent / "tests" / "support"),
    ]
    cases = {}
    if which in ("all", "classic"):
        from test_schedule_tvm_differential import CASES as CLASSIC

        # a case whose numerics the suite does not check (disable_predication on a non-dividing
        # split) writes past its buffers: TVM's build would corrupt the worker's heap (and
        # tir-mlir's plain build refuses it: docs/tvm_compat.md, "Run time")
        cases.update(
            {
                f"classic/{k}": v[:2]
                for k, v in sorted(CLASSIC.items())
                if (v[2:] or [{}])[0].get("numerics", True)
            }
        )
    if which in ("all", "realistic"):
        from issue28_kinds import CASES as KINDS
        from vs_tvm_cases import CASES as REALISTIC

        cases.update(REALISTIC)
        cases.update(KINDS)
    if which in ("all", "unscheduled"):
        from bench_unscheduled import CASES as UNSCHEDULED

        cases.update(
            {f"unscheduled/{title}": (text, _unscheduled) for title, text, _ in UNSCHEDULED}
        )
    return cases


def _unscheduled(sch):
    """The program as written: what `tvm.build` / `tir_mlir.build` make of it alone."""


def _measure_proj(name, src, schedule):
    return run_proj(name, schedule_proj(src, schedule), cpu_time=CPU_TIME)


CPU_TIME = os.environ.get("BENCH_VS_TVM_CPU_TIME") == "1"


def _measure_tvm(name, src, schedule, side):
    return run_tvm(name, schedule_tvm(src, schedule), side, cpu_time=CPU_TIME)


def worker(side, names, out_dir, which):
    cases = all_cases(which)
    for name in names:
        print(json.dumps({"start": name}), flush=True)
        src, schedule = cases[name]
        try:
            if side == "proj":
                seconds, outs = _measure_proj(name, src, schedule)
            else:
                seconds, outs = _measure_tvm(name, src, schedule, side)
        except Exception as e:  # noqa: BLE001 - a rejected schedule or failed build: reported
            print(json.dumps({"case": name, "error": f"{type(e).__name__}: {e}"[:300]}), flush=True)
            continue
        np.savez(Path(out_dir) / f"{name.replace('/', '_')}.{side}.npz", *outs)
        print(json.dumps({"case": name, "seconds": seconds}), flush=True)


def run_side(side, names, out_dir, which):
    """Run a worker over `names`; a worker that dies (signal) marks its case and restarts."""
    results, todo = {}, list(names)
    env = dict(os.environ)
    cores = "1" if CPU_TIME else str(os.cpu_count())
    env.setdefault("TVM_NUM_THREADS", cores)
    env.setdefault("OMP_NUM_THREADS", cores)
    while todo:
        p = subprocess.run(
            [sys.executable, __file__, "--worker", side, "--which", which, "--out", out_dir, *todo],
            capture_output=True,
            text=True,
            env=env,
        )
        started = None
        for line in p.stdout.splitlines():
            rec = json.loads(line)
            if "start" in rec:
                started = rec["start"]
            else:
                results[rec["case"]] = rec
                started = None
        if p.returncode and started is None and not results:
            raise SystemExit(f"{side} worker failed:\n{p.stderr[-3000:]}")
        if started is not None:
            results[started] = {
                "case": started,
                "error": f"worker died ({p.returncode}): "
                + p.stderr.strip().splitlines()[-1:][0][:200]
                if p.stderr.strip()
                else f"worker died ({p.returncode})",
            }
        done = set(results)
        todo = [n for n in todo if n not in done]
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--filter", default="")
    ap.add_argument(
        "--cpu-time",
        action="store_true",
        help="one thread each side, CPU time per call (for a loaded machine)",
    )
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--classic", action="store_const", dest="which", const="classic")
    group.add_argument("--realistic", action="store_const", dest="which", const="realistic")
    group.add_argument("--unscheduled", action="store_const", dest="which", const="unscheduled")
    ap.add_argument("--worker", choices=SIDES)
    ap.add_argument("--which", default="all")
    ap.add_argument("--out")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    which = args.which or "all"
    if args.cpu_time:
        global CPU_TIME
        CPU_TIME = os.environ["BENCH_VS_TVM_CPU_TIME"] = "1"
    if args.worker:
        return worker(args.worker, args.names, args.out, which)
    names = [n for n in all_cases(which) if args.filter in n]
    best = {side: {} for side in SIDES}
    load0 = os.getloadavg()[0]
    start = time.time()
    with tempfile.TemporaryDirectory() as out_dir:
        for r in range(args.rounds):
            for side in SIDES:
                for name, rec in run_side(side, names, out_dir, which).items():
                    prev = best[side].get(name)
                    if "seconds" in rec and (
                        prev is None or "seconds" not in prev or rec["seconds"] < prev["seconds"]
                    ):
                        best[side][name] = rec
                    elif prev is None:
                        best[side][name] = rec
            print(
                f"round {r + 1}/{args.rounds} done ({time.time() - start:.0f} s)", file=sys.stderr
            )
        rows, ratios = [], []
        for name in names:
            ours = best["proj"].get(name, {})
            tvms = [
                (best[s][name]["seconds"], s)
                for s in ("tvm-llvm", "tvm-host")
                if "seconds" in best[s].get(name, {})
            ]
            if not tvms:
                continue  # TVM rejects the schedule or cannot build it for the CPU
            t_tvm, which_tvm = min(tvms)
            if "seconds" not in ours:
                rows.append((name, "ERROR " + ours.get("error", "?")[:60], t_tvm, which_tvm, None))
                continue
            if not same_outputs(out_dir, name, "proj", which_tvm):
                rows.append((name, "MISMATCH", t_tvm, which_tvm, None))
                continue
            ratio = ours["seconds"] / t_tvm
            ratios.append(ratio)
            rows.append((name, ours["seconds"], t_tvm, which_tvm, ratio))
    mode = "1 thread, CPU time per call" if CPU_TIME else f"{os.cpu_count()} threads, wall time"
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M')} UTC, {os.cpu_count()} cores, load average "
        f"{load0:.2f} -> {os.getloadavg()[0]:.2f}, best of {args.rounds} rounds, {mode}"
    )
    print("| case | tir-mlir ms | TVM ms | TVM build | ratio |\n| --- | --- | --- | --- | --- |")
    for name, ours, t_tvm, which_tvm, ratio in rows:
        o = f"{ours * 1e3:.4f}" if isinstance(ours, float) else ours
        r = f"{ratio:.2f}" if ratio is not None else "-"
        print(f"| {name} | {o} | {t_tvm * 1e3:.4f} | {which_tvm} | {r} |")
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        worst = max(zip(ratios, [r[0] for r in rows if r[4] is not None]))
        print(f"\ngeomean {geo:.3f}  worst {worst[0]:.2f} ({worst[1]})  over {len(ratios)} cases")
    bad = [r[0] for r in rows if r[4] is None]
    if bad:
        print(f"not compared (error or mismatch): {', '.join(bad)}")


if __name__ == "__main__":
    main()
