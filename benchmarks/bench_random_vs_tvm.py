"""tir-mlir against TVM 0.21 at its best on random everyday schedules: a differential nobody curated.

    python benchmarks/bench_random_vs_tvm.py [--count 200] [--seed S] [--repeat 3] [--block 50]
        [--retime-above 1.0] [--cases 3,17] [--workloads matmul512_f32,...] [--timeout 300] [--worst 20] [--cpu-time]

Each case is a workload of tests/support/schedule_everyday.py's corpus (matmul in several shapes and
dtypes, batch matmul, conv1d, conv2d NCHW/NHWC, depthwise, pooling, softmax, layernorm, GELU/SiLU
activations, transpose, reductions, int8 dot products) with a schedule drawn by its generator
(split, reorder, fuse, parallel, vectorize, unroll, compute_at/reverse_compute_at,
compute_inline, cache_read/cache_write, storage_align, decompose_reduction, rfactor), as Python
code run unchanged by `tvm.tir.Schedule` and `tir_mlir.Schedule`. The seed changes from run to
run (printed; `--seed` replays a run, `--cases` some of its cases).

Each side runs in its own worker processes (bench_vs_tvm.py's sides: tir-mlir, TVM for generic
x86-64, TVM for `-mcpu=<host>`, the faster TVM build kept; TVM_NUM_THREADS = cores); a round runs
the cases in blocks of `--block`, the three sides one after the other on each block (the first
side rotates from round to round), so that a slow spell of the machine (minutes long on a shared
host) falls on both sides' times of a case alike; each case keeps its best time over rounds.
`--retime-above R` times rounds after the first only for the cases whose first-round ratio is
above R (both sides again): the tail's noise goes for a fraction of the time; a case below R
would need its sides' noise to move its ratio from R to the tail's bound to be missed. Outputs are compared (same seeded inputs): a mismatch is listed, not timed. A schedule
one side refuses is counted and listed apart (refused by TVM only / by us only), not timed.

Prints the CPU, the load average, the distribution of tir-mlir time / TVM time (p50, p90, p99,
max, geomean; < 1: tir-mlir faster) and the `--worst` cases with their schedule code.
"""

import argparse
import json
import math
import os
import queue
import random
import subprocess
import sys
import tempfile
import threading
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
sys.path.insert(0, str(HERE.parent / "tests" / "support"))
from schedule_everyday import draw, schedule_fn, workloads  # noqa: E402 (from tests/support/)


def cases(seed: int, count: int, only=()) -> dict:
    """name -> (workload name, schedule code) of the run with this seed."""
    corpus = workloads()
    names = sorted(n for n in corpus if not only or n in only)
    rng = random.Random(seed)
    out = {}
    for i in range(count):
        workload, case_seed = rng.choice(names), rng.getrandbits(32)
        out[f"{i:04d}_{workload}"] = (workload, draw(corpus[workload], case_seed))
    return out


def worker(
    side: str, seed: int, count: int, only, names, out_dir: str, repeat: int, cpu_time: bool
):
    corpus = workloads()
    all_cases = cases(seed, count, only)
    for name in names:
        print(json.dumps({"start": name}), flush=True)
        workload, code = all_cases[name]
        src = corpus[workload]
        try:
            fn = schedule_fn(code)
            mod = schedule_proj(src, fn) if side == "proj" else schedule_tvm(src, fn)
        except Exception as e:  # noqa: BLE001 - the side refuses the schedule: counted
            print(
                json.dumps({"case": name, "refused": f"{type(e).__name__}: {e}"[:300]}), flush=True
            )
            continue
        try:
            if side == "proj":
                seconds, outs = run_proj(name, mod, repeat, cpu_time)
            else:
                seconds, outs = run_tvm(name, mod, side, repeat, cpu_time)
        except Exception as e:  # noqa: BLE001 - a failed build or run: listed
            print(json.dumps({"case": name, "error": f"{type(e).__name__}: {e}"[:300]}), flush=True)
            continue
        np.savez(Path(out_dir) / f"{name}.{side}.npz", *outs)
        print(json.dumps({"case": name, "seconds": seconds}), flush=True)


def run_side(side: str, names, args, out_dir: str) -> dict:
    """Results of workers over `names`; a case that kills its worker or runs past the time
    limit is marked so, and a new worker goes on with the rest."""
    results: dict = {}
    env = dict(os.environ)
    cores = "1" if args.cpu_time else str(os.cpu_count())
    env.setdefault("TVM_NUM_THREADS", cores)
    env.setdefault("OMP_NUM_THREADS", cores)
    todo = list(names)
    while todo:
        cmd = [
            sys.executable,
            __file__,
            "--worker",
            side,
            "--seed",
            str(args.seed),
            "--count",
            str(args.count),
            "--workloads",
            args.workloads,
            "--out",
            out_dir,
            "--evals",
            str(args.evals),
            *(["--cpu-time"] if args.cpu_time else []),
            *todo,
        ]
        _run_worker(cmd, env, args.timeout, todo, results)
        todo = [n for n in todo if n not in results]
    return results


def _pump(stream, lines: queue.Queue):
    for line in stream:
        lines.put(line)
    lines.put(None)


def _run_worker(cmd, env, timeout: float, todo, results: dict):
    """One worker process over `todo`, its records added to `results`."""
    # stderr to a file: a worker that writes much there must not block on a full pipe
    with tempfile.TemporaryFile("w+") as stderr:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True).start()
        started, done_before = None, len(results)
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                proc.kill()
                stuck = started or next(n for n in todo if n not in results)
                results[stuck] = {"error": f"over {timeout:.0f} s"}
                started = None
                break
            if line is None:
                break
            rec = json.loads(line)
            if "start" in rec:
                started = rec["start"]
            else:
                results[rec.pop("case")] = rec
                started = None
        proc.wait()
        stderr.seek(0)
        err = stderr.read()
    if started is not None:
        last = err.strip().splitlines()[-1:]
        results[started] = {
            "error": f"worker died ({proc.returncode}) " + (last[0][:200] if last else "")
        }
    elif proc.returncode and len(results) == done_before:
        raise SystemExit(f"worker failed: {' '.join(cmd[:4])}\n{err[-3000:]}")


def write_table(path: str, rows, all_cases) -> None:
    """One line per timed case, worst first, for analysis beyond the summary."""
    with open(path, "w") as f:
        f.write("case\tworkload\tratio\ttir_mlir_ms\ttvm_ms\ttvm_side\tprimitives\n")
        for ratio, name, ours, t_tvm, side in rows:
            workload, code = all_cases[name]
            f.write(
                f"{name}\t{workload}\t{ratio:.3f}\t{ours * 1e3:.4f}\t{t_tvm * 1e3:.4f}\t{side}"
                f"\t{primitives(code)}\n"
            )


def print_by_workload(rows, all_cases) -> None:
    """Median and worst ratio per workload: where the distribution's middle comes from."""
    by: dict = {}
    for ratio, name, *_ in rows:
        by.setdefault(all_cases[name][0], []).append(ratio)
    print("\n## by workload (cases, p50, max)")
    for workload, ratios in sorted(by.items(), key=lambda kv: -float(np.median(kv[1]))):
        print(f"{workload:32s} {len(ratios):4d}  {np.median(ratios):5.2f}  {max(ratios):5.2f}")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def primitives(code: str) -> str:
    """The primitive sequence of a schedule, for a one-line summary."""
    steps = []
    for line in code.splitlines():
        name = line.partition("sch.")[2].partition("(")[0]
        if name and name not in ("get_block", "get_loops"):
            steps.append(name)
    return " ".join(steps) or "(handles only)"


def main():
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=None, help="replay a run (default: a new seed)")
    ap.add_argument("--cases", default="", help="comma-separated case numbers of the run")
    ap.add_argument("--workloads", default="", help="comma-separated workload names (default all)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds; each case keeps its best")
    ap.add_argument("--evals", type=int, default=5, help="timed calls (of >= 20 ms) per round")
    ap.add_argument(
        "--retime-above",
        type=float,
        default=0.0,
        help="rounds after the first time only the cases whose first-round ratio exceeds this "
        "(both sides; the tail's noise without the cost of re-timing every case)",
    )
    ap.add_argument(
        "--block", type=int, default=50, help="cases each side times before the next side's turn"
    )
    ap.add_argument("--timeout", type=float, default=300, help="seconds per case and side")
    ap.add_argument("--worst", type=int, default=20)
    ap.add_argument(
        "--cpu-time",
        action="store_true",
        help="one thread each side, CPU time per call (for a loaded machine)",
    )
    ap.add_argument("--worker", choices=SIDES)
    ap.add_argument("--out")
    ap.add_argument(
        "--table", help="also write every timed case (ratio, times, primitives) to this TSV file"
    )
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 31)
    only = tuple(w for w in args.workloads.split(",") if w)
    unknown = set(only) - set(workloads())
    if unknown:
        raise SystemExit(
            f"unknown workloads: {', '.join(sorted(unknown))}; known: "
            f"{', '.join(sorted(workloads()))}"
        )
    if args.worker:
        return worker(
            args.worker,
            args.seed,
            args.count,
            only,
            args.names,
            args.out,
            args.evals,
            args.cpu_time,
        )
    all_cases = cases(args.seed, args.count, only)
    picked = {int(c) for c in args.cases.split(",") if c}
    names = [n for n in all_cases if not picked or int(n[:4]) in picked]
    best: dict = {side: {} for side in SIDES}
    load0, start = os.getloadavg(), time.time()
    with tempfile.TemporaryDirectory() as out_dir:
        for r in range(args.repeat):
            order = SIDES[r % 3 :] + SIDES[: r % 3]
            if r == 1:
                timing = [n for n in names if _ratio(best, n) > args.retime_above]
                print(f"re-timing {len(timing)} cases", file=sys.stderr)
            elif r == 0:
                timing = names
            for at in range(0, len(timing), max(1, args.block)):
                block = timing[at : at + max(1, args.block)]
                for side in order:
                    # later rounds time only what both sides ran in the first
                    todo = [
                        n
                        for n in block
                        if r == 0 or _timed_by_both(best, n) and "seconds" in best[side].get(n, {})
                    ]
                    for name, rec in run_side(side, todo, args, out_dir).items():
                        prev = best[side].get(name)
                        if prev is None or ("seconds" in rec and rec["seconds"] < prev["seconds"]):
                            best[side][name] = rec
            print(
                f"round {r + 1}/{args.repeat} done ({time.time() - start:.0f} s)", file=sys.stderr
            )
        report(args, all_cases, names, best, out_dir, load0)


def _ratio(best: dict, name: str) -> float:
    """Our best time over TVM's best side's; 0 where a side has no time."""
    if not _timed_by_both(best, name):
        return 0.0
    tvm = min(
        best[s][name]["seconds"]
        for s in ("tvm-llvm", "tvm-host")
        if "seconds" in best[s].get(name, {})
    )
    return best["proj"][name]["seconds"] / tvm


def _timed_by_both(best: dict, name: str) -> bool:
    return "seconds" in best["proj"].get(name, {}) and any(
        "seconds" in best[s].get(name, {}) for s in ("tvm-llvm", "tvm-host")
    )


def report(args, all_cases, names, best, out_dir, load0):
    rows, ratios = [], []
    refused_tvm, refused_ours, refused_both, failed, mismatched = [], [], [], [], []
    for name in names:
        ours = best["proj"].get(name, {})
        tvms = {s: best[s].get(name, {}) for s in ("tvm-llvm", "tvm-host")}
        tvm_refused = all("refused" in t for t in tvms.values())
        if "refused" in ours or tvm_refused:
            if "refused" in ours and tvm_refused:
                refused_both.append(name)
            elif tvm_refused:
                refused_tvm.append((name, tvms["tvm-llvm"]["refused"]))
            else:
                refused_ours.append((name, ours["refused"]))
            continue
        timed = [(t["seconds"], s) for s, t in tvms.items() if "seconds" in t]
        if "seconds" not in ours or not timed:
            why = ours.get("error") or "; ".join(
                f"{s}: {t.get('error', '?')}" for s, t in tvms.items()
            )
            failed.append((name, ("tir-mlir: " if "error" in ours else "TVM: ") + why))
            continue
        t_tvm, side = min(timed)
        if not same_outputs(out_dir, name, "proj", side):
            mismatched.append(name)
            continue
        ratio = ours["seconds"] / t_tvm
        ratios.append(ratio)
        rows.append((ratio, name, ours["seconds"], t_tvm, side))
    threads = (
        "1 thread, CPU time per call"
        if args.cpu_time
        else f"TVM_NUM_THREADS={os.environ.get('TVM_NUM_THREADS', os.cpu_count())}, wall time"
    )
    load1 = os.getloadavg()
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, {cpu_model()}, "
        f"{os.cpu_count()} cores, load average {load0[0]:.2f} -> {load1[0]:.2f} "
        f"(1/5/15 min at the end: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f})"
    )
    print(
        f"# seed {args.seed}, {len(names)} cases, best of {args.repeat} rounds of "
        f"{args.evals} calls"
        + (f" (rounds 2+ for ratios > {args.retime_above} only)" if args.retime_above else "")
        + f", {threads}"
    )
    print(
        f"timed {len(ratios)}, refused by TVM only {len(refused_tvm)}, by tir-mlir only "
        f"{len(refused_ours)}, by both {len(refused_both)}, build/run failed {len(failed)}, "
        f"outputs differ {len(mismatched)}"
    )
    if ratios:
        p50, p90, p99 = np.percentile(ratios, [50, 90, 99])
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(
            f"ratio tir-mlir/TVM: p50 {p50:.2f}  p90 {p90:.2f}  p99 {p99:.2f}  "
            f"max {max(ratios):.2f}  geomean {geo:.2f}"
        )
    rows.sort(reverse=True)
    if args.table:
        write_table(args.table, rows, all_cases)
    if rows:
        print_by_workload(rows, all_cases)
        print(f"\n## {min(args.worst, len(rows))} worst (replay: --seed {args.seed} --cases N)")
    for ratio, name, ours, t_tvm, side in rows[: args.worst]:
        code = all_cases[name][1]
        print(
            f"\n### {name}: ratio {ratio:.2f} (tir-mlir {ours * 1e3:.3f} ms, TVM {t_tvm * 1e3:.3f}"
            f" ms, {side})\n# {primitives(code)}\n{code}",
            end="",
        )
    for title, items in (
        ("refused by TVM only", refused_tvm),
        ("refused by tir-mlir only", refused_ours),
        ("build or run failed", failed),
    ):
        if items:
            print(f"\n## {title}")
            for name, why in items:
                print(
                    f"\n### {name}: {why}\n# {primitives(all_cases[name][1])}\n"
                    f"{all_cases[name][1]}",
                    end="",
                )
    if refused_both:
        print("\n## refused by both (the generator's own misses)")
        for name in refused_both:
            print(f"{name}: {primitives(all_cases[name][1])}")
    if mismatched:
        print("\n## outputs differ (tir-mlir vs TVM)")
        for name in mismatched:
            print(f"\n### {name}\n{all_cases[name][1]}", end="")


if __name__ == "__main__":
    main()
