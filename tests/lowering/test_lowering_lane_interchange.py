"""Stage `lane-interchange`: a `T.vectorized` loop over rows trades places with the loop along
the rows around it. Checked on the loops around each store after the stage, on the scf (whole
vector loads and stores, no lane-by-lane gathers) and on the numbers against numpy."""

import numpy as np

import tir_mlir
from tir_mlir.context import get_context
from tir_mlir.passes.lowering.lane_interchange import LaneInterchange
from tir_mlir.passes.lowering.pipeline import emit_text
from stage_loops import loops_around_stores
from schedule_everyday import avgpool, depthwise, maxpool, transpose_add, workloads
from workloads import matmul

RNG = np.random.default_rng(0)


def _rows_vectorized(n=12, m=64, k=32, rows=3):
    """A matmul whose innermost loop is `rows` rows of C, vectorized, under its columns `j`."""
    sch = tir_mlir.Schedule(tir_mlir.parse(matmul(n, m, k, noalias=True)))
    i, j, kk = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, rows])
    sch.reorder(i0, kk, j, i1)
    sch.vectorize(i1)
    return sch.mod


def _scf(mod) -> str:
    with get_context():
        return emit_text(mod.module, "scf")


def _check_numbers(mod, n, m, k):
    a = RNG.standard_normal((n, k)).astype("float32")
    b = RNG.standard_normal((k, m)).astype("float32")
    c = np.zeros((n, m), "float32")
    tir_mlir.build(mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_row_lanes_move_inside_the_column_loop():
    mod = _rows_vectorized()
    # the lane loop (i_1) is now outside the column loop, which is the vectorized one
    assert set(loops_around_stores(mod, LaneInterchange.name)) == {("i_0", "k", "i_1", "j")}
    scf = _scf(mod)
    assert "vector.from_elements" not in scf
    assert "vector.load" in scf and "vector<64xf32>" in scf
    _check_numbers(mod, 12, 64, 32)


def test_a_ragged_row_tile_keeps_its_numbers():
    # 13 rows in tiles of 3: the last tile's lanes are guarded (T.where)
    mod = _rows_vectorized(n=13, m=48, k=16)
    assert "vector.from_elements" not in _scf(mod)
    _check_numbers(mod, 13, 48, 16)


def test_contiguous_lanes_stay():
    # vectorized along the row already: nothing to gain, the nest is kept
    sch = tir_mlir.Schedule(tir_mlir.parse(matmul(16, 64, 16, noalias=True)))
    i, j, kk = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, factors=[None, 16])
    sch.reorder(i, kk, j0, j1)
    sch.vectorize(j1)
    assert set(loops_around_stores(sch.mod, LaneInterchange.name)) == {("i", "k", "j_0", "j_1")}
    _check_numbers(sch.mod, 16, 64, 16)


def test_short_rows_stay():
    # 2 columns fill no 128-bit register of floats: too short a vector loop to move the lanes into
    mod = _rows_vectorized(n=12, m=2, k=8)
    assert set(loops_around_stores(mod, LaneInterchange.name)) == {("i_0", "k", "j", "i_1")}
    _check_numbers(mod, 12, 2, 8)


def test_rows_move_inside_four_columns():
    # 4 columns fill one 128-bit register of floats: a whole vector against 3 gathered lanes
    mod = _rows_vectorized(n=12, m=4, k=8)
    assert set(loops_around_stores(mod, LaneInterchange.name)) == {("i_0", "k", "i_1", "j")}
    assert "vector.from_elements" not in _scf(mod)
    _check_numbers(mod, 12, 4, 8)


def test_integer_rows_under_four_columns_stay():
    # an int8 matmul's 64 rows vectorized under 4 columns inside k: integer rows inside a
    # reduction are rows-outside's (one contiguous dot per row, its sum in a register), and 4
    # columns are fewer than MIN_VECTOR_TRIPS (case 0947 of seed 2004163578 ran 4.3x slower)
    sch = tir_mlir.Schedule(tir_mlir.parse(workloads()["matmul256_int8"]))
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 64])
    j0, j1 = sch.split(j, factors=[None, 4])
    k0, k1 = sch.split(k, factors=[None, 64])
    sch.reorder(i0, j0, k0, k1, j1, i1)
    sch.vectorize(i1)
    assert set(loops_around_stores(sch.mod, LaneInterchange.name)) == {
        ("i0_0", "i1_0", "i2_0", "i2_1", "i1_1", "i0_1")
    }


def _maxpool_channels_inside(c=16, hw=32):
    """2x2 max pool, stride 2 (schedule_everyday's), its channels in tiles of 8 inside the
    output columns, 4 unrolled rows inside them, a local tile per channel tile: every access of
    the channel loop jumps a channel (hw * hw floats)."""
    sch = tir_mlir.Schedule(tir_mlir.parse(maxpool(c, hw)))
    block = sch.get_block("B")
    n, ch, y, x, ry, rx = sch.get_loops(block)
    c0, c1 = sch.split(ch, factors=[None, 8])
    y0, y1 = sch.split(y, factors=[None, 4])
    sch.reorder(n, c0, y0, x, c1, y1, ry, rx)
    fused = sch.fuse(n, c0)
    sch.reverse_compute_at(sch.cache_write(block, 0, "local"), fused)
    sch.parallel(fused)
    sch.unroll(y1)
    sch.decompose_reduction(block, ry)
    return sch.mod


def test_gathered_channels_move_outside_the_columns():
    mod = _maxpool_channels_inside()
    # the channel loop (i1_1) now runs outside the column loop (i3), which walks the rows
    pool = {s for s in loops_around_stores(mod, LaneInterchange.name) if "i2_1" in s}
    init = ("i0_i1_0_fused", "i2_0", "i1_1", "i3", "i2_1")
    assert pool == {init, init + ("i4", "i5")}
    a = RNG.standard_normal((1, 16, 32, 32)).astype("float32")
    b = np.zeros((1, 16, 16, 16), "float32")
    tir_mlir.build(mod)["main"](a, b)
    np.testing.assert_array_equal(b, a.reshape(1, 16, 16, 2, 16, 2).max(axis=(3, 5)))


def _rfactor_lanes(n=4, m=64, k=512, lanes=16):
    """A matmul whose k is split by `lanes` and rfactor'd on the inner part (factor_axis=0), the
    rf block's lane loop vectorized: `C_rf[lane, i, j] += A[i, 16 k0 + lane] * B[16 k0 + lane, j]`.
    Along the lanes `A` is contiguous but the same for every column `j`; `C_rf` and `B` jump."""
    sch = tir_mlir.Schedule(tir_mlir.parse(matmul(n, m, k, noalias=True)))
    i, j, kk = sch.get_loops(sch.get_block("C"))
    _, k1 = sch.split(kk, factors=[None, lanes])
    rf = sch.rfactor(k1, factor_axis=0)
    sch.vectorize(sch.get_loops(rf)[-1])
    return sch.mod


def test_rfactor_lanes_move_outside_the_columns():
    mod = _rfactor_lanes()
    # loop-interchange puts the columns (j) inside k_0, this stage the lanes (k_1) outside them
    assert ("i", "k_0", "k_1", "j") in set(loops_around_stores(mod, LaneInterchange.name))
    scf = _scf(mod)
    assert "vector.from_elements" not in scf
    assert "vector<64xf32>" in scf  # the columns, whole vectors
    _check_numbers(mod, 4, 64, 512)


def _maxpool_rows_vectorized_under_window(c=4, hw=32):
    """2x2 max pool, stride 2: its output rows split by 3 (the last part partial) and the 3 rows
    vectorized under the window loops (i4, i5) under the output columns (i3): each lane jumps a
    row, and the 2 x 2 window stands between the column loop and the lane loop."""
    sch = tir_mlir.Schedule(tir_mlir.parse(maxpool(c, hw)))
    n, ch, y, x, ry, rx = sch.get_loops(sch.get_block("B"))
    y0, y1 = sch.split(y, factors=[None, 3])
    sch.reorder(n, ch, y0, x, ry, rx, y1)
    sch.vectorize(y1)
    return sch.mod


def test_row_lanes_under_a_window_move_outside_the_columns():
    mod = _maxpool_rows_vectorized_under_window()
    # the rows (i2_1) trade places with the columns (i3) across the window, in both versions
    # (version-guards' full row tiles and the partial last one)
    assert set(loops_around_stores(mod, LaneInterchange.name)) == {
        ("i0", "i1", "i2_0", "i2_1", "i4", "i5", "i3")
    }
    assert "vector.from_elements" not in _scf(mod)
    a = RNG.standard_normal((1, 4, 32, 32)).astype("float32")
    b = np.zeros((1, 4, 16, 16), "float32")
    tir_mlir.build(mod)["main"](a, b)
    np.testing.assert_array_equal(b, a.reshape(1, 4, 16, 2, 16, 2).max(axis=(3, 5)))


def test_row_lanes_under_channels_move_outside_four_columns():
    """2x2 max pool, stride 2: 12 output rows (the last tile partial) vectorized under the 16
    channels under 4 output columns under the window: the stores move along the channels
    between the lane loop and the columns, 256 floats apart (beyond the rows' span), so the rows
    still trade places with the columns, which end innermost: one 4-float vector of outputs
    where every lane was a scalar load, insert and extract (case 0293 of seed 1699409881)."""
    sch = tir_mlir.Schedule(tir_mlir.parse(maxpool(16, 32)))
    n, ch, y, x, ry, rx = sch.get_loops(sch.get_block("B"))
    y0, y1 = sch.split(y, factors=[None, 12])
    x0, x1 = sch.split(x, factors=[None, 4])
    sch.reorder(n, y0, x0, ry, rx, x1, ch, y1)
    sch.vectorize(y1)
    assert set(loops_around_stores(sch.mod, LaneInterchange.name)) == {
        ("i0", "i2_0", "i3_0", "i4", "i5", "i2_1", "i1", "i3_1")
    }
    assert "vector.from_elements" not in _scf(sch.mod)
    a = RNG.standard_normal((1, 16, 32, 32)).astype("float32")
    b = np.zeros((1, 16, 16, 16), "float32")
    tir_mlir.build(sch.mod)["main"](a, b)
    np.testing.assert_array_equal(b, a.reshape(1, 16, 16, 2, 16, 2).max(axis=(3, 5)))


def _check_avgpool_64x16(mod):
    """`avgpool(64, 16)` (3x3 window, stride 1, over 64 channels of 18x18) against numpy."""
    a = RNG.standard_normal((1, 64, 18, 18)).astype("float32")
    b = np.zeros((1, 64, 16, 16), "float32")
    tir_mlir.build(mod)["main"](a, b)
    windows = sum(a[:, :, r : r + 16, s : s + 16] for r in range(3) for s in range(3))
    np.testing.assert_allclose(b, windows / 9, rtol=1e-5, atol=1e-5)


def test_channel_lanes_apart_trade_with_the_columns_across_the_rows():
    """A 3x3 average pool's 32 channels vectorized (a lane jumps a channel) under its 4 rows under
    8 columns: the lane loop trades with the columns across the rows (a store moves along the
    rows, 16 floats apart, beyond the columns' span): the columns end innermost, vectorized."""
    sch = tir_mlir.Schedule(tir_mlir.parse(avgpool(64, 16)))
    block = sch.get_block("S")
    n, c, h, w, rh, rw = sch.get_loops(block)
    c0, c1 = sch.split(c, factors=[None, 32])
    h0, h1 = sch.split(h, factors=[None, 4])
    w0, w1 = sch.split(w, factors=[None, 8])
    sch.reorder(n, c0, h0, w0, rh, rw, w1, h1, c1)
    sch.fuse(n, c0)
    sch.vectorize(c1)
    sch.decompose_reduction(block, rh)
    update = ("i0_i1_0_fused", "i2_0", "i3_0", "i4", "i5", "i1_1", "i2_1", "i3_1")
    assert update in set(loops_around_stores(sch.mod, LaneInterchange.name))
    _check_avgpool_64x16(sch.mod)


def test_gathered_channels_trade_with_the_columns_across_loops_the_stores_move_along():
    """A 3x3 average pool's channels split by 2 x 16, the 16 innermost (every access jumps a
    channel: a gather per step) under the 4 rows of a tile, the window and the 2 channel groups
    under the columns: the channels and the columns trade places across the loops between,
    along which the stores move apart (rows, channel groups) or stay (the window), so the
    columns end innermost (contiguous stores and loads)."""
    sch = tir_mlir.Schedule(tir_mlir.parse(avgpool(64, 16)))
    n, c, h, w, rh, rw = sch.get_loops(sch.get_block("S"))
    c0, c1, c2 = sch.split(c, factors=[None, 2, 16])
    h0, h1 = sch.split(h, factors=[None, 4])
    sch.reorder(n, c0, h0, w, c1, rh, rw, h1, c2)
    sch.fuse(n, c0, h0)
    update = ("i0_i1_0_i2_0_fused", "i1_2", "i1_1", "i4", "i5", "i2_1", "i3")
    assert update in set(loops_around_stores(sch.mod, LaneInterchange.name))
    _check_avgpool_64x16(sch.mod)


def _depthwise_columns_outside(columns=4):
    """A 3x3 depthwise convolution (schedule_everyday's, 16 channels of 16 x 16) whose output
    columns, in tiles of `columns`, run outside 8 channels outside 8 rows outside the window,
    its init decomposed (case 0736 of seed 1145227567): every access of the rows loop jumps a
    row, and the columns walk every access along its row."""
    sch = tir_mlir.Schedule(tir_mlir.parse(depthwise(16, 16)))
    block = sch.get_block("B")
    n, c, h, w, rh, rw = sch.get_loops(block)
    c0, c1 = sch.split(c, factors=[None, 8])
    h0, h1 = sch.split(h, factors=[None, 8])
    w0, w1 = sch.split(w, factors=[None, columns])
    sch.reorder(n, c0, h0, w0, w1, c1, h1, rh, rw)
    sch.decompose_reduction(block, rh)
    return sch.mod


def _check_depthwise_16x16(mod):
    a = RNG.standard_normal((1, 16, 18, 18)).astype("float32")
    w = RNG.standard_normal((16, 3, 3)).astype("float32")
    b = np.zeros((1, 16, 16, 16), "float32")
    tir_mlir.build(mod)["main"](a, w, b)
    want = sum(
        a[:, :, r : r + 16, s : s + 16] * w[None, :, r, s, None, None]
        for r in range(3)
        for s in range(3)
    )
    np.testing.assert_allclose(b, want, rtol=1e-5, atol=1e-5)


def test_four_gathering_columns_move_innermost_the_other_loops_keep_their_order():
    """4 columns (one 128-bit register of floats) over channels over rows over a 3x3 window:
    the columns move innermost, right above the window LLVM unrolls, and the channels and rows
    all move the stores, so they keep their order (the weights stay the same over the rows)."""
    mod = _depthwise_columns_outside()
    nest = ("i0", "i1_0", "i2_0", "i3_0", "i1_1", "i2_1", "i3_1")
    assert set(loops_around_stores(mod, LaneInterchange.name)) == {nest, nest + ("i4", "i5")}
    _check_depthwise_16x16(mod)


def test_two_gathering_columns_stay():
    # 2 columns fill no 128-bit register of floats: the rows stay innermost
    mod = _depthwise_columns_outside(columns=2)
    nest = ("i0", "i1_0", "i2_0", "i3_0", "i3_1", "i1_1", "i2_1")
    assert set(loops_around_stores(mod, LaneInterchange.name)) == {nest, nest + ("i4", "i5")}
    _check_depthwise_16x16(mod)


def _transpose_rows_vectorized(n=64, rows=16, columns=None, padded=False):
    """C = A^T + B with `rows` rows of C vectorized under a loop along them (0280 / 0783 /
    0584 of seed 1418610677): the lanes scatter C and gather B, only A is contiguous; with
    `columns`, that loop is a strip of them; `padded`: through a cache_write tile whose rows
    `storage_align` pads."""
    sch = tir_mlir.Schedule(tir_mlir.parse(transpose_add(n)))
    block = sch.get_block("C")
    i, j = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, rows])
    if columns is None:
        sch.reorder(i0, j, i1)
    else:
        j0, j1 = sch.split(j, factors=[None, columns])
        sch.reorder(i0, j0, j1, i1)
        if padded:
            sch.reverse_compute_at(sch.cache_write(block, 0, "local"), j0)
            sch.storage_align(block, 0, 0, 16, 1)
    sch.vectorize(i1)
    return sch.mod


def _check_transpose(mod, n=64):
    a, b = (RNG.standard_normal((n, n)).astype("float32") for _ in range(2))
    c = np.zeros((n, n), "float32")
    tir_mlir.build(mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a.T + b, rtol=1e-6)


def test_row_lanes_of_a_transpose_move_outside_the_columns():
    # swapped, C and B are rows and A's read is a transposed tile (register shuffles)
    mod = _transpose_rows_vectorized()
    assert set(loops_around_stores(mod, LaneInterchange.name)) == {("i0_0", "i0_1", "i1")}
    assert "vector.from_elements" not in _scf(mod)
    _check_transpose(mod)


def test_row_lanes_of_a_transpose_under_eight_columns_move_outside_them():
    mod = _transpose_rows_vectorized(columns=8)
    assert set(loops_around_stores(mod, LaneInterchange.name)) == {("i0_0", "i1_0", "i0_1", "i1_1")}
    assert "vector.from_elements" not in _scf(mod)
    _check_transpose(mod)


def test_row_lanes_of_a_transpose_into_a_padded_tile_move_outside_the_columns():
    mod = _transpose_rows_vectorized(rows=8, columns=32, padded=True)
    assert "vector.from_elements" not in _scf(mod)
    _check_transpose(mod)


def test_five_row_lanes_of_a_transpose_stay():
    # 5 columns after a swap make no tile (gathered lane by lane: 1.5x slower, 0036)
    mod = _transpose_rows_vectorized(n=60, rows=5, columns=16)
    assert set(loops_around_stores(mod, LaneInterchange.name)) == {("i0_0", "i1_0", "i1_1", "i0_1")}
    _check_transpose(mod, 60)


def test_four_row_lanes_of_a_transpose_stay():
    # 4 rows of C and B fit an L1 set's ways: swapped, the 4 x 16 tiles ran 1.12x slower
    mod = _transpose_rows_vectorized(rows=4)
    assert set(loops_around_stores(mod, LaneInterchange.name)) == {("i0_0", "i1", "i0_1")}
    _check_transpose(mod)
