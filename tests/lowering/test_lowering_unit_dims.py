"""Stage `drop-unit-dims`: a compacted tile's dimensions of extent 1 are dropped, so a vectorized
copy over the rows of a column tile reads it with contiguous vector loads, not one scalar per
lane."""

import re

import numpy as np

import tir_mlir
from schedule_everyday import transpose_add
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text


def _column_tiles(n, rows):
    """A transpose-add whose cache_write tile is one column of `rows` rows per iteration of the
    fused parallel loop, copied back by a vectorized loop over those rows (issue 28's 0009)."""
    sch = Schedule(tir_mlir.parse(transpose_add(n)))
    c = sch.get_block("C")
    i, j = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, rows])
    sch.reorder(i0, j, i1)
    fused = sch.fuse(i0, j)
    cache = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(cache, fused)
    sch.storage_align(c, 0, 0, 16, 1)
    sch.vectorize(sch.get_loops(cache)[-1])
    sch.parallel(fused)
    return sch


def test_column_tile_is_read_by_vector_loads():
    sch = _column_tiles(64, 16)
    scf = emit_text(sch.mod.module, "scf")
    assert "memref.alloca() : memref<16xf32>" in scf
    # (vectors of the lanes LLVM's cost model prices lowest for a scattered store: 16 lanes
    # as 4 x 4 on AVX-512, gather_width.py)
    assert re.search(r"vector\.load %alloca\[%\w+\] : memref<16xf32>, vector<(4|8|16)xf32>", scf)
    assert "memref.load %alloca" not in scf  # no lane read alone
    assert len(re.findall(r"vector\.extract %\w+\[\d+\]", scf)) == 16  # C's column: per lane
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((64, 64)).astype("float32") for _ in range(2))
    c = np.zeros((64, 64), "float32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a.T + b, rtol=1e-6)


def test_numbers_with_bounds_checks():
    sch = _column_tiles(32, 8)
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((32, 32)).astype("float32") for _ in range(2))
    c = np.zeros((32, 32), "float32")
    tir_mlir.build(sch.mod, debug=True)["main"](a, b, c)
    np.testing.assert_allclose(c, a.T + b, rtol=1e-6)
