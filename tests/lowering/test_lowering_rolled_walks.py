"""Stage `roll-strided-walks`: a loop over `k` that reads a column of a 1024-wide matrix (rows
4 KiB apart: every row in one L1 set, so every load misses L1) carries LLVM's unroll-disable
annotation; loops whose loads the cache keeps, short loops and loops under a serial loop that
LLVM may vectorize do not. Checked on the scf stage (and the stage alone) and the numbers (numpy)."""

import numpy as np
import pytest
from mlir import ir

import tir_mlir
from tir_mlir.context import get_context
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering import pipeline
from tir_mlir.passes.lowering.common import scf_bounds
from tir_mlir.passes.lowering.rolled_walks import RollStridedWalks

RNG = np.random.default_rng(0)


def _matmul(m, n, k):
    return f"""@T.prim_func
def main(A: T.Buffer(({m}, {k}), "float32"), B: T.Buffer(({k}, {n}), "float32"),
         C: T.Buffer(({m}, {n}), "float32")):
    T.func_attr({{"global_symbol": "main", "tir.noalias": True}})
    for i, j, k in T.grid({m}, {n}, {k}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def _rows_in_lanes(n, k=128, m=16):
    """A random-schedule shape (benchmarks/README.md, session 18): 4 rows of C in a vector's
    lanes, `k` innermost but for them, B[k, j] broadcast: a walk down one column of B."""
    sch = tir_mlir.Schedule(tir_mlir.parse(_matmul(m, n, k)))
    c = sch.get_block("C")
    i, j, kk = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, 4])
    sch.reorder(i0, j, kk, i1)
    sch.parallel(sch.fuse(i0, j))
    sch.vectorize(i1)
    return sch.mod, (m, n, k)


def _column_sums(outer, term="arith.mulf %x, %x"):
    """Sums of squares (`term`: the added value from %x, `arith.addf %x, %x` for plain sums) of the columns of a 256 x 1024 matrix at the
    scf stage, columns outside rows: the rows loop walks 4 KiB apart; around it `outer`, one
    column an iteration."""
    return f"""func.func @main(%a: memref<256x1024xf32>, %s: memref<1024xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  scf.{outer} (%j) = (%c0) to (%c1024) step (%c1) {{
    %sum = scf.for %i = %c0 to %c256 step %c1 iter_args(%acc = %zero) -> (f32) {{
      %x = memref.load %a[%i, %j] : memref<256x1024xf32>
      %x2 = {term} : f32
      %y = arith.addf %acc, %x2 : f32
      scf.yield %y : f32
    }}
    memref.store %sum, %s[%j] : memref<1024xf32>
  }}
  return
}}
""".replace("scf.for (%j) = (%c0) to (%c1024) step (%c1)", "scf.for %j = %c0 to %c1024 step %c1")


def _stage_alone(text) -> list:
    """The trip counts of the loops `roll-strided-walks` alone rolls in an scf-level module."""
    with get_context():
        module = ir.Module.parse(text)
        RollStridedWalks()(module)
        return _rolled(module)


def _rolled_trips(mod) -> list:
    """The trip counts of the scf-stage loops that LLVM is told not to unroll."""
    with get_context():
        return _rolled(ir.Module.parse(pipeline.emit_text(mod.module, "scf")))


def _rolled(module) -> list:
    out = []
    for op in walk_all(module.operation):
        note = str(op.attributes["loop_annotation"]) if "loop_annotation" in op.attributes else ""
        bounds = scf_bounds(op) if op.name == "scf.for" else None
        if "unroll" in note and "disable = true" in note and bounds:
            out.append((bounds[1] - bounds[0]) // bounds[2])
    return out


def test_a_column_walk_a_page_apart_stays_rolled():
    mod, (m, n, k) = _rows_in_lanes(1024)
    assert _rolled_trips(mod) == [128]
    a, b = RNG.random((m, k), np.float32), RNG.random((k, n), np.float32)
    c = np.zeros((m, n), np.float32)
    tir_mlir.build(mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


@pytest.mark.parametrize(
    "mod, why",
    [
        (lambda: _rows_in_lanes(512)[0], "rows 2 KiB apart: the hardware prefetcher follows them"),
        (lambda: _rows_in_lanes(1088)[0], "rows 4,352 bytes apart: spread over 16 L1 sets"),
        (lambda: _rows_in_lanes(1024, k=16)[0], "16 iterations: LLVM unrolls the loop whole"),
    ],
)
def test_not_rolled(mod, why):
    assert _rolled_trips(mod()) == [], why


def _column_copy():
    """A column of a 256 x 1024 matrix copied to a vector: the rows loop walks 4 KiB apart and
    stores each element, carrying nothing."""
    return """func.func @main(%a: memref<256x1024xf32>, %s: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.for %i = %c0 to %c256 step %c1 {
    %x = memref.load %a[%i, %c0] : memref<256x1024xf32>
    memref.store %x, %s[%i] : memref<256xf32>
  }
  return
}
"""


def _many_chains(chains):
    """`chains` accumulators of 16 floats over a walk down rows 4 KiB apart."""
    args = ", ".join(f"%acc{c} = %zero" for c in range(chains))
    types = ", ".join(["vector<16xf32>"] * chains)
    sums = "\n".join(
        f"      %p{c} = arith.mulf %x, %x : vector<16xf32>\n"
        f"      %y{c} = arith.addf %acc{c}, %p{c} : vector<16xf32>"
        for c in range(chains)
    )
    ys = ", ".join(f"%y{c}" for c in range(chains))
    return f"""func.func @main(%a: memref<256x1024xf32>) -> vector<16xf32> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant dense<0.0> : vector<16xf32>
  %r:{chains} = scf.for %i = %c0 to %c256 step %c1 iter_args({args}) -> ({types}) {{
      %x = vector.load %a[%i, %c0] : memref<256x1024xf32>, vector<16xf32>
{sums}
      scf.yield {ys} : {types}
  }}
  return %r#0 : vector<16xf32>
}}
"""


def test_not_a_loop_of_chains_that_fill_the_fma_units():
    """One chain waits on its latency (rolled); 16 chains of 16 floats are more than any
    target's FMA units take (left to LLVM's unroll)."""
    assert _stage_alone(_many_chains(1)) == [256]
    assert _stage_alone(_many_chains(16)) == []


def test_not_a_chain_of_adds_alone():
    assert _stage_alone(_column_sums("parallel", term="arith.addf %x, %x")) == []


def test_not_a_loop_that_stores():
    """Copies and tiles updated in memory ran faster unrolled (see rolled_walks.py)."""
    assert _stage_alone(_column_copy()) == []


def test_not_under_a_serial_loop_walking_one_element_at_a_time():
    """LLVM may unroll the rows loop whole to vectorize the columns loop around it; under a
    parallel loop (a task per column) it stays rolled."""
    assert _stage_alone(_column_sums("parallel")) == [256]
    assert _stage_alone(_column_sums("for")) == []
