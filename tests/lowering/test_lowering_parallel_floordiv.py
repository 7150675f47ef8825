"""The floor divisions of a parallel loop's never-negative indices lower as truncating ones
(passes/lowering/parallel_floordiv.py): no rounding fix-up for negative quotients in the
OpenMP-outlined body; and one that can be negative keeps its floor rounding."""

import numpy as np

from tir_mlir.schedule.schedule import Schedule
from tir_mlir.frontend.parser import parse
from tir_mlir.runtime.build import build
from tir_mlir.passes.lowering.pipeline import emit_text

# (A read down its columns: with a row read along the fused loop, `outer-lanes` would run 16 of
# its columns as vector lanes, and the loop's iterations would be too few to run in parallel)
FUSED = """
@T.prim_func
def main(A: T.Buffer((256, 64), "float32"), B: T.Buffer((64, 256), "float32")):
    for f in T.parallel(16384):
        with T.block("B"):
            vi = T.axis.spatial(64, f // 256)
            vj = T.axis.spatial(256, f % 256)
            B[vi, vj] = A[vj, vi] * T.float32(2)
"""

ELEMENTWISE = """
@T.prim_func
def main(A: T.Buffer((100, 256), "float32"), B: T.Buffer((100, 256), "float32")):
    for i, j in T.grid(100, 256):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""

SHIFTED = """
@T.prim_func
def main(C: T.Buffer((4096,), "float32")):
    for g in T.parallel(4096):
        with T.block("C"):
            vg = T.axis.spatial(4096, g)
            C[vg] = T.Cast("float32", T.floordiv(vg - 5, 4) + T.floormod(vg - 5, 4) * 10000)
"""


def test_fused_parallel_index_divides_without_sign_fixup():
    ll = emit_text(parse(FUSED).module, "llvm-ir")
    assert "__kmpc_fork_call" in ll
    assert "sdiv i64" in ll
    # floordivsi's expansion tests the dividend's sign (icmp slt x, 0) and corrects the quotient.
    assert "icmp slt" not in ll


def test_fused_parallel_matches_numpy():
    a = np.random.default_rng(0).standard_normal((256, 64)).astype(np.float32)
    b = np.zeros((64, 256), np.float32)
    build(parse(FUSED))["main"](a, b)
    np.testing.assert_array_equal(b, a.T * 2)


def test_possibly_negative_index_keeps_floor_rounding():
    mod = parse(SHIFTED)
    assert "icmp slt" in emit_text(mod.module, "llvm-ir")
    c = np.zeros(4096, np.float32)
    build(mod)["main"](c)
    g = np.arange(4096) - 5
    np.testing.assert_array_equal(c, (g // 4 + (g % 4) * 10000).astype(np.float32))


def test_guarded_partial_tile_keeps_floor_division():
    """Rows split by 3 (100 rows: a partial last tile) and fused with the columns: the body
    guards on the row block (f // 256), and LLVM specialises the partial tile's branch on that
    floor quotient; truncated, the guard became a range of the IV and the branch lost it."""
    sch = Schedule(parse(ELEMENTWISE))
    i, j = sch.get_loops(sch.get_block("B"))
    io, ii = sch.split(i, factors=[None, 3])
    sch.reorder(io, j, ii)
    sch.parallel(sch.fuse(io, j))
    ll = emit_text(sch.mod.module, "llvm-ir")
    assert "__kmpc_fork_call" in ll
    # floordivsi's fix-up: the dividend's sign and whether the division was exact.
    assert "icmp ne i64" in ll
    a = np.random.default_rng(1).standard_normal((100, 256)).astype(np.float32)
    b = np.zeros_like(a)
    build(sch.mod)["main"](a, b)
    np.testing.assert_array_equal(b, a * 2)
