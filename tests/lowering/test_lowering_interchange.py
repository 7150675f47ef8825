"""Stage `loop-interchange`: a reduction band that strides across rows moves outside the loop
around it. Checked on the loop nests the stage leaves (which loops enclose each store) and on the
numbers: bit for bit those of the same program built without the stage, and close to numpy."""

from pathlib import Path

import numpy as np
import pytest

import tir_mlir
from mlir import ir

from tir_mlir.context import get_context
from tir_mlir.dialect.ops import Loop
from tir_mlir.passes.lowering import pipeline
from tir_mlir.passes.lowering.common import ancestors, walk
from tir_mlir.passes.lowering.loop_interchange import LoopInterchange
from tir_mlir.passes.lowering.scalar_replace import ScalarReplace
from stage_loops import loops_around_stores

RNG = np.random.default_rng(0)
DATA = Path(__file__).parent.parent / "data" / "programs"

HEADER = """@T.prim_func
def main({params}):
    T.func_attr({{"global_symbol": "main", "tir.noalias": True}})
"""


def _program(params, body, noalias=True):
    text = HEADER.format(params=params) + body
    return tir_mlir.parse(text if noalias else text.replace(', "tir.noalias": True', ""))


def _matmul(
    a_index="vi, vk",
    a_shape="(64, 96)",
    b_index="vk, vj",
    b_shape="(96, 48)",
    c_index="vi, vj",
    c_shape="(64, 48)",
    noalias=True,
    grid=(64, 48, 96),
):
    return _program(
        f'A: T.Buffer({a_shape}, "float32"), B: T.Buffer({b_shape}, "float32"), '
        f'C: T.Buffer({c_shape}, "float32")',
        f"""    for i, j, k in T.grid{grid}:
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[{c_index}] = T.float32(0)
            C[{c_index}] = C[{c_index}] + A[{a_index}] * B[{b_index}]
""",
        noalias,
    )


def _store_nests(mod):
    return loops_around_stores(mod, LoopInterchange.name)


def _run(mod, arrays, interchange=True, monkeypatch=None):
    if not interchange:
        stages = pipeline._cpu_stages
        monkeypatch.setattr(
            pipeline, "_cpu_stages", lambda: [s for s in stages() if s[1] is not LoopInterchange]
        )
    out = [a.copy() for a in arrays]
    tir_mlir.build(mod)["main"](*out)
    if not interchange:
        monkeypatch.undo()
    return out


def _same_numbers(mod, arrays, monkeypatch, exact=True):
    """The outputs with the stage; bit for bit those without it when `exact` (else an FMA may
    have replaced a mul + add: a chain the loop order left latency-bound is not contracted)."""
    with_stage = _run(mod, arrays)
    without = _run(mod, arrays, interchange=False, monkeypatch=monkeypatch)
    for x, y in zip(with_stage, without):
        if exact:
            np.testing.assert_array_equal(x, y)
        else:
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)
    return with_stage


def _inputs(*shapes):
    return [RNG.random(s, dtype=np.float32) for s in shapes]


def test_matmul_reduction_moves_outside_the_column_loop(monkeypatch):
    mod = _matmul()
    assert _store_nests(mod) == [("i", "j"), ("i", "k", "j")]
    a, b, c = _same_numbers(mod, _inputs((64, 96), (96, 48), (64, 48)), monkeypatch)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_column_sum_walks_rows(monkeypatch):
    mod = _program(
        'A: T.Buffer((300, 200), "float32"), S: T.Buffer((200,), "float32")',
        """
    for i, k in T.grid(200, 300):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vk, vi]
""",
    )
    assert _store_nests(mod) == [("i",), ("k", "i")]
    a, s = _same_numbers(mod, _inputs((300, 200), (200,)), monkeypatch)
    np.testing.assert_allclose(s, a.sum(axis=0), rtol=1e-4)


def test_two_reduction_loops_move_together(monkeypatch):
    mod = _program(
        'A: T.Buffer((16, 16, 8), "float32"), B: T.Buffer((16, 8, 40), "float32"), '
        'C: T.Buffer((16, 40), "float32")',
        """
    for i, j, k, l in T.grid(16, 40, 16, 8):
        with T.block("C"):
            vi, vj, vk, vl = T.axis.remap("SSRR", [i, j, k, l])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk, vl] * B[vk, vl, vj]
""",
    )
    assert _store_nests(mod) == [("i", "j"), ("i", "k", "l", "j")]
    a, b, c = _same_numbers(mod, _inputs((16, 16, 8), (16, 8, 40), (16, 40)), monkeypatch)
    np.testing.assert_allclose(c, np.einsum("ikl,klj->ij", a, b), rtol=1e-5)


def test_convolution_row_loop_moves_inside_the_reduction(monkeypatch):
    # x (14) ends up innermost: the rx chain of 3 becomes a vector loop along a row; the rows
    # around it then run side by side (y split, its inner part inside the band: `_jam_around`)
    mod = tir_mlir.parse(
        (DATA / "conv2d_pad.tir")
        .read_text()
        .replace("def conv2d", "def main")
        .replace('"global_symbol": "conv2d", ', "")
    )
    assert _store_nests(mod) == [
        ("n", "c", "h", "w"),
        ("n", "f", "y_o", "y", "x"),
        ("n", "f", "y_o", "rc", "ry", "rx", "y", "x"),
    ]
    a, w, b = _same_numbers(
        mod, _inputs((1, 16, 14, 14), (32, 16, 3, 3), (1, 32, 14, 14)), monkeypatch, exact=False
    )
    pad = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(pad, (3, 3), axis=(2, 3))
    np.testing.assert_allclose(b, np.einsum("nchwyx,fcyx->nfhw", win, w), rtol=1e-4, atol=1e-4)


def test_convolution_with_its_padding_inlined_moves_the_row_loop_too(monkeypatch):
    # compute_inline of the padding: each tap reads A under `if 1 <= y + ry < 15 ...`, an
    # scf.if yielding the load or 0 (a read like a load); x moves inside rc, ry, rx as above.
    sch = tir_mlir.Schedule(
        tir_mlir.parse(
            (DATA / "conv2d_pad.tir")
            .read_text()
            .replace("def conv2d", "def main")
            .replace('"global_symbol": "conv2d", ', "")
        )
    )
    sch.compute_inline(sch.get_block("Apad"))
    mod = sch.mod
    assert _store_nests(mod) == [("n", "f", "y", "x"), ("n", "f", "y", "rc", "ry", "rx", "x")]
    a, w, b = _same_numbers(
        mod, _inputs((1, 16, 14, 14), (32, 16, 3, 3), (1, 32, 14, 14)), monkeypatch, exact=False
    )
    pad = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(pad, (3, 3), axis=(2, 3))
    np.testing.assert_allclose(b, np.einsum("nchwyx,fcyx->nfhw", win, w), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "why, mod",
    [
        # two columns accumulate into one element: their updates would interleave
        ("not one element per column", _matmul(c_index="vi, vj // 2", c_shape="(64, 24)")),
        # without tir.noalias, C may be A or B
        ("buffers may alias", _matmul(noalias=False)),
    ],
)
def test_nest_kept(why, mod, monkeypatch):
    assert _store_nests(mod) == [("i", "j"), ("i", "j", "k")], why
    arrays = _same_numbers(
        mod,
        [
            RNG.random(tuple(p.type.shape), dtype=np.float32)
            for p in mod.module.body.operations[0].arguments
        ],
        monkeypatch,
    )
    assert np.isfinite(arrays[-1]).all()


def test_a_second_address_of_the_written_buffer_keeps_the_nest(monkeypatch):
    # D[i, 0] is read while other columns of row i are written: order matters across j
    mod = _program(
        'A: T.Buffer((16, 96), "float32"), B: T.Buffer((96, 24), "float32"), '
        'D: T.Buffer((16, 24), "float32")',
        """
    for i, j, k in T.grid(16, 24, 96):
        with T.block("D"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(D[vi, 0:24], A[vi, vk], B[vk, vj])
            T.writes(D[vi, vj])
            with T.init():
                D[vi, vj] = T.float32(0)
            D[vi, vj] = D[vi, vj] + A[vi, vk] * B[vk, vj] + D[vi, 0] * T.float32(0.5)
""",
    )
    assert _store_nests(mod) == [("i", "j"), ("i", "j", "k")]
    _same_numbers(mod, _inputs((16, 96), (96, 24), (16, 24)), monkeypatch)


def test_a_band_llvm_unrolls_whole_stays_inside():
    # K = 8: LLVM unrolls k and vectorizes j itself, with C in registers (2x faster)
    mod = _matmul(a_shape="(64, 8)", b_shape="(8, 48)", grid=(64, 48, 8))
    assert _store_nests(mod) == [("i", "j"), ("i", "j", "k")]


def test_scheduled_loops_keep_their_order(monkeypatch):
    sch = tir_mlir.Schedule(_matmul())
    _, j, _ = sch.get_loops(sch.get_block("C"))
    sch.vectorize(j)  # a loop with a kind is the schedule's choice
    assert _store_nests(sch.mod) == [("i", "j"), ("i", "j", "k")]
    a, b, c = _same_numbers(sch.mod, _inputs((64, 96), (96, 48), (64, 48)), monkeypatch)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_a_column_loop_beside_a_fused_parallel_loop_moves_inside(monkeypatch):
    """Split i and j, the outer pieces fused into one parallel loop: the rows and columns of C
    a serial column loop reaches are `f floordiv 6 * 4 + i1`, `f mod 6 * 8 + j1`. The
    divisions are of the fused IV, constant in j1 and k: k still moves outside j1, and the
    rows around it run side by side (an FMA may replace the mul + add of their chains)."""
    sch = tir_mlir.Schedule(_matmul())
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 4])
    j0, j1 = sch.split(j, factors=[None, 8])
    sch.reorder(i0, j0, i1, j1, k)
    sch.parallel(sch.fuse(i0, j0))
    assert _store_nests(sch.mod) == [
        ("i_0_j_0_fused", "i_1_o", "i_1", "j_1"),
        ("i_0_j_0_fused", "i_1_o", "k", "i_1", "j_1"),
    ]
    a, b, c = _same_numbers(
        sch.mod, _inputs((64, 96), (96, 48), (64, 48)), monkeypatch, exact=False
    )
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_a_tail_down_a_column_keeps_its_band_inside(monkeypatch):
    """A T.vectorized tail over rows (i2: lanes a row of A apart) under a column-tile loop i1:
    i1 steps A to the span after the tail's, but each lane is a line of its own, so moving k
    outside i1 streams nothing (it made a cache-written f64 matmul 3x slower)."""
    sch = tir_mlir.Schedule(_matmul())
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1, i2 = sch.split(i, factors=[None, 2, 16])
    sch.reorder(i0, j, i1, k, i2)
    fused = sch.fuse(i0, j)
    cache = sch.cache_write(sch.get_block("C"), 0, "local")
    sch.reverse_compute_at(cache, fused)
    sch.vectorize(sch.get_loops(cache)[-1])
    sch.vectorize(i2)
    assert _store_nests(sch.mod)[:2] == [("i_0_j_fused", "i_1", "k", "i_2")] * 2
    a, b, c = _same_numbers(sch.mod, _inputs((64, 96), (96, 48), (64, 48)), monkeypatch)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


@pytest.mark.parametrize("a_index", ["vi, vk", "vk, vi"])
@pytest.mark.parametrize("b_index", ["vk, vj", "vj, vk"])
@pytest.mark.parametrize("c_index", ["vi, vj", "vj, vi"])
def test_every_layout_of_a_matmul_computes_the_same(a_index, b_index, c_index, monkeypatch):
    # whichever loop order the stage picks, the numbers are those of the loops as written
    shape = {"vi": 20, "vj": 24, "vk": 80}
    dims = [tuple(shape[v] for v in idx.split(", ")) for idx in (a_index, b_index, c_index)]
    mod = _matmul(
        a_index, str(dims[0]), b_index, str(dims[1]), c_index, str(dims[2]), grid=(20, 24, 80)
    )
    a, b, c = _same_numbers(mod, _inputs(*dims), monkeypatch, exact=False)
    spec = (
        "".join(v[1] for v in a_index.split(", "))
        + ","
        + "".join(v[1] for v in b_index.split(", "))
        + "->"
        + "".join(v[1] for v in c_index.split(", "))
    )
    np.testing.assert_allclose(c, np.einsum(spec, a, b), rtol=1e-5, atol=1e-5)


def _matmul_bias_relu():
    """D = relu(A @ B + bias) as two blocks: the matmul C, then D reading it."""
    return _program(
        'A: T.Buffer((32, 64), "float32"), B: T.Buffer((64, 48), "float32"), '
        'bias: T.Buffer((48,), "float32"), D: T.Buffer((32, 48), "float32")',
        """
    C = T.alloc_buffer((32, 48))
    for i, j, k in T.grid(32, 48, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(32, 48):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj] + bias[vj], T.float32(0))
""",
    )


def test_a_reduction_computed_at_its_consumers_row_walks_rows(monkeypatch):
    """`compute_at` of a matmul under a 16-wide piece of its consumer's row: each of the 16
    outputs ran its own k loop down a column of B (bindings through `affine.apply`). The k loop
    moves outside; the 16 outputs, now innermost along B's row, are then vectorized and carried
    across k (auto-vectorize, scalar-replace)."""
    mod = _matmul_bias_relu()
    sch = tir_mlir.Schedule(mod)
    i, j = sch.get_loops(sch.get_block("D"))
    j0, j1 = sch.split(j, factors=[None, 16])
    sch.vectorize(j1)
    sch.compute_at(sch.get_block("C"), j0)
    assert _store_nests(sch.mod) == [
        ("i", "j_0", "ax0"),
        ("i", "j_0", "ax1", "ax0"),
        ("i", "j_0", "j_1"),
    ]
    assert "-> (vector<16xf32>)" in pipeline.emit_text(sch.mod.module, "scf")
    a, b, bias, d = _same_numbers(
        sch.mod, _inputs((32, 64), (64, 48), (48,), (32, 48)), monkeypatch, exact=False
    )
    np.testing.assert_allclose(d, np.maximum(a @ b + bias, 0), rtol=1e-5, atol=1e-5)


def test_a_reduction_computed_at_each_element_of_its_consumer_moves_outside(monkeypatch):
    """`compute_at` of a matmul at its consumer's innermost loop: each element runs a k loop
    down a column of B and then its bias + relu, ops after the band in j's body. The k loop
    moves outside j; the bias + relu runs for every j afterwards, in a copy of j."""
    mod = _matmul_bias_relu()
    sch = tir_mlir.Schedule(mod)
    i, _ = sch.get_loops(sch.get_block("D"))
    sch.parallel(i)
    sch.compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("D"))[1])
    assert _store_nests(sch.mod) == [("i", "j"), ("i", "ax0", "j"), ("i", "j")]
    a, b, bias, d = _same_numbers(
        sch.mod, _inputs((32, 64), (64, 48), (48,), (32, 48)), monkeypatch, exact=False
    )
    np.testing.assert_allclose(d, np.maximum(a @ b + bias, 0), rtol=1e-5, atol=1e-5)


def test_an_epilogue_reading_another_element_keeps_the_nest(monkeypatch):
    """An op after the band that reads an element another j writes: the band's j cannot move
    inside it (the epilogue would read the finished sums of later columns)."""
    mod = _program(
        'A: T.Buffer((32, 64), "float32"), B: T.Buffer((64, 48), "float32"), '
        'C: T.Buffer((32, 48), "float32"), D: T.Buffer((32, 48), "float32")',
        """
    for i, j in T.grid(32, 48):
        for k in range(64):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, 47 - vj]
""",
    )
    assert _store_nests(mod) == [("i", "j"), ("i", "j", "k"), ("i", "j")]
    _same_numbers(mod, _inputs((32, 64), (64, 48), (32, 48), (32, 48)), monkeypatch)


def test_convolution_over_constant_weights_moves_too(monkeypatch):
    # Weights imported from a model are a T.allocate_const (a constant memref.global): nothing
    # writes it, so it cannot alias the output and the row loop moves inside as above.
    w = RNG.random((4, 8, 3, 3), dtype=np.float32) - 0.5
    values = ", ".join(repr(float(v)) for v in w.ravel())
    mod = _program(
        'A: T.Buffer((1, 8, 18, 18), "float32"), B: T.Buffer((1, 4, 16, 16), "float32")',
        f"""    wc = T.allocate_const([{values}], "float32", [4, 8, 3, 3])
    W = T.decl_buffer((4, 8, 3, 3), data=wc)
    for n, f, y, x, rc, ry, rx in T.grid(1, 4, 16, 16, 8, 3, 3):
        with T.block("conv"):
            vn, vf, vy, vx, vc, vry, vrx = T.axis.remap("SSSSRRR", [n, f, y, x, rc, ry, rx])
            with T.init():
                B[vn, vf, vy, vx] = T.float32(0)
            B[vn, vf, vy, vx] = B[vn, vf, vy, vx] + A[vn, vc, vy + vry, vx + vrx] * W[vf, vc, vry, vrx]
""",
    )
    assert _store_nests(mod) == [
        ("n", "f", "y_o", "y", "x"),
        ("n", "f", "y_o", "rc", "ry", "rx", "y", "x"),
    ]
    a, b = _same_numbers(mod, _inputs((1, 8, 18, 18), (1, 4, 16, 16)), monkeypatch, exact=False)
    win = np.lib.stride_tricks.sliding_window_view(a, (3, 3), axis=(2, 3))
    np.testing.assert_allclose(b, np.einsum("nchwyx,fcyx->nfhw", win, w), rtol=1e-4, atol=1e-4)


def _strips(a_index, decompose=False):
    """A sum over k of A[a_index] in 32-element strips of i, the strip's lanes vectorized inside
    k (issue 28's column and row sums: split, reorder, vectorize; the T.init stays in k)."""
    a_shape = "(300, 256)" if a_index == "vk, vi" else "(256, 300)"
    sch = tir_mlir.Schedule(
        _program(
            f'A: T.Buffer({a_shape}, "float32"), S: T.Buffer((256,), "float32")',
            f"""
    for i, k in T.grid(256, 300):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[{a_index}]
""",
        )
    )
    i, k = sch.get_loops(sch.get_block("S"))
    i0, i1 = sch.split(i, factors=[None, 32])
    sch.reorder(i0, k, i1)
    sch.vectorize(i1)
    if decompose:
        sch.decompose_reduction(sch.get_block("S"), k)
    return sch.mod


def test_a_column_strip_moves_inside_the_reduction(monkeypatch):
    """Each k reads 128 bytes of a row 1 KiB after the last; with the strips inside k, A is
    read along its rows (a 1024 x 1024 column sum 0.20 -> 0.14 ms, TVM 0.16). The vectorized
    strip stays innermost."""
    mod = _strips("vk, vi")
    assert _store_nests(mod) == [("k", "i_0", "i_1")] * 2  # (the init's store and the sum's)
    a, s = _same_numbers(mod, _inputs((300, 256), (256,)), monkeypatch)
    np.testing.assert_allclose(s, a.sum(axis=0), rtol=1e-4)


def test_a_row_strip_stays_outside_the_reduction(monkeypatch):
    """A row sum's strip: k already walks A along its rows, the strip's rows are 1200 bytes
    apart: nothing to gain."""
    mod = _strips("vi, vk")
    assert _store_nests(mod) == [("i_0", "k", "i_1")] * 2
    a, s = _same_numbers(mod, _inputs((256, 300), (256,)), monkeypatch)
    np.testing.assert_allclose(s, a.sum(axis=1), rtol=1e-4)


def test_a_column_strip_with_its_init_loop_moves_too(monkeypatch):
    """decompose_reduction puts the init in a loop before k: it runs for every strip first (a
    copy of the strip loop), then the sums with the strips inside k."""
    mod = _strips("vk, vi", decompose=True)
    assert _store_nests(mod) == [("i_0", "i_1_init"), ("k", "i_0", "i_1")]
    a, s = _same_numbers(mod, _inputs((300, 256), (256,)), monkeypatch)
    np.testing.assert_allclose(s, a.sum(axis=0), rtol=1e-4)


def _column_sum(rows=300, cols=256):
    return _program(
        f'A: T.Buffer(({rows}, {cols}), "float32"), S: T.Buffer(({cols},), "float32")',
        f"""
    for i, k in T.grid({cols}, {rows}):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vk, vi]
""",
    )


@pytest.mark.parametrize("decompose", [False, True])
def test_a_parallel_column_loop_is_split_and_its_serial_part_moves_inside(decompose, monkeypatch):
    """A parallel loop over the columns of a column sum: each iteration walked a column (a new
    cache line and page per k). Split, the threads share strips of columns whose serial loop
    moves inside k: rows are read along, a vector accumulator per strip."""
    sch = tir_mlir.Schedule(_column_sum())
    i, k = sch.get_loops(sch.get_block("S"))
    sch.parallel(i)
    if decompose:
        sch.decompose_reduction(sch.get_block("S"), k)
    assert _store_nests(sch.mod) == [("i_o", "i"), ("i_o", "k", "i")]
    a, s = _same_numbers(sch.mod, _inputs((300, 256), (256,)), monkeypatch)
    np.testing.assert_allclose(s, a.sum(axis=0), rtol=1e-4)


def test_an_rfactored_column_sum_with_its_init_in_a_vectorized_tail_builds(monkeypatch):
    """rfactor of a split reduction, its lanes vectorized: the parallel column loop's split
    index is computed where the tail's T.init (`if k_0 == 0`, which stays in the tail) reads
    it, not after it (the build failed: an operand that did not dominate its use)."""
    sch = tir_mlir.Schedule(_column_sum(rows=1024, cols=128))
    _, k = sch.get_loops(sch.get_block("S"))
    _, k_1 = sch.split(k, factors=[None, 32])
    rf = sch.rfactor(k_1, factor_axis=0)
    sch.parallel(sch.get_loops(rf)[0])
    sch.vectorize(sch.get_loops(rf)[-1])
    a, s = _same_numbers(sch.mod, _inputs((1024, 128), (128,)), monkeypatch)
    np.testing.assert_allclose(s, a.sum(axis=0), rtol=1e-4)


def test_an_init_left_in_a_split_reduction_moves_out_of_it(monkeypatch):
    """k split in two: the T.init stays in the band as `if k_0 * 4 + k_1 == 0`, true at the
    band's first iteration only; it runs before the band instead, and the band moves."""
    sch = tir_mlir.Schedule(_column_sum())
    _, k = sch.get_loops(sch.get_block("S"))
    sch.split(k, factors=[None, 4])
    assert _store_nests(sch.mod) == [("i",), ("k_0", "k_1", "i")]
    a, s = _same_numbers(sch.mod, _inputs((300, 256), (256,)), monkeypatch)
    np.testing.assert_allclose(s, a.sum(axis=0), rtol=1e-4)


@pytest.mark.parametrize("rows", [4, 6])
def test_a_split_matmuls_init_moves_out_of_its_band(rows, monkeypatch):
    """k split in two under a split row loop: the T.init's `if` stores at an `affine.apply`
    that lists the band's IVs too (a split block's binding lists every loop's), though it
    does not read them; it runs before the band, and the band moves outside j. Rows split
    by 6 (64 is not a multiple) are versioned: the full tile's loops, tagged as
    version-guards' copies, move as those of an unguarded nest; the guarded tile stays."""
    sch = tir_mlir.Schedule(_matmul())
    i, _, k = sch.get_loops(sch.get_block("C"))
    sch.split(i, factors=[None, rows])
    sch.split(k, factors=[None, 32])
    moved = [("i_0", "i_1", "j"), ("i_0", "i_1", "k_0", "k_1", "j")]
    guarded = [("i_0", "i_1", "j", "k_0", "k_1")] * 2 if rows == 6 else []
    assert _store_nests(sch.mod) == moved + guarded
    a, b, c = _same_numbers(sch.mod, _inputs((64, 96), (96, 48), (64, 48)), monkeypatch)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


NEST_WITH_IF = """
func.func @main(%A: memref<64x64xf32> {llvm.noalias}, %S: memref<64xf32> {llvm.noalias}) {
  %zero = arith.constant 0.0 : f32
  affine.for %i = 0 to 64 {
    affine.for %k0 = 0 to 16 {
      affine.for %k1 = 0 to 4 {
        affine.if affine_set<(d0, d1) : (COND == 0)>(%k0, %k1) {
          memref.store %zero, %S[%i] : memref<64xf32>
        }
        %k = affine.apply affine_map<(d0, d1) -> (d0 * 4 + d1)>(%k0, %k1)
        %s = memref.load %S[%i] : memref<64xf32>
        %a = memref.load %A[%k, %i] : memref<64x64xf32>
        %t = arith.addf %s, %a : f32
        memref.store %t, %S[%i] : memref<64xf32>
      }
    }
  }
  return
}
"""


@pytest.mark.parametrize(
    "cond, moved",
    [("d0 * 4 + d1", True), ("d0 + d1", True), ("d1", False), ("d0 - d1", False)],
)
def test_only_an_if_of_the_bands_first_iteration_moves_out(cond, moved):
    """`k1 == 0` holds at every k0 (the sum restarts), `k0 - k1 == 0` on a diagonal: such an
    `if` is not an init before the band, and the nest stays."""
    with get_context():
        module = ir.Module.parse(NEST_WITH_IF.replace("COND", cond))
        LoopInterchange()(module)
        stores = [o for o in walk(module.body.operations[0]) if o.name == "memref.store"]
        extents = [Loop(p).extent for p in reversed(list(ancestors(stores[-1])))]
        assert ("affine.if" not in str(module)) == moved
    assert extents == ([16, 4, 64] if moved else [64, 16, 4])


def _row_sum(rows=64, cols=300, dtype="float32"):
    return _program(
        f'A: T.Buffer(({rows}, {cols}), "{dtype}"), S: T.Buffer(({rows},), "{dtype}")',
        f"""
    for i, k in T.grid({rows}, {cols}):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.{dtype}(0)
            S[vi] = S[vi] + A[vi, vk]
""",
    )


@pytest.mark.parametrize("parallel", [False, True])
def test_a_row_loop_is_split_so_several_rows_chains_run_side_by_side(parallel, monkeypatch):
    """A row sum is one chain of dependent adds per row, k walking the row. The row loop is
    split and its inner part moves inside k: the rows' chains interleave, each in its order
    (the numbers are bit for bit those of the chains one after the other)."""
    sch = tir_mlir.Schedule(_row_sum())
    i, k = sch.get_loops(sch.get_block("S"))
    if parallel:
        sch.parallel(i)
        sch.decompose_reduction(sch.get_block("S"), k)
    assert _store_nests(sch.mod) == [("i_o", "i"), ("i_o", "k", "i")]
    a, s = _same_numbers(sch.mod, _inputs((64, 300), (64,)), monkeypatch)
    np.testing.assert_allclose(s, a.sum(axis=1), rtol=1e-4)


def test_an_integer_row_chain_stays():
    """LLVM splits an integer sum into vector lanes itself (integers reassociate)."""
    assert _store_nests(_row_sum(dtype="int32")) == [("i",), ("i", "k")]


def test_a_short_row_chain_stays():
    """8 adds a row: LLVM unrolls k whole and the row loop vectorizes as it is."""
    assert _store_nests(_row_sum(cols=8)) == [("i",), ("i", "k")]


def test_a_reduction_streaming_along_both_rows_runs_several_columns_side_by_side(monkeypatch):
    """A @ B.T: k already walks rows of A and B, one FMA chain per element of C. j is split
    and its inner part moves inside k, as a row sum's rows (an FMA may then replace the mul +
    add of the single chain: close numbers, not bit for bit)."""
    mod = _matmul(b_index="vj, vk", b_shape="(48, 96)")
    assert _store_nests(mod) == [("i", "j_o", "j"), ("i", "j_o", "k", "j")]
    a, b, c = _same_numbers(mod, _inputs((64, 96), (48, 96), (64, 48)), monkeypatch, exact=False)
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-5)


def _row_strip_tile(lanes=16, vectorize=True):
    """0208's schedule (a random 512 matmul at 1.4x TVM): j split by 16 and vectorized, the
    rows and column strips fused around k (0842's: by 8, not vectorized, the init decomposed)."""
    sch = tir_mlir.Schedule(_matmul(b_shape="(96, 64)", c_shape="(64, 64)", grid=(64, 64, 96)))
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, factors=[None, lanes])
    sch.reorder(i, j0, k, j1)
    sch.parallel(sch.fuse(i, j0))
    if vectorize:
        sch.vectorize(j1)
    else:
        sch.decompose_reduction(sch.get_block("C"), k)
    return sch.mod


def test_strips_of_a_vectorized_tail_run_side_by_side(monkeypatch):
    """One 16-lane strip per iteration of the loop around k is one chain of dependent vector
    adds, bound by their latency. That loop is split and its inner part moves inside k,
    unrolled: several strips' chains run side by side, each in its order. Fused with the
    rows, the strip's row and column (`f floordiv 4`, `f mod 4`) fold to linear forms of the
    inner part, and the strips' accumulators stay in registers across k."""
    mod = _row_strip_tile()
    fused = "i_j_0_fused"
    assert _store_nests(mod) == [(fused + "_o", "k", fused, "j_1")] * 2  # init, update
    with get_context():
        scf_text = str(pipeline.lower(mod.module, emit="scf"))
    assert scf_text.count("iter_args") == 1 and "-> (vector<16xf32>, vector<16xf32>" in scf_text
    a, b, c = _same_numbers(mod, _inputs((64, 96), (96, 64), (64, 64)), monkeypatch, exact=False)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_strips_of_a_plain_inner_loop_run_side_by_side(monkeypatch):
    """The same with the strip's loop left plain (auto-vectorize vectorizes it later) and the
    init decomposed into a loop before k: the init loop runs for every strip first, and the
    strips' chains run side by side inside k."""
    mod = _row_strip_tile(lanes=8, vectorize=False)
    assert _store_nests(mod) == [
        ("i_j_0_fused_o", "i_j_0_fused", "j_1_init"),
        ("i_j_0_fused_o", "k", "i_j_0_fused", "j_1"),
    ]
    with get_context():
        scf_text = str(pipeline.lower(mod.module, emit="scf"))
    assert "-> (vector<8xf32>, vector<8xf32>" in scf_text
    a, b, c = _same_numbers(mod, _inputs((64, 96), (96, 64), (64, 64)), monkeypatch, exact=False)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_rows_around_a_short_column_loop_moved_inside_k_run_side_by_side(monkeypatch):
    """0087's shape (seed 553787408, a random batch matmul at 1.76x TVM at 1 thread): a
    4-column loop under the rows and around k moves inside k as its tail, and each row is
    then one chain of 4-lane adds down the whole reduction. The row loop around it is split
    and its inner part moves inside k too, unrolled: as many rows' chains as keep the FMA
    units busy run side by side."""
    sch = tir_mlir.Schedule(_matmul())
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, i, j1, k)
    mod = sch.mod
    assert _store_nests(mod) == [("j_0", "i_o", "i", "j_1"), ("j_0", "i_o", "k", "i", "j_1")]
    with get_context():
        scf_text = str(pipeline.lower(mod.module, emit="scf"))
    assert "-> (vector<4xf32>, vector<4xf32>" in scf_text
    a, b, c = _same_numbers(mod, _inputs((64, 96), (96, 48), (64, 48)), monkeypatch, exact=False)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def _rows_tile(fused: bool):
    """A register tile of 2 rows x a vectorized strip under k, the init decomposed: 0939's
    schedule (rows and 4-lane strips fused and parallel around k) or 0590's (2-lane strips in
    a plain loop around k), random 64x1024x512 matmuls at 1.3-1.5x TVM (seed 2022208947)."""
    sch = tir_mlir.Schedule(_matmul(b_shape="(96, 64)", c_shape="(64, 64)", grid=(64, 64, 96)))
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 2])
    if fused:
        j0, j1 = sch.split(j, factors=[None, 4])
        sch.reorder(i0, j0, k, i1, j1)
        sch.parallel(sch.fuse(i0, j0))
    else:
        j0, jp, j1 = sch.split(j, factors=[None, 8, 2])
        sch.reorder(i0, j0, jp, k, i1, j1)
        sch.parallel(i0)
    sch.vectorize(j1)
    sch.decompose_reduction(sch.get_block("C"), k)
    return sch.mod


@pytest.mark.parametrize("fused", [True, False])
def test_strips_of_a_row_tile_run_side_by_side(fused, monkeypatch):
    """The tile's rows are chains already, but 2 rows of one strip are too few to keep the
    FMA units busy: the loop around k is split and its inner part moves inside the rows'
    loop, unrolled, above the strip; the decomposed init (a loop over the rows and lanes) runs
    for every strip first, and k carries rows x strips accumulators."""
    mod = _rows_tile(fused)
    nests = _store_nests(mod)
    j = "i_0_j_0_fused" if fused else "j_1"
    assert nests[1][-3:] == ("i_1", j, "j_1" if fused else "j_2") and nests[1][-4] == "k"
    with get_context():
        scf_text = str(pipeline.lower(mod.module, emit="scf"))
    carried = "vector<4xf32>, " * 7 if fused else "vector<2xf32>, " * 7
    assert carried in scf_text
    a, b, c = _same_numbers(mod, _inputs((64, 96), (96, 64), (64, 64)), monkeypatch, exact=False)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_a_column_loop_around_row_lanes_moves_inside_the_band(monkeypatch):
    """0051's schedule (seed 2022208947, a 64x1024x512 matmul at 1.4x TVM): 4 rows vectorized
    under the columns and k, each lane a gather down a column of B at every k. The columns'
    whole range lies within one row step, so the tail's elements of two columns are apart: j
    moves inside the band (C streamed along its rows; lane-interchange then vectorizes the
    columns), the decomposed init first."""
    sch = tir_mlir.Schedule(_matmul(b_shape="(96, 64)", c_shape="(64, 64)", grid=(64, 64, 96)))
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 4])
    k0, k1 = sch.split(k, factors=[None, 4])
    sch.reorder(i0, j, k0, k1, i1)
    sch.parallel(i0)
    sch.vectorize(i1)
    sch.decompose_reduction(sch.get_block("C"), k0)
    assert _store_nests(sch.mod) == [("i_0", "j", "i_1_init"), ("i_0", "k_0", "k_1", "j", "i_1")]
    a, b, c = _same_numbers(sch.mod, _inputs((64, 96), (96, 64), (64, 64)), monkeypatch)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def _tile_under_k(rows):
    """0199's schedule (a random 512 matmul at 1.6x TVM), smaller: k outside a tile of
    `rows` x 64 columns of a 256-wide C, the init decomposed. C's rows are 1 KiB apart, so a
    row's 4 lines fall in the L1 sets of every fourth row."""
    mod = _matmul(b_shape="(96, 256)", c_shape="(64, 256)", grid=(64, 256, 96))
    sch = tir_mlir.Schedule(mod)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, rows])
    j0, j1 = sch.split(j, factors=[None, 64])
    sch.reorder(i0, j0, k, i1, j1)
    sch.decompose_reduction(block, k)
    return sch.mod


def test_a_reduction_outside_a_tile_overflowing_l1_sets_moves_inside_its_rows(monkeypatch):
    """Each step of k loads and stores the whole 64 x 64 tile: 256 lines in 16 L1 sets (16
    lines a set, more than any L1's ways), so every step reads it from L2. k moves inside
    the rows, above the columns: each row's 4 vectors stay in registers over k."""
    mod = _tile_under_k(64)
    assert _store_nests(mod) == [
        ("i_0", "j_0", "i_1_init", "j_1_init"),
        ("i_0", "j_0", "i_1", "k", "j_1"),
    ]
    with get_context():
        scf_text = str(pipeline.lower(mod.module, emit="scf"))
    assert "iter_args" in scf_text and "-> (vector<64xf32>)" in scf_text
    a, b, c = _same_numbers(mod, _inputs((64, 96), (96, 256), (64, 256)), monkeypatch, exact=False)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_a_reduction_outside_a_tile_that_fits_l1_stays():
    # 16 rows x 4 lines: 4 lines in each of 16 sets (k stays outside the rows it updates; a
    # strip of them may move outside k to fit the registers, the next test)
    assert _store_nests(_tile_under_k(16))[1][-3:] == ("k", "i_1", "j_1")


def test_rows_of_a_tile_over_the_registers_move_outside_k_in_strips(monkeypatch):
    """0681 of seed 1418610677 (a random 512 matmul at 1.7x TVM, 1 thread), smaller: 8 rows of
    4 vector registers each under k (32 accumulators: more than `scalar-replace` carries whole,
    and LLVM spilled and shuffled them at every step). The rows split in strips that fit, the
    strips' loop outside k: each strip's accumulators stay in registers over k."""
    lanes = ScalarReplace.for_target("llvm").register_bits // 32
    cols = 4 * lanes
    shapes = dict(a_shape="(16, 96)", b_shape=f"(96, {2 * cols})", c_shape=f"(16, {2 * cols})")
    mod = _matmul(**shapes, grid=(16, 2 * cols, 96))
    sch = tir_mlir.Schedule(mod)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 8])
    j0, j1 = sch.split(j, factors=[None, cols])
    sch.reorder(i0, j0, k, i1, j1)
    sch.unroll(i1)
    sch.vectorize(j1)
    sch.decompose_reduction(block, k)
    assert _store_nests(sch.mod)[1] == ("i_0", "j_0", "i_1_o", "k", "i_1", "j_1")
    a, b, c = _same_numbers(
        sch.mod, _inputs((16, 96), (96, 2 * cols), (16, 2 * cols)), monkeypatch, exact=False
    )
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def _conv1d(order="x, co, rx, rc"):
    """A direct conv1d, NCW (one image), its loops in `order`."""
    grid = dict(x=64, co=16, rx=3, rc=16)
    names = [n.strip() for n in order.split(",")]
    kinds = "".join("S" if n in ("x", "co") else "R" for n in names)
    return _program(
        'A: T.Buffer((1, 16, 66), "float32"), W: T.Buffer((16, 16, 3), "float32"), '
        'B: T.Buffer((1, 16, 64), "float32")',
        f"""    for {order} in T.grid({", ".join(str(grid[n]) for n in names)}):
        with T.block("B"):
            {", ".join("v" + n for n in names)} = T.axis.remap("{kinds}", [{order}])
            with T.init():
                B[0, vco, vx] = T.float32(0)
            B[0, vco, vx] = B[0, vco, vx] + A[0, vrc, vx + vrx] * W[vco, vrc, vrx]
""",
    )


def _check_conv1d(b, a, w):
    ref = sum(w[:, :, rx] @ a[0, :, rx : rx + 64] for rx in range(3))
    np.testing.assert_allclose(b[0], ref, rtol=1e-4, atol=1e-4)


def test_output_channels_over_a_reduction_across_input_channels_run_side_by_side(monkeypatch):
    """0657 of seed 341660906 (conv1d at 2.2x TVM): each output channel is one chain of
    dependent FMAs over rx, rc, and rc steps A across its rows (66 floats a step). The chains
    share that load (co does not move it) and W steps 3 floats: the band is latency-bound
    all the same, so co is split and its inner part moves inside rc."""
    mod = _conv1d()
    assert _store_nests(mod) == [("x", "co_o", "co"), ("x", "co_o", "rx", "rc", "co")]
    a, w, b = _same_numbers(mod, _inputs((1, 16, 66), (16, 16, 3), (1, 16, 64)), monkeypatch)
    _check_conv1d(b, a, w)


def test_input_channels_copied_inside_the_band_run_output_channels_side_by_side(monkeypatch):
    """0657's schedule: rc split, and A's 4 channels of the window tap cached at rx, inside
    the reduction band (rc_0, rx, rc_1). `forward-buffer-copies` reads A itself there before
    this stage (the band is then perfect) and co moves inside it; the T.init left in the split
    band (stored at B's index 0, a constant inside the band) runs before it."""
    sch = tir_mlir.Schedule(_conv1d("x, co, rc, rx"))
    block = sch.get_block("B")
    x, co, rc, rx = sch.get_loops(block)
    rc0, rc1 = sch.split(rc, factors=[None, 4])
    sch.reorder(x, co, rc0, rx, rc1)
    sch.compute_at(sch.cache_read(block, 1, "global"), rx)
    assert _store_nests(sch.mod) == [
        ("x", "co_o", "co"),
        ("x", "co_o", "rc_0", "rx", "rc_1", "co"),
    ]
    a, w, b = _same_numbers(sch.mod, _inputs((1, 16, 66), (16, 16, 3), (1, 16, 64)), monkeypatch)
    _check_conv1d(b, a, w)


def _int8_matmul_columns_outside():
    """0861's loop order (a random 256 int8 matmul at 1.7x TVM): the columns outside the rows,
    k innermost down a column of B."""
    mod = _program(
        'A: T.Buffer((32, 128), "int8"), B: T.Buffer((128, 24), "int8"), '
        'C: T.Buffer((32, 24), "int32")',
        """    for i, j, k in T.grid(32, 24, 128):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vk, vj])
""",
    )
    sch = tir_mlir.Schedule(mod)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.reorder(j, i, k)
    return sch.mod


def test_integer_rows_sharing_a_column_of_b_run_side_by_side(monkeypatch):
    """Each element's k loop is one integer chain reading B down a column: LLVM's vector lanes
    of one chain gather B, an insert per byte. The row loop is split and its inner part moves
    inside k, so the rows' chains share each byte of B's column."""
    mod = _int8_matmul_columns_outside()
    assert _store_nests(mod) == [("j", "i_o", "i"), ("j", "i_o", "k", "i")]
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 128, (32, 128), dtype=np.int8)
    b = rng.integers(-128, 128, (128, 24), dtype=np.int8)
    c = np.zeros((32, 24), dtype=np.int32)
    _, _, c = _same_numbers(mod, [a, b, c], monkeypatch)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))
