"""What the binding-form tests share: the programs whose iter-var bindings they schedule and
print (`add_one`, `norm_bmn`), and `binding_lines`, which keeps the printed lines those tests
compare (bindings, predicates, and optionally thread bindings). Text programs, generated from
their sizes, as in workloads.py."""

from typing import List, Sequence


def add_one(n: int = 512, m: int = 512) -> str:
    """B[n, m] = A + 1: one block "C" under loops i, j (iter vars vi, vj)."""
    return f"""
@T.prim_func
def main(A: T.Buffer(({n}, {m}), "float32"), B: T.Buffer(({n}, {m}), "float32")):
    for i, j in T.grid({n}, {m}):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1.0)
"""


def norm_bmn(n: int) -> str:
    """TVM's norm_bmn at A (1, n, n): block "C" sums A[b, i, j]^2 into C[b] (loops i0, i1,
    i2; i1 and i2 reduce), block "D" takes its square root into D[b] (loop i0)."""
    return f"""
@T.prim_func
def main(A: T.Buffer((1, {n}, {n}), "float32"), D: T.Buffer((1,), "float32")):
    C = T.alloc_buffer((1,))
    for i0, i1, i2 in T.grid(1, {n}, {n}):
        with T.block("C"):
            b, i, j = T.axis.remap("SRR", [i0, i1, i2])
            with T.init():
                C[b] = T.float32(0.0)
            C[b] = C[b] + A[b, i, j] * A[b, i, j]
    for i0 in range(1):
        with T.block("D"):
            b = T.axis.spatial(1, i0)
            D[b] = T.sqrt(C[b])
"""


def binding_lines(sch, keep: Sequence[str] = ("T.axis", "T.where")) -> List[str]:
    """The lines of the schedule's printed module that hold any of `keep`, stripped."""
    return [line.strip() for line in sch.mod.script().splitlines() if any(k in line for k in keep)]
