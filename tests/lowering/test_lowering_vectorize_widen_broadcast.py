"""vectorize-loops broadcasts a uniform widened operand narrow and widens the vector (as TVM's
Cast(Broadcast(x))): an int8 matmul's A[i, k] times a row of B vectorized along j is then a byte
broadcast from memory and a vector sign extension, not a scalar movsx and a GPR-to-vector
broadcast per product (issue 28's 0280 and 0643 of seed 1220622965, 1.5x TVM's time on Zen 4).
Assembly for a named CPU (Zen 4), numbers on the host."""

import re

import numpy as np

from tir_mlir.frontend.parser import parse
from tir_mlir.passes.lowering.pipeline import emit_text
from tir_mlir.runtime.build import build
from tir_mlir.schedule.schedule import Schedule

ZEN4 = "llvm -mcpu=znver4"

_MATMUL = """
@T.prim_func
def main(A: T.Buffer((64, 64), "int8"), B: T.Buffer((64, 64), "int8"), C: T.Buffer((64, 64), "int32")):
    T.func_attr({"tir.noalias": True})
    for i, j, k in T.grid(64, 64, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vk, vj])
"""


def _rows_times_columns(lanes: int) -> Schedule:
    """0280's shape: 8 rows unrolled, `lanes` columns vectorized, inside k."""
    sch = Schedule(parse(_MATMUL))
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 8])
    j0, j1 = sch.split(j, factors=[None, lanes])
    sch.reorder(i0, j0, k, i1, j1)
    sch.vectorize(j1)
    sch.unroll(i1)
    return sch


def _check(sch: Schedule, lanes: int, seed: int):
    scf = emit_text(sch.mod.module, "scf", target=ZEN4)
    assert re.search(rf"vector\.broadcast %\w+ : i8 to vector<{lanes}xi8>", scf)
    widened = set(re.findall(r"(%\w+) = arith\.extsi %\w+ : i8 to i32", scf))
    broadcast = set(re.findall(r"vector\.broadcast (%\w+) :", scf))
    assert not widened & broadcast
    asm = emit_text(sch.mod.module, "asm", target=ZEN4)
    assert "vpbroadcastb" in asm
    assert not re.search(r"vpbroadcastd\s+%[re]", asm)  # no broadcast from a GPR
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, (64, 64)).astype("int8")
    b = rng.integers(-128, 128, (64, 64)).astype("int8")
    c = np.full((64, 64), 7, "int32")
    build(sch.mod)["main"](a, b, c)
    np.testing.assert_array_equal(c, a.astype("int32") @ b.astype("int32"))


def test_two_int8_columns_times_a_broadcast_byte():
    """0280: two columns of int32 sums per row (vector<2xi32>)."""
    _check(_rows_times_columns(2), lanes=2, seed=0)


def test_eight_int8_columns_times_a_broadcast_byte():
    """0643: eight columns (one ymm of int32 sums per row)."""
    _check(_rows_times_columns(8), lanes=8, seed=1)
