"""Which random schedules a code-generator change touches: a fingerprint of the LLVM IR per case.

    python benchmarks/random_census.py --seed S --count N [--workloads a,b] --out new.json
    python benchmarks/random_census.py --compare old.json new.json

The first form draws bench_random_vs_tvm.py's cases of seed S, lowers each to LLVM IR (what the
JIT compiles) and writes case -> sha256 of that text (or the error it raised) to --out. Run it
once on the code before a change and once after (each checkout in its own environment); the
second form lists the cases whose IR differs. Those, and only those, need timing A/B: a case
with the same IR runs the same machine code.
"""

import argparse
import hashlib
import json
import sys
from pathlib import Path

from bench_random_vs_tvm import cases
from vs_tvm_timing import schedule_proj

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "support"))
from schedule_everyday import schedule_fn, workloads  # noqa: E402 (from tests/support/)


def fingerprint(src: str, code: str) -> str:
    """sha256 of the LLVM IR of `src` scheduled by `code`, or the error that stopped it."""
    from tir_mlir.passes.lowering.handoff import handoff_text

    try:
        mod = schedule_proj(src, schedule_fn(code))
        text = handoff_text(mod.module, "llvm-ir")
    except Exception as e:  # noqa: BLE001 - a refused schedule or failed build is a result too
        return f"error: {type(e).__name__}: {e}"[:200]
    return hashlib.sha256(text.encode()).hexdigest()


def census(seed: int, count: int, only) -> dict:
    """case -> fingerprint of the cases of seed S whose workload is in `only` (all if empty)."""
    corpus = workloads()
    out = {}
    for name, (workload, code) in cases(seed, count).items():
        if only and workload not in only:  # drawn from the whole corpus: the run's case names
            continue
        out[name] = fingerprint(corpus[workload], code)
        print(name, out[name][:16], flush=True)
    return out


def compare(old_path: str, new_path: str) -> None:
    old, new = json.loads(Path(old_path).read_text()), json.loads(Path(new_path).read_text())
    both = sorted(set(old) & set(new))
    changed = [n for n in both if old[n] != new[n]]
    for name in changed:
        sides = (("old", old[name]), ("new", new[name]))
        print(name + "".join(f"  [{s}: {h}]" for s, h in sides if h.startswith("error")))
    print(f"{len(changed)} of {len(both)} cases changed")


def main():
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--seed", type=int)
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--workloads", default="", help="comma-separated workload names (default all)")
    p.add_argument("--out")
    p.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    args = p.parse_args()
    if args.compare:
        return compare(*args.compare)
    if args.seed is None or not args.out:
        p.error("expected --seed and --out (or --compare OLD NEW)")
    only = tuple(w for w in args.workloads.split(",") if w)
    Path(args.out).write_text(json.dumps(census(args.seed, args.count, only), indent=0))


if __name__ == "__main__":
    main()
