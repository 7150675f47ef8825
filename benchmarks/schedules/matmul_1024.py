"""Hand schedule of the float32 matmul (benchmarks/programs.py `matmul_tvmscript`), TVM 0.21
API only, so the same function schedules a `tvm.tir.Schedule` and a `tir_mlir.Schedule`.

Each thread owns 64-column panels of B and C (j0, parallel); for every 4-row block of A (i0) a
4x64 tile of C is accumulated in a local buffer over all k: 4 rows x 4 vectors of 16 floats =
16 vector accumulators (unrolled i1, j1o; vectorized j1i), then written back to C.
"""

TILE_I, TILE_J, LANES = 4, 64, 16


def schedule(sch):
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, TILE_I])
    j0, j1 = sch.split(j, factors=[None, TILE_J])
    sch.reorder(j0, i0, k, i1, j1)
    j1o, j1i = sch.split(j1, factors=[None, LANES])
    local = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(local, i0)
    sch.vectorize(j1i)
    sch.unroll(j1o)
    sch.unroll(i1)
    sch.parallel(j0)  # before decompose_reduction: C_update is no reduction block
    init = sch.decompose_reduction(c, k)
    ii, ij = sch.get_loops(init)[-2:]
    _unroll_vectorize(sch, ii, ij)
    wi, wj = sch.get_loops(local)[-2:]
    _unroll_vectorize(sch, wi, wj)


def _unroll_vectorize(sch, rows, cols):
    """rows x cols tile: rows unrolled, cols as unrolled vectors of LANES."""
    co, ci = sch.split(cols, factors=[None, LANES])
    sch.vectorize(ci)
    sch.unroll(co)
    sch.unroll(rows)
