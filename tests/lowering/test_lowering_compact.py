"""Stage compact-buffers: an intermediate buffer shrinks to the tile one iteration of the loop
around all its accesses touches (TVM's CompactBufferAllocation); otherwise it is left alone."""

from pathlib import Path

import numpy as np

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from schedule_everyday import column_sum, conv1d_ncw
from workloads import mm_relu

MM_RELU = mm_relu(16, k=8)


def _check(sch):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 8)).astype("float32")
    b = rng.standard_normal((8, 16)).astype("float32")
    c = np.zeros((16, 16), "float32")
    tir_mlir.build(sch.mod, debug=True)["main"](a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)


def test_buffer_used_across_loop_nests_is_not_compacted():
    sch = Schedule(tir_mlir.parse(MM_RELU))
    assert "memref.alloca() : memref<16x16xf32>" in emit_text(sch.mod.module, "scf")
    _check(sch)


def test_reverse_compute_at_row_is_compacted():
    sch = Schedule(tir_mlir.parse(MM_RELU))
    i, _, _ = sch.get_loops(sch.get_block("Y"))
    sch.reverse_compute_at(sch.get_block("C"), i)  # Y's accesses now all under i
    scf = emit_text(sch.mod.module, "scf")
    assert "memref.alloca() : memref<16xf32>" in scf  # one row (drop-unit-dims: not 1 x 16)
    assert "memref.alloca() : memref<16x16xf32>" not in scf
    _check(sch)


def test_compute_at_tile_under_parallel_loop_is_per_thread():
    sch = Schedule(tir_mlir.parse(MM_RELU))
    i, j = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 4])
    sch.compute_at(sch.get_block("Y"), i0)
    sch.parallel(i0)
    scf = emit_text(sch.mod.module, "scf")
    assert "memref.alloca() : memref<4x16xf32>" in scf
    assert scf.index("scf.parallel") < scf.index("memref.alloca()")
    _check(sch)


def test_indices_through_floordiv_and_floormod_are_compacted():
    """`(vi * 8 + vj) // 8` is vi + vj // 8 (the row: the tile's origin) and `vj % 8` a
    column within it: the buffer shrinks to the row all the same; numbers unchanged."""
    text = """
@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 8), "float32")):
    Y = T.alloc_buffer((16, 8))
    for i in range(16):
        for j in range(8):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[(vi * 8 + vj) // 8, (vi * 8 + vj) % 8] = A[vi, vj] * T.float32(2)
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = Y[vi, vj] + T.float32(1)
"""
    mod = tir_mlir.parse(text)
    scf = emit_text(mod.module, "scf")
    assert "memref.alloca() : memref<8xf32>" in scf and "alloca() : memref<16x8xf32>" not in scf
    a = np.random.default_rng(0).standard_normal((16, 8)).astype("float32")
    b = np.zeros_like(a)
    tir_mlir.build(mod, debug=True)["main"](a, b)
    np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)


DATA = Path(__file__).parent.parent / "data" / "tuner_candidates"


def _conv1d_reference(x, w):
    """conv1d_nlc of TVM's C1D workload: stride 2, padding 1."""
    pad = np.pad(x, ((0, 0), (1, 1), (0, 0)))
    out = np.zeros((1, 128, 128), "float32")
    for rl in range(3):
        out += np.einsum("nlc,cf->nlf", pad[:, rl : rl + 256 : 2, :], w[rl])
    return out


def test_tile_origin_through_a_division_that_is_always_zero():
    """The read index of the tuner's pad tile is `co // 128 * 64 + rc` with `co` < 128 a sum
    over the fused parallel var: the affine forms split it into `(8 * f + co_2 * 4 + 3) // 128
    - f // 16`, two terms whose ranges alone span four rows; their difference is 0, so the
    tile is the 15 x 8 of one iteration. (Adding the two terms' intervals kept the whole
    258 x 64 buffer; dropping `f // 16` from every axis's origin, because the store lacks it in
    the last axis, made 207 x 8.)"""
    rng = np.random.default_rng(0)
    # (1 x 15 x 8 and 1 x 15 x 1 tiles, their unit dimensions dropped by drop-unit-dims)
    for k, tile in ((6, "memref<15x8xf32>"), (2, "memref<15xf32>")):
        mod = tir_mlir.parse((DATA / f"c1d_candidate_{k}.tir").read_text())
        assert f"memref.alloca() : {tile}" in emit_text(mod.module, "scf"), k
        x = rng.standard_normal((1, 256, 64)).astype("float32")
        w = rng.standard_normal((3, 64, 128)).astype("float32")
        out = np.zeros((1, 128, 128), "float32")
        tir_mlir.build(mod)["main"](x, w, out)
        np.testing.assert_allclose(out, _conv1d_reference(x, w), rtol=1e-4, atol=1e-4)


# A tuner's cache_write tile too large for the stack: 256 x 256 floats (256 KiB) per parallel
# iteration, of a 512 x 256 buffer.
BIG_TILE = """
@T.prim_func
def main(A: T.Buffer((512, 64), "float32"), B: T.Buffer((64, 256), "float32"),
         C: T.Buffer((512, 256), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    C_global = T.alloc_buffer((512, 256))
    for i_0 in T.parallel(2):
        for i_1, j, k in T.grid(256, 256, 64):
            with T.block("C_update"):
                vi = T.axis.spatial(512, i_0 * 256 + i_1)
                vj, vk = T.axis.remap("SR", [j, k])
                with T.init():
                    C_global[vi, vj] = T.float32(0)
                C_global[vi, vj] = C_global[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0, ax1 in T.grid(256, 256):
            with T.block("C_global"):
                v0 = T.axis.spatial(512, i_0 * 256 + ax0)
                v1 = T.axis.spatial(256, ax1)
                C[v0, v1] = C_global[v0, v1]
"""


def test_tile_too_large_for_the_stack_is_compacted_on_the_heap():
    """One 256 x 256 heap tile per parallel iteration, freed at its end, as TVM allocates it.
    Left whole, its rows were 4 KiB apart in a 1024-wide buffer: a tuner's 1024 matmul
    candidate ran 179 ms against TVM's 29 (29 once compacted)."""
    mod = tir_mlir.parse(BIG_TILE)
    scf = emit_text(mod.module, "scf")
    body = scf[scf.index("scf.parallel") :]
    assert "memref.alloc() : memref<256x256xf32>" in body
    assert "memref.dealloc" in body and "alloc() : memref<512x256xf32>" not in scf
    rng = np.random.default_rng(0)
    a = rng.standard_normal((512, 64)).astype("float32")
    b = rng.standard_normal((64, 256)).astype("float32")
    c = np.zeros((512, 256), "float32")
    tir_mlir.build(mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_rows_split_by_a_factor_that_does_not_divide_are_compacted():
    """A column strip cached per parallel iteration, its rows read through a split by 3 of 16
    (18 rows by the loops, 16 by the guard): the tile is narrowed to the buffer, as TVM
    narrows a region, so it is 16 x 2, not the whole 16 x 16 buffer shared by all threads."""
    sch = Schedule(tir_mlir.parse(column_sum(16, 16)))
    block = sch.get_block("B")
    col, row = sch.get_loops(block)
    c0, c1 = sch.split(col, factors=[None, 2])
    r0, r1 = sch.split(row, factors=[None, 3])
    sch.reorder(c0, r0, r1, c1)
    sch.compute_at(sch.cache_read(block, 0, "global"), c0)
    sch.parallel(c0)
    sch.vectorize(c1)
    sch.decompose_reduction(block, r0)
    scf = emit_text(sch.mod.module, "scf")
    assert "memref<16x2xf32>" in scf and "alloc() : memref<16x16xf32>" not in scf
    a = np.random.default_rng(0).standard_normal((16, 16)).astype("float32")
    b = np.zeros(16, "float32")
    tir_mlir.build(sch.mod, debug=True)["main"](a, b)
    np.testing.assert_allclose(b, a.sum(axis=0), rtol=1e-5, atol=1e-5)


def test_whole_buffer_cached_per_parallel_iteration_is_per_thread():
    """The whole input cached (cache_read "global") at a parallel loop that does not index it:
    the tile is the whole buffer, so nothing shrinks, but every iteration writes it. It is
    allocated in the parallel loop's body, one per thread as TVM allocates it at the LCA of its
    accesses, not once for all threads (which raced on it and its cache lines)."""
    sch = Schedule(tir_mlir.parse(conv1d_ncw(4, 8, 16, 3)))
    block = sch.get_block("B")
    n, f, w, c, r = sch.get_loops(block)
    f0, f1 = sch.split(f, factors=[None, 2])
    sch.reorder(n, f0, w, c, r, f1)
    fused = sch.fuse(n, f0)
    sch.compute_at(sch.cache_read(block, 0, "global"), fused)
    sch.parallel(fused)
    scf = emit_text(sch.mod.module, "scf")
    assert scf.index("scf.parallel") < scf.index("memref.alloca() : memref<4x18xf32>")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, 4, 18)).astype("float32")
    wt = rng.standard_normal((8, 4, 3)).astype("float32")
    b = np.zeros((1, 8, 16), "float32")
    tir_mlir.build(sch.mod, debug=True)["main"](a, wt, b)
    windows = np.stack([a[0, :, k : k + 16] for k in range(3)], axis=-1)  # c, w, r
    np.testing.assert_allclose(b[0], np.einsum("cwr,fcr->fw", windows, wt), rtol=1e-5, atol=1e-5)
