"""Time against program size for the shapes an adversarial input takes: many statements in
one block, many terms in one expression. Prints parse, print, build and bounds-checked build
seconds per size, and the growth exponent between sizes (1.0: linear, 2.0: quadratic).

    python benchmarks/bench_hostile.py [--statements 250,500,1000] [--terms 1000,10000,30000]

Each size is timed in this process with the compile cache off (TIR_MLIR_CACHE=0), so every
build compiles.
"""

import argparse
import math
import os
import time

os.environ["TIR_MLIR_CACHE"] = "0"

import tir_mlir  # noqa: E402  (after the cache is turned off)

HEAD = '@T.prim_func\ndef main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):\n'


def statements(n: int) -> str:
    body = "\n".join(f"            B[{k % 16}] = A[{k % 16}] + T.float32({k})" for k in range(n))
    return HEAD + f'    for i in range(1):\n        with T.block("b"):\n{body}\n'


def terms(n: int) -> str:
    return HEAD + "    B[0] = " + " + ".join(f"A[{k % 16}]" for k in range(n)) + "\n"


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def measure(make, sizes, build: bool):
    rows = []
    for n in sizes:
        mod, parse_s = timed(lambda: tir_mlir.parse(make(n)))
        _, print_s = timed(mod.script)
        row = {"n": n, "parse": parse_s, "print": print_s}
        if build:
            row["build"] = timed(lambda: tir_mlir.build(mod))[1]
            row["bounds-checked build"] = timed(lambda: tir_mlir.build(mod, debug=True))[1]
        rows.append(row)
        print(
            "  " + "  ".join(f"{k} {v:.2f} s" if k != "n" else f"n={v}" for k, v in row.items()),
            flush=True,
        )
    for a, b in zip(rows, rows[1:]):
        slopes = {
            k: math.log(b[k] / a[k]) / math.log(b["n"] / a["n"])
            for k in a
            if k != "n" and a[k] > 0 and b[k] > 0
        }
        print(
            f"  growth {a['n']} -> {b['n']}: "
            + ", ".join(f"{k} n^{s:.2f}" for k, s in slopes.items())
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--statements", default="250,500,1000")
    ap.add_argument("--terms", default="1000,10000,30000")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    tir_mlir.build(tir_mlir.parse(statements(1)), debug=True)  # imports, parser tables
    print("statements per block (parse, print, build, bounds-checked build):")
    measure(statements, [int(x) for x in args.statements.split(",")], build=True)
    print("terms per expression (parse, print):")
    measure(terms, [int(x) for x in args.terms.split(",")], build=False)


if __name__ == "__main__":
    main()
