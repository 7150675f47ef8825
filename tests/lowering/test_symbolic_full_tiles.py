"""A symbolic matmul tiled as the tuner tiles it (rows split by constants over `n`, the tile
loops fused into one parallel loop, a cache written back per tile): every full tile runs the
kernel a static size gives (`version-guards` versions the init, update and write-back guards
of a tile together), so the hot loop has constant bounds, carried accumulators and no guard;
the last, partial tile keeps its guards. Numbers against numpy at sizes below one tile,
primes, and exact multiples."""

import re

import numpy as np
import pytest

import tir_mlir
from tir_mlir.passes.lowering.handoff import handoff_text

TEXT = """@T.prim_func
def main(a: T.handle, B: T.Buffer((64, 64), "float32"), c: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n, 64))
    C = T.match_buffer(c, (n, 64))
    for i, j, k in T.grid(n, 64, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def _tiled(fused: bool = True):
    """The multi-level tiling of the tuner (SSRSRS) with 16-row tiles: rows [None, 2, 4, 2],
    columns [1, 2, 1, 32], k [8, 8], the cache written back at the tile, the 4 outer tile
    loops fused and parallel (`fused`; else only the loop over n's tiles is parallel and the
    other tile loops stay inside it), the innermost loops vectorized."""
    sch = tir_mlir.Schedule(tir_mlir.parse(TEXT))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1, i2, i3 = sch.split(i, [None, 2, 4, 2])
    j0, j1, j2, j3 = sch.split(j, [1, 2, 1, 32])
    k0, k1 = sch.split(k, [8, 8])
    sch.reorder(i0, j0, i1, j1, k0, i2, j2, k1, i3, j3)
    cw = sch.cache_write(c, 0, "global")
    sch.reverse_compute_at(cw, j1)
    sch.parallel(sch.fuse(i0, j0, i1, j1) if fused else i0)
    sch.vectorize(j3)
    sch.vectorize(sch.get_loops(cw)[-1])
    sch.decompose_reduction(c, k0)
    return sch.mod


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "tile_loops_inside"])
def test_the_hot_loop_of_a_full_tile_has_static_bounds_and_no_guard(fused):
    scf = handoff_text(_tiled(fused).module, "scf")
    # scf.parallel (f) { if full(f) { the static kernel } else { the guarded one } }
    full, partial = scf.split("} else {", 1)
    assert "scf.parallel" in full and "scf.if" in full
    hot = re.findall(r"scf\.for %\w+ = %c0 to (%\w+) step %c1 iter_args", full)
    # k_0 and k_1 carry the tile's 8 rows x 32 columns in registers across all of k
    assert hot == ["%c8", "%c8"], full
    kernel = full[full.index("iter_args") :]
    assert "scf.if" not in kernel and "arith.cmpi" not in kernel, kernel
    assert "scf.if" in partial  # the last tile's rows past n are skipped


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "tile_loops_inside"])
@pytest.mark.parametrize("n", [1, 5, 16, 17, 31, 32, 97, 128])
def test_numbers_at_sizes_below_a_tile_primes_and_multiples(n, fused):
    lib = tir_mlir.build(_tiled(fused))
    rng = np.random.default_rng(n)
    a, b = rng.random((n, 64), dtype="float32"), rng.random((64, 64), dtype="float32")
    c = np.full((n, 64), np.nan, "float32")
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
