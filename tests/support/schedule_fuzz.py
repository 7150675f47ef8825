"""Seed loop of the random schedule differential against TVM (not collected by pytest).

    python tests/support/schedule_fuzz.py START END [--timeout 60] [--log fuzz.log] [--kinds K1,K2]
    python tests/support/schedule_fuzz.py START END --roundtrip   # ours alone: printed text parses back

Each seed (tests/support/schedule_random.py: from_seed) runs in a worker process under a time limit;
a seed whose worker dies (an LLVM assertion abort, a crash) or runs out of time is logged as
such (a death is rerun on our side alone, to tell TVM's crashes from ours, our numbers
checked), and the loop goes on with the next seed. Differences are logged with the
schedule. `--kinds` runs only the seeds whose schedule draws one of these primitives.
`--roundtrip` (no TVM, nothing built): each seed's scheduled program, printed, must parse
back and print the same text.
"""

import argparse
import multiprocessing as mp
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _run(seed: int, queue):
    from schedule_differential import differential
    from schedule_random import from_seed, program, random_schedule

    name, steps = from_seed(seed)
    try:
        out = differential(program(name), random_schedule(program(name), steps))
        problems = [p for p in out.problems if not p.startswith("printer: ")]
    except Exception:  # noqa: BLE001  (the harness itself failing is a finding too)
        problems = ["harness: " + traceback.format_exc()[-3000:]]
    queue.put(problems)


def _run_ours(seed: int, queue):
    """Only our side (after a worker died: was it TVM or us?), with our numbers checked."""
    import tir_mlir
    from tir_mlir import Schedule, ScheduleError
    from schedule_check import check_numerics, run
    from schedule_random import from_seed, program, random_schedule

    name, steps = from_seed(seed)
    mod = tir_mlir.parse(program(name))
    sch = Schedule(mod)
    try:
        random_schedule(program(name), steps)(sch)
    except ScheduleError:
        pass
    problems = []
    if "transform_layout" not in str(sch.trace):  # (may change a parameter's layout)
        try:
            check_numerics(mod, sch.mod, list(sch.mod.functions)[0], run)
        except Exception as e:  # noqa: BLE001
            problems.append(f"numerics (ours alone): {type(e).__name__}: {str(e)[:2000]}")
    queue.put(problems)


def _run_roundtrip(seed: int, queue):
    """Our side alone: the scheduled program's text parses back to the same text."""
    import tir_mlir
    from tir_mlir import Schedule, ScheduleError
    from schedule_random import from_seed, program, random_schedule

    name, steps = from_seed(seed)
    sch = Schedule(tir_mlir.parse(program(name)))
    try:
        random_schedule(program(name), steps)(sch)
    except ScheduleError:
        pass
    text, problems = sch.mod.script(), []
    try:
        again = tir_mlir.parse(text).script()
        if _without_regions(again) == _without_regions(text):
            if again != text:  # a known difference (docs/tvm_compat.md): not a failure
                problems.append("note: T.reads/T.writes re-inferred on parse")
        else:
            problems.append(f"printed text reprints differently:\n{text}\n---\n{again}")
    except Exception as e:  # noqa: BLE001  (a printed program that does not parse back)
        problems.append(
            f"printed text does not parse back: {type(e).__name__}: {str(e)[:2000]}\n{text}"
        )
    queue.put(problems)


def _without_regions(text: str) -> str:
    return "\n".join(
        line
        for line in text.splitlines()
        if not line.lstrip().startswith(("T.reads(", "T.writes("))
    )


def _in_worker(ctx, target, seed: int, timeout: float):
    """(problems, exit code) of target(seed) run in a worker process."""
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(seed, queue))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return [f"TIMEOUT after {timeout}s"], None
    if proc.exitcode != 0:
        return None, proc.exitcode
    return queue.get(), 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("start", type=int)
    ap.add_argument("end", type=int)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--log", default="-")
    ap.add_argument("--kinds", default="", help="comma-separated primitives a seed must draw")
    ap.add_argument("--roundtrip", action="store_true", help="ours alone: text parses back")
    args = ap.parse_args()
    kinds = {k for k in args.kinds.split(",") if k}
    log = sys.stdout if args.log == "-" else open(args.log, "a", buffering=1)
    from schedule_random import from_seed
    import schedule_differential  # noqa: F401  (imported once, before the workers fork)

    ctx = mp.get_context("fork")
    for seed in range(args.start, args.end):
        if kinds and not any(step[0] in kinds for step in from_seed(seed)[1]):
            continue
        problems, code = _in_worker(
            ctx, _run_roundtrip if args.roundtrip else _run, seed, args.timeout
        )
        if problems is None and args.roundtrip:
            problems = [f"OURS CRASHED (exit code {code})"]
        elif problems is None:
            mine, ours = _in_worker(ctx, _run_ours, seed, args.timeout)
            problems = [
                f"OURS CRASHED (exit code {ours})"
                if ours
                else f"TVM crashed (exit code {code}); ours runs"
            ] + (mine or [])
        notes = [p[6:] for p in problems if p.startswith("note: ")]
        problems = [p for p in problems if not p.startswith("note: ")]
        if problems:
            name, steps = from_seed(seed)
            log.write(f"=== seed {seed} {name} {steps}\n" + "\n\n".join(problems) + "\n")
        else:
            log.write(f"--- seed {seed} ok" + (f" ({'; '.join(notes)})" if notes else "") + "\n")


if __name__ == "__main__":
    main()
