"""Stage `prefetch-strided`: in a register tile that walks down the rows of a 1024-wide matrix
(4 KiB apart: every row in the same L1 sets), the next row is prefetched; loads that the caches
keep, short loops and scalar loops get no prefetch. Checked on the scf stage, the assembly and
the numbers (numpy)."""

import re

import numpy as np
import pytest

import tir_mlir
from tir_mlir.context import get_context
from tir_mlir.passes.lowering import pipeline

RNG = np.random.default_rng(0)


def _matmul(n, k=256):
    return f"""@T.prim_func
def main(A: T.Buffer((8, {k}), "float32"), B: T.Buffer(({k}, {n}), "float32"),
         C: T.Buffer((8, {n}), "float32")):
    T.func_attr({{"global_symbol": "main", "tir.noalias": True}})
    for i, j, k in T.grid(8, {n}, {k}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def _tiled(n, k_inner=128, vectorize=True, prefetch_b=False, rows=4):
    """shared/bench/hand_mm.py's schedule: a `rows` x 64 tile of accumulators over `k_inner`."""
    sch = tir_mlir.Schedule(tir_mlir.parse(_matmul(n)))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1, i2 = sch.split(i, factors=[None, 8 // rows, rows])
    j0, j1 = sch.split(j, factors=[None, 64])
    k0, k1 = sch.split(k, factors=[None, k_inner])
    sch.reorder(i0, j0, k0, i1, k1, i2, j1)
    sch.unroll(i2)
    _, j11 = sch.split(j1, factors=[None, 16])
    if vectorize:
        sch.vectorize(j11)
    else:  # scalars (left alone, `auto-vectorize` would vectorize the loop)
        sch.unroll(j11)
    if prefetch_b:
        sch.prefetch(c, 1, k1, offset=1)
    sch.decompose_reduction(c, k0)
    return sch.mod


def _emit(mod, stage):
    with get_context():
        return pipeline.emit_text(mod.module, stage)


def _prefetches(scf: str) -> list:
    """The memrefs the prefetches of an scf-stage module read."""
    return re.findall(r"memref\.prefetch %(\w+)\[", scf)


def _check(mod, n):
    a, b = RNG.random((8, 256), np.float32), RNG.random((256, n), np.float32)
    c = np.zeros((8, n), np.float32)
    tir_mlir.build(mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def test_rows_a_page_apart_are_prefetched_one_iteration_ahead():
    mod = _tiled(1024)
    scf = _emit(mod, "scf")
    # one per cache line of B's 64-float row segment, the row clamped into B
    assert _prefetches(scf) == ["arg1"] * 4
    assert re.search(r"arith\.minsi %\w+, %c255\w* : index", scf)
    assert "prefetcht0" in _emit(mod, "asm")
    _check(mod, 1024)


def test_a_scheduled_prefetch_keeps_the_tile_in_registers():
    """sch.prefetch in the reduction loop: the accumulators are still carried across it (the
    prefetch, a hint, touches no element), as without the prefetch."""
    carried = [
        re.findall(r"scf\.for [^\n]*iter_args", _emit(_tiled(512, prefetch_b=p), "scf"))
        for p in (False, True)
    ]
    assert carried[0] and carried[1] == carried[0]
    mod = _tiled(512, prefetch_b=True)
    assert "arg1" in _prefetches(_emit(mod, "scf"))
    _check(mod, 512)


@pytest.mark.parametrize(
    "mod, why",
    [
        (lambda: _tiled(512), "rows 2 KiB apart: the hardware prefetcher follows them"),
        (lambda: _tiled(1088), "rows 4,352 bytes apart: spread over 16 L1 sets, 8 lines each"),
        (lambda: _tiled(1024, k_inner=16), "16 iterations: LLVM unrolls the loop whole"),
        (lambda: _tiled(1024, vectorize=False), "scalar math: LLVM's SLP vectorizer packs it"),
        (lambda: _tiled(1024, rows=8), "32 zmm accumulators: the addresses would spill them"),
    ],
)
def test_no_prefetch(mod, why):
    assert _prefetches(_emit(mod(), "scf")) == [], why


def _unrolled_k(rows):
    """A 16-float column tile of C walking B's rows (2 KiB apart: 512 floats) `rows` at a time:
    `k` split by `rows`, the inner part unrolled, 32 or more iterations of the outer part."""
    sch = tir_mlir.Schedule(tir_mlir.parse(_matmul(512, k=512)))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    j0, j1 = sch.split(j, factors=[None, 16])
    k0, k1 = sch.split(k, factors=[None, rows])
    sch.reorder(i, j0, k0, k1, j1)
    sch.vectorize(j1)
    sch.unroll(k1)
    sch.decompose_reduction(c, k0)
    return sch.mod


@pytest.mark.parametrize("rows", [2, 8])
def test_rows_of_an_unrolled_k_step_are_prefetched_while_their_sets_hold_them(rows):
    """`rows` rows 2 KiB apart per iteration: rows / 2 lines in each of 2 L1 sets, as many
    prefetched for the next iteration: at most the 8 ways, so each prefetch survives to its load."""
    assert _prefetches(_emit(_unrolled_k(rows), "scf")) == ["arg1"] * rows


def test_rows_of_an_unrolled_k_step_past_the_ways_are_not_prefetched():
    """16 rows 2 KiB apart per iteration: 8 lines in each of 2 L1 sets, and 8 more prefetched for
    the next iteration, 16 to a set of 8 ways: a prefetched row is evicted before its load, so
    none is prefetched (fails before: 16 prefetches)."""
    mod = _unrolled_k(16)
    assert _prefetches(_emit(mod, "scf")) == []
    a, b = RNG.random((8, 512), np.float32), RNG.random((512, 512), np.float32)
    c = np.zeros((8, 512), np.float32)
    tir_mlir.build(mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)
