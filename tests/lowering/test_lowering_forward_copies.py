"""forward-copies: a stack tile filled from a read-only buffer and read once per element where
it was filled is read from the buffer itself (issue 28, int8 dot 0095 of seed 2022208947). A
tile that is read more than once per fill keeps its copy. Numbers against numpy."""

import numpy as np

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.passes.lowering.pipeline import emit_text
from stage_loops import loops_around_stores
from workloads import matmul
from schedule_everyday import bias_activation

SPR = "llvm -mcpu=sapphirerapids"

DOT = """
@T.prim_func
def main(A: T.Buffer((64, 256), "int8"), B: T.Buffer((64, 256), "int8"), C: T.Buffer((64,), "int32")):
    T.func_attr({"tir.noalias": True})
    for i, k in T.grid(64, 256):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = 0
            C[vi] = C[vi] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vi, vk])
"""

MATMUL = matmul(64, noalias=True)


def _dot_with_a_tile() -> Schedule:
    """0095's schedule: rows 4 x 4, k split by 4, A's 4 x 4 tile cached at k0 (each of its
    bytes read once there), the 4 rows innermost."""
    sch = Schedule(tir_mlir.parse(DOT))
    block = sch.get_block("C")
    i, k = sch.get_loops(block)
    i0, i1, i2 = sch.split(i, factors=[None, 4, 4])
    k0, k1 = sch.split(k, factors=[None, 4])
    sch.reorder(i0, i1, k0, k1, i2)
    cache = sch.cache_read(block, 0, "local")
    sch.compute_at(cache, k0)
    sch.parallel(i0)
    sch.decompose_reduction(block, k0)
    return sch


def test_a_tile_read_once_where_it_is_filled_is_read_from_its_buffer():
    """The copy goes; the rows then stay carried sums over one contiguous loop (no byte
    gathered into a vector lane by lane), as without the cache step."""
    sch = _dot_with_a_tile()
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert "memref.alloca" not in scf
    assert "vector.from_elements" not in scf
    assert "vpinsrb" not in emit_text(sch.mod.module, "asm", target=SPR)
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (64, 256)).astype("int8")
    b = rng.integers(-128, 128, (64, 256)).astype("int8")
    c = np.full(64, 7, "int32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_array_equal(c, (a.astype("int32") * b.astype("int32")).sum(axis=1))


TRANSPOSE = """
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vj, vi] + B[vi, vj]
"""


def test_a_tile_read_across_its_rows_by_a_vector_keeps_its_copy():
    """A transpose's 32 x 32 tile of A, read by a vectorized loop across its rows (0755 of
    seed 791440216): forwarded, each vector would gather from rows of A; the copy stays."""
    sch = Schedule(tir_mlir.parse(TRANSPOSE))
    block = sch.get_block("C")
    i, j = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 32])
    j0, j1 = sch.split(j, factors=[None, 32])
    sch.reorder(i0, j0, i1, j1)
    fused = sch.fuse(i0, j0)
    sch.compute_at(sch.cache_read(block, 0, "global"), fused)
    sch.vectorize(j1)
    assert "memref.alloca" in emit_text(sch.mod.module, "scf")
    rng = np.random.default_rng(2)
    a, b = rng.random((128, 128), "float32"), rng.random((128, 128), "float32")
    c = np.zeros((128, 128), "float32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a.T + b, rtol=1e-6)


def test_a_tile_read_again_keeps_its_copy():
    """A's row tile cached at i is read by every j: the copy stays."""
    sch = Schedule(tir_mlir.parse(MATMUL))
    block = sch.get_block("C")
    i, _, _ = sch.get_loops(block)
    cache = sch.cache_read(block, 0, "local")
    sch.compute_at(cache, i)
    assert "memref.alloca" in emit_text(sch.mod.module, "scf")
    rng = np.random.default_rng(1)
    a, b = rng.random((64, 64), "float32"), rng.random((64, 64), "float32")
    c = np.zeros((64, 64), "float32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


CONV = """
@T.prim_func
def main(A: T.Buffer((1, 10, 10, 16), "float32"), W: T.Buffer((3, 3, 16, 16), "float32"), B: T.Buffer((1, 8, 8, 16), "float32")):
    T.func_attr({"tir.noalias": True})
    for n, h, w, co, ry, rx, rc in T.grid(1, 8, 8, 16, 3, 3, 16):
        with T.block("B"):
            vn, vh, vw, vco, vry, vrx, vrc = T.axis.remap("SSSSRRR", [n, h, w, co, ry, rx, rc])
            with T.init():
                B[vn, vh, vw, vco] = T.float32(0)
            B[vn, vh, vw, vco] = B[vn, vh, vw, vco] + A[vn, vh + vry, vw + vrx, vrc] * W[vry, vrx, vrc, vco]
"""


def _conv_with_a_channel_tile(w_inner: int) -> Schedule:
    """0631 of seed 1021720963 (conv2d NHWC): A's 16 channels cached at the outer channel loop
    of a split reduction (its tile spans the window's rows and columns too), read by the two
    inner channel loops; the output column loop unrolled, so each copy has its own tile copy."""
    sch = Schedule(tir_mlir.parse(CONV))
    block = sch.get_block("B")
    n, h, w, co, ry, rx, rc = sch.get_loops(block)
    h0, h1 = sch.split(h, factors=[None, 2])
    w0, w1 = sch.split(w, factors=[None, w_inner])
    co0, co1 = sch.split(co, factors=[None, 8])
    rc0, rc1, rc2 = sch.split(rc, factors=[None, 4, 2])
    sch.reorder(n, h0, w0, co0, co1, w1, h1, ry, rx, rc0, rc1, rc2)
    sch.compute_at(sch.cache_read(block, 0, "global"), rc0)
    sch.unroll(w1)
    return sch


def _check_conv(sch: Schedule):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((1, 10, 10, 16), "float32")
    w = rng.standard_normal((3, 3, 16, 16), "float32")
    b = np.zeros((1, 8, 8, 16), "float32")
    tir_mlir.build(sch.mod)["main"](a, w, b)
    ref = sum(a[0, ry : ry + 8, rx : rx + 8] @ w[ry, rx] for ry in range(3) for rx in range(3))
    np.testing.assert_allclose(b[0], ref, rtol=1e-4, atol=1e-4)


def test_a_tile_filled_per_reduction_step_and_read_by_split_loops_is_read_from_its_buffer():
    """Each copy of the unrolled body fills the tile's 16 channels at its window position and
    reads them once, through the split loops rc1 * 2 + rc2: every copy goes, and the tile."""
    sch = _conv_with_a_channel_tile(4)
    assert "memref.alloca" not in emit_text(sch.mod.module, "scf")
    _check_conv(sch)


def test_a_guarded_copy_keeps_its_tile_and_the_others_go():
    """Split by 3, the columns leave a tail: its copies are guarded and stay (with the tile);
    the copies of the version without a tail go."""
    sch = _conv_with_a_channel_tile(3)
    scf = emit_text(sch.mod.module, "scf")
    assert "memref.alloca" in scf
    assert scf.count("vector.store") == 3  # the tail version's three copies of the columns
    _check_conv(sch)


def test_a_tile_read_whole_by_each_unrolled_copy_keeps_its_copy():
    """0899 of seed 1060771774: A's row cached at the fused (i, j0) loop, read whole by each of
    the 4 unrolled copies of j1: together they read it 4 times, a reused tile; it stays."""
    sch = Schedule(tir_mlir.parse(MATMUL))
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    j0, j1 = sch.split(j, factors=[None, 4])
    fused = sch.fuse(i, j0)
    sch.compute_at(sch.cache_read(block, 0, "global"), fused)
    sch.unroll(j1)
    assert "memref.alloca" in emit_text(sch.mod.module, "scf")
    rng = np.random.default_rng(4)
    a, b = rng.random((64, 64), "float32"), rng.random((64, 64), "float32")
    c = np.zeros((64, 64), "float32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


CONV1D = """
@T.prim_func
def main(A: T.Buffer((1, 64, 130), "float32"), W: T.Buffer((16, 64, 3), "float32"), B: T.Buffer((1, 16, 128), "float32")):
    T.func_attr({"tir.noalias": True})
    for n, co, x, rc, rx in T.grid(1, 16, 128, 64, 3):
        with T.block("B"):
            vn, vco, vx, vrc, vrx = T.axis.remap("SSSRR", [n, co, x, rc, rx])
            with T.init():
                B[vn, vco, vx] = T.float32(0)
            B[vn, vco, vx] = B[vn, vco, vx] + A[vn, vrc, vx + vrx] * W[vco, vrc, vrx]
"""


def test_a_whole_buffer_copy_inside_a_reduction_band_is_read_from_its_buffer_first():
    """0657 of seed 341660906: the output channels split by 8, their outer part fused with x
    (a parallel loop: A's column is `f mod 128 + rx`, at the copy and at the read), and A's 4
    channels of the tap cached at rx, inside the band (rc_0, rx, rc_1). `forward-buffer-copies`
    reads A itself before `loop-interchange` (the cache buffer is A's whole shape there): the
    copy goes, and the band, now perfect, runs the channels' chains side by side."""
    sch = Schedule(tir_mlir.parse(CONV1D))
    block = sch.get_block("B")
    n, co, x, rc, rx = sch.get_loops(block)
    co0, co1 = sch.split(co, factors=[None, 8])
    rc0, rc1 = sch.split(rc, factors=[None, 4])
    sch.reorder(n, co0, x, co1, rc0, rx, rc1)
    fused = sch.fuse(n, co0, x)
    sch.compute_at(sch.cache_read(block, 1, "global"), rx)
    sch.parallel(fused)
    assert (
        loops_around_stores(sch.mod, "forward-buffer-copies")
        == [("n_co_0_x_fused", "co_1", "rc_0", "rx", "rc_1")] * 2
    )
    assert loops_around_stores(sch.mod, "loop-interchange")[-1] == (
        "n_co_0_x_fused",
        "co_1_o",
        "rc_0",
        "rx",
        "rc_1",
        "co_1",
    )
    rng = np.random.default_rng(5)
    a = rng.standard_normal((1, 64, 130), "float32")
    w = rng.standard_normal((16, 64, 3), "float32")
    b = np.zeros((1, 16, 128), "float32")
    tir_mlir.build(sch.mod)["main"](a, w, b)
    ref = sum(w[:, :, rx] @ a[0, :, rx : rx + 128] for rx in range(3))
    np.testing.assert_allclose(b[0], ref, rtol=1e-4, atol=1e-4)


def test_a_tile_loaded_twice_per_element_in_one_body_is_read_from_its_buffer():
    """SiLU with its bias inlined loads X twice per element (`X * sigmoid(X)`): 8 rows of one
    column cached at the fused rows-columns loop (0575 of seed 1145227567) are read once each,
    so the copy goes, and `outer-lanes` then runs 16 columns of the fused parallel loop as
    vectors, not one scalar exp per element."""
    sch = Schedule(tir_mlir.parse(bias_activation(64, 64, "silu")))
    sch.compute_inline(sch.get_block("bias"))
    block = sch.get_block("act")
    i, j = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 8])
    sch.reorder(i0, j, i1)
    fused = sch.fuse(i0, j)
    sch.compute_at(sch.cache_read(block, 0, "global"), fused)
    sch.parallel(fused)
    scf = emit_text(sch.mod.module, "scf", target=SPR)
    assert "memref.alloca" not in scf
    assert "vector<16xf32>" in scf
    rng = np.random.default_rng(3)
    a, bias = rng.standard_normal((64, 64), "float32"), rng.standard_normal(64, "float32")
    out = np.zeros((64, 64), "float32")
    tir_mlir.build(sch.mod, target=SPR)["main"](a, bias, out)
    x = a + bias
    np.testing.assert_allclose(out, x / (1 + np.exp(-x)), rtol=1e-5, atol=1e-6)


DEPTHWISE = """
@T.prim_func
def main(A: T.Buffer((1, 8, 18, 18), "float32"), W: T.Buffer((8, 3, 3), "float32"), B: T.Buffer((1, 8, 16, 16), "float32")):
    T.func_attr({"tir.noalias": True})
    for i0, i1, i2, i3, i4, i5 in T.grid(1, 8, 16, 16, 3, 3):
        with T.block("B"):
            v0, v1, v2, v3, v4, v5 = T.axis.remap("SSSSRR", [i0, i1, i2, i3, i4, i5])
            with T.init():
                B[v0, v1, v2, v3] = T.float32(0)
            B[v0, v1, v2, v3] = B[v0, v1, v2, v3] + A[v0, v1, v2 + v4, v3 + v5] * W[v1, v4, v5]
"""


def test_a_tile_read_by_a_sliding_window_is_read_from_its_buffer():
    """0741 of seed 1418610677: 8 x 8 output tiles of a depthwise conv, A's 8 x 10 rows cached
    at the window's row `i4` and read by `i5, i2_1, i3_1` at `T[i2_1, i3_1 + i5]`: 192 reads
    of 80 elements, but every reading loop moves the read, so the reads again are a window's
    overlap, loaded from lines just loaded. The copy goes (kept, its 10-float rows were stored
    as a ymm and 8 bytes that the shifted vector loads straddled: 1.43x TVM at 1 thread)."""
    sch = Schedule(tir_mlir.parse(DEPTHWISE))
    block = sch.get_block("B")
    n, c, y, x, ry, rx = sch.get_loops(block)
    y0, y1 = sch.split(y, factors=[None, 8])
    x0, x1 = sch.split(x, factors=[None, 8])
    sch.reorder(n, c, y0, x0, ry, rx, y1, x1)
    sch.fuse(n, c)
    sch.compute_at(sch.cache_read(block, 0, "local"), ry)
    assert "memref.alloca" not in emit_text(sch.mod.module, "scf")
    rng = np.random.default_rng(6)
    a = rng.standard_normal((1, 8, 18, 18), "float32")
    w = rng.standard_normal((8, 3, 3), "float32")
    b = np.zeros((1, 8, 16, 16), "float32")
    tir_mlir.build(sch.mod)["main"](a, w, b)
    ref = sum(
        a[:, :, ry : ry + 16, rx : rx + 16] * w[None, :, ry, rx, None, None]
        for ry in range(3)
        for rx in range(3)
    )
    np.testing.assert_allclose(b, ref, rtol=1e-4, atol=1e-4)
