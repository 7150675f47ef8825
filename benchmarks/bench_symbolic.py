"""Build time of a symbolic function (one kernel for every size, lowered once from the IR)
against the same function specialized at one static size, and (--run) the run time of the two
kernels at that size, CPU time of the calling thread:

    python benchmarks/bench_symbolic.py [--size 1024] [--repeat 3] [--only matmul_n,softmax] [--run]

Programs: the shared symbolic workload (tests/data/symbolic/*.tir), unscheduled, and `add`
split/parallel/vectorized by hand. Each build is timed from the IR to a loaded library with the
compile caches off (TIR_MLIR_CACHE=0; the in-memory libraries and the process's private
cache folder cleared before each build): lowering, LLVM's
`opt`/`llc`, linking and loading. The issue's target: symbolic <= 1.5x static.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ["TIR_MLIR_CACHE"] = "0"  # every build compiles (before tir_mlir loads)

import numpy as np

import tir_mlir
from tir_mlir.analysis import size_exprs
from tir_mlir.context import get_context
from tir_mlir.frontend.parser import build as build_ir
from tir_mlir.frontend.parser import parse_ast
from tir_mlir.runtime import build as build_module
from tir_mlir.runtime.signature import signatures
from tir_mlir.transforms.specialize import specialize_module
from tir_mlir.ir.user_cache import private_dir

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "symbolic"
DEFAULT = ("matmul_n", "batch_matmul", "softmax", "layernorm", "conv2d_hw", "row_sum")


def load(name: str):
    path = DATA / f"{name}.tir"
    return build_ir(parse_ast(path.read_text(), str(path)), str(path))


def scheduled_add():
    sch = tir_mlir.Schedule(load("add"))
    i, j = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, [None, 4])
    sch.parallel(io)
    _, ji = sch.split(j, [None, 8])
    sch.vectorize(ji)
    return sch.mod


def static_at(mod, size: int):
    """The function with every size var at `size` and its scalar parameters at 1."""
    out = mod.copy()
    with get_context():
        (params,) = signatures(out.module).values()
        values = {
            p.name: size if p.kind in ("var", "index") else 1.0
            for p in params
            if p.kind != "buffer"
        }
        specialize_module(out.module, values)
    return out


def build_secs(mod, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        build_module._LIBRARIES.items.clear()
        for so in private_dir().glob("*.so"):  # (this process's compile cache)
            so.unlink()
        start = time.perf_counter()
        tir_mlir.build(mod)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_secs(lib, arrays, repeat: int, number: int = 10) -> float:
    fn = lib[next(iter(lib.sigs))]
    fn(*arrays)
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(number):
            fn(*arrays)
        best = min(best, (time.process_time() - start) / number)
    return best


def arrays_at(mod, size: int):
    with get_context():
        (params,) = signatures(mod.module).values()
    values = {p.name: size for p in params if p.kind in ("var", "index")}
    rng = np.random.default_rng(0)
    return [
        rng.random([size_exprs.evaluate(s, values) for s in p.shape]).astype(p.dtype)
        for p in params
        if p.kind == "buffer"
    ]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default=",".join(DEFAULT + ("add_scheduled",)))
    ap.add_argument("--run", action="store_true", help="also time the two kernels at --size")
    args = ap.parse_args(argv)
    print(
        f"{'program':16} {'build: symbolic ms':>18} {'static ms':>10} {'ratio':>6}"
        + (f" {'run: symbolic ms':>16} {'static ms':>10} {'ratio':>6}" if args.run else "")
    )
    ratios, run_ratios = [], []
    for name in args.only.split(","):
        mod = scheduled_add() if name == "add_scheduled" else load(name)
        static_mod = static_at(mod, args.size)
        sym = build_secs(mod, args.repeat)
        static = build_secs(static_mod, args.repeat)
        ratios.append(sym / static)
        line = f"{name:16} {sym * 1e3:18.0f} {static * 1e3:10.0f} {sym / static:6.2f}"
        if args.run:
            arrays = arrays_at(mod, args.size)
            rs = run_secs(tir_mlir.build(mod), arrays, args.repeat)
            rt = run_secs(tir_mlir.build(static_mod), arrays, args.repeat)
            run_ratios.append(rs / rt)
            line += f" {rs * 1e3:16.3f} {rt * 1e3:10.3f} {rs / rt:6.2f}"
        print(line)
    print(
        f"build: geomean ratio {statistics.geometric_mean(ratios):.2f}, worst "
        f"{max(ratios):.2f} (target <= 1.5)"
    )
    if run_ratios:
        print(
            f"run: geomean ratio {statistics.geometric_mean(run_ratios):.2f}, worst "
            f"{max(run_ratios):.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
