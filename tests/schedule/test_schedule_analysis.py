"""tir_mlir.schedule.analysis: TVM 0.21's tvm.tir.schedule.analysis helpers, on the programs of
TVM's own test file (tests/python/tir-schedule/test_tir_schedule_analysis.py) with its expected
results. The te-built workloads are recorded in tests/data/schedule_analysis/ (printed by TVM
0.21's create_prim_func). With TVM installed, TVM's own functions on the same programs must
agree too (an extra assertion)."""

import itertools
import random
from pathlib import Path

import pytest

import tir_mlir
from tir_mlir.schedule.analysis import (
    get_auto_tensorize_mapping_info,
    get_tensorize_loop_mapping,
    has_block,
    is_output_block,
    suggest_index_map,
)

try:
    import tvm
    from tvm.tir.schedule import analysis as tvm_analysis
except ImportError:  # the oracle is optional; our assertions run without it
    tvm = tvm_analysis = None

DATA = Path(__file__).parent.parent / "data" / "schedule_analysis"


def program(name: str) -> str:
    return (DATA / f"{name}.tir").read_text()


def schedule(text: str) -> tir_mlir.Schedule:
    return tir_mlir.Schedule(tir_mlir.parse(text))


def evaluate(text: str, point):
    return eval(text)(*point)  # (lambda text written by suggest_index_map / the tests)


def same_map(got: str, want: str, shape) -> bool:
    """Equal as functions on every index of the buffer."""
    return all(
        tuple(evaluate(got, p)) == tuple(evaluate(want, p))
        for p in itertools.product(*map(range, shape))
    )


def tvm_equivalent(ours: str, theirs) -> bool:
    """Our lambda text and a TVM IndexMap are the same map (TVM decides)."""
    return tvm.tir.IndexMap.from_func(eval(ours)).is_equivalent_to(theirs)


# --- suggest_index_map ----------------------------------------------------------------------------
def _tvm_suggest(shape, fn, extents):
    v = [tvm.tir.Var(f"v{k}", "int32") for k in range(len(extents))]
    loops = [
        tvm.tir.For(x, 0, e, tvm.tir.ForKind.SERIAL, tvm.tir.Evaluate(0))
        for x, e in zip(v, extents)
    ]
    return tvm_analysis.suggest_index_map(tvm.tir.decl_buffer(shape), list(fn(*v)), loops, True)


def test_suggest_index_map_simple():
    def access(i, j):
        return i // 16 * 4 + j // 16, i % 16 * 16 + j % 16

    got = suggest_index_map([8, 256], access, [32, 64])
    assert got == "lambda i0, i1: (i0 // 4, i1 // 16, i0 % 4, i1 % 16)"
    if tvm is not None:
        assert tvm_equivalent(got, _tvm_suggest([8, 256], access, [32, 64]))


def test_suggest_index_map_bijective():
    """j // 4 is not used: the layout still follows the loop order (i, then j)."""

    def access(i, j):
        return (j % 4 * 2 + i,)

    got = suggest_index_map([8], access, [2, 32])
    assert got == "lambda i0: (i0 % 2, i0 // 2)"
    if tvm is not None:
        assert tvm_equivalent(got, _tvm_suggest([8], access, [2, 32]))


def winograd(fused, i3, i4_0, i4_1):
    eps = fused // 336 * 2 + fused % 16 // 8
    nu = fused % 336 // 112 * 2 + fused % 8 // 4
    return eps, nu, fused % 4 * 32 + i3, i4_0 * 32 + i4_1


def test_suggest_index_map_winograd():
    """Two pieces of one variable that continue each other (fused % 8 // 4 and fused % 4) are
    one piece: 7 dimensions, not 8."""
    got = suggest_index_map([6, 6, 128, 128], winograd, [1008, 32, 4, 32])
    want = (
        "lambda i0, i1, i2, i3: (i0 // 2, i1 // 2, i0 % 2, i1 % 2 * 4 + i2 // 32, i2 % 32, "
        "i3 // 32, i3 % 32)"
    )
    assert got == want
    if tvm is not None:
        assert tvm_equivalent(got, _tvm_suggest([6, 6, 128, 128], winograd, [1008, 32, 4, 32]))


def test_suggest_index_map_is_a_bijection_of_the_buffer():
    got = suggest_index_map(
        [8, 256], lambda i, j: (i // 16 * 4 + j // 16, i % 16 * 16 + j % 16), [32, 64]
    )
    images = {tuple(evaluate(got, p)) for p in itertools.product(range(8), range(256))}
    assert len(images) == 8 * 256


@pytest.mark.parametrize(
    "access, extents",
    [
        (lambda i, j: (i * 3 + j,), [4, 4]),  # overlapping pieces: not mixed radix
        (lambda i, j: (i * 4 + j * 4,), [4, 4]),  # two pieces of one scale
        (lambda i, j: ((i * 4 + j) // 8,), [4, 4]),  # a division of a sum of variables
    ],
)
def test_suggest_index_map_none(access, extents):
    assert suggest_index_map([64], access, extents) is None


@pytest.mark.parametrize(
    "shape, access, extents, predicate, want",
    [
        (
            [16],
            lambda i, j: (i * 4 + j,),
            [4, 4],
            lambda i, j: i < 3,
            "lambda i0: (i0 // 4 % 3, i0 % 4)",
        ),
        ([8], lambda i: (i,), [16], lambda i: i < 8, "lambda i0: (i0,)"),
    ],
)
def test_suggest_index_map_predicate_narrows_the_loops(shape, access, extents, predicate, want):
    got = suggest_index_map(shape, access, extents, predicate=predicate)
    assert got == want
    if tvm is not None:
        v = [tvm.tir.Var(f"v{k}", "int32") for k in range(len(extents))]
        loops = [
            tvm.tir.For(x, 0, e, tvm.tir.ForKind.SERIAL, tvm.tir.Evaluate(0))
            for x, e in zip(v, extents)
        ]
        theirs = tvm_analysis.suggest_index_map(
            tvm.tir.decl_buffer(shape), list(access(*v)), loops, predicate(*v)
        )
        assert tvm_equivalent(got, theirs)


@pytest.mark.parametrize("predicate", ["i < 4", lambda i: i * 2 < 4, lambda i: i >= 2])
def test_suggest_index_map_predicate_not_understood(predicate):
    assert suggest_index_map([8], lambda i: (i,), [8], predicate=predicate) is None


def test_suggest_index_map_rank_mismatch():
    with pytest.raises(ValueError, match="2 indices for a buffer of rank 1"):
        suggest_index_map([8], lambda i: (i, i), [8])


# --- get_tensorize_loop_mapping -------------------------------------------------------------------
DOT_16X4_DESC = """
@T.prim_func
def dot_16x4(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), "uint8", offset_factor=1)
    B = T.match_buffer(b, (16, 4), "int8", offset_factor=1)
    C = T.match_buffer(c, (16,), "int32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:16], A[0:4], B[0:16, 0:4])
        T.writes(C[0:16])
        for i, k in T.grid(16, 4):
            with T.block("update"):
                vi, vk = T.axis.remap("SR", [i, k])
                C[vi] = C[vi] + T.Cast("int32", A[vk]) * T.Cast("int32", B[vi, vk])
"""

MMA_16X16X16_DESC = """
@T.prim_func
def mma(A: T.Buffer((16, 16), "float16"), B: T.Buffer((16, 16), "float16"), C: T.Buffer((16, 16), "float16")):
    with T.block("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        for i, j, k in T.grid(16, 16, 16):
            with T.block("update"):
                vii, vjj, vkk = T.axis.remap("SSR", [i, j, k])
                C[vii, vjj] = C[vii, vjj] + A[vii, vkk] * B[vjj, vkk]
"""

WMMA_SYNC_F16F16F32_DESC = """
@T.prim_func
def wmma_sync(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (16, 16), "float16", scope="wmma.matrix_a", offset_factor=16)
    B = T.match_buffer(b, (16, 16), "float16", scope="wmma.matrix_b", offset_factor=16)
    C = T.match_buffer(c, (16, 16), scope="wmma.accumulator", offset_factor=16)
    with T.block("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        for i, j, k in T.grid(16, 16, 16):
            with T.block(""):
                vii, vjj, vkk = T.axis.remap("SSR", [i, j, k])
                C[vii, vjj] = C[vii, vjj] + T.Cast("float32", A[vii, vkk]) * T.Cast("float32", B[vkk, vjj])
"""

DENSE = """
@T.prim_func
def main(X: T.Buffer((1024, 1024), "uint8"), W: T.Buffer((64, 256, 16, 4), "int8"), Y: T.Buffer((1024, 1024), "int32")):
    for i0, i1, i2 in T.grid(1024, 1024, 1024):
        with T.block("compute"):
            i, j, k = T.axis.remap("SSR", [i0, i1, i2])
            with T.init():
                Y[i, j] = 0
            Y[i, j] = Y[i, j] + T.Cast("int32", X[i, k]) * T.Cast("int32", W[j // 16, k // 4, j % 16, k % 4])
"""

CONV2D_NCHWC = """
@T.prim_func
def main(X: T.Buffer((1, 4, 56, 56, 16), "uint8"), W: T.Buffer((16, 4, 1, 1, 4, 16, 4), "int8"), Y: T.Buffer((1, 16, 56, 56, 16), "int32")):
    for i0, i1, i2, i3, i4, i5, i6, i7, i8, i9 in T.grid(1, 16, 56, 56, 16, 1, 1, 4, 4, 4):
        with T.block("conv"):
            n, oc, oh, ow, ocb, kh, kw, ico, icf, ics = T.axis.remap("SSSSSRRRRR", [i0, i1, i2, i3, i4, i5, i6, i7, i8, i9])
            with T.init():
                Y[n, oc, oh, ow, ocb] = 0
            Y[n, oc, oh, ow, ocb] = Y[n, oc, oh, ow, ocb] + T.Cast("int32", X[n, ico, oh + kh, ow + kw, icf * 4 + ics]) * T.Cast("int32", W[oc, ico, kh, kw, icf, ocb, ics])
"""


def loop_names(sch, info) -> dict:
    """Block loop name -> desc loop name (TVM's test compares the For nodes)."""
    return {str(sch.get(k).loop_var): str(v.loop_var) for k, v in info.loop_map.items()}


def tvm_loop_names(text, block, desc, **kw) -> dict:
    s = tvm.tir.Schedule(tvm.script.from_source(text))
    info = tvm_analysis.get_tensorize_loop_mapping(
        s, s.get_block(block), tvm.script.from_source(desc), **kw
    )
    return {str(s.get(k).loop_var): str(v.loop_var) for k, v in info.loop_map.items()}


def test_get_tensorize_loop_mapping_dense_16x4():
    sch = schedule(DENSE)
    info = get_tensorize_loop_mapping(sch, sch.get_block("compute"), DOT_16X4_DESC)
    assert loop_names(sch, info) == {"i1": "i", "i2": "k"}
    _, j, k = sch.get_loops(sch.get_block("compute"))
    by_desc = {v.loop_var: key for key, v in info.loop_map.items()}
    assert sch.get(by_desc["i"]) == sch.get(j) and sch.get(by_desc["k"]) == sch.get(k)
    assert sorted(info.desc_loop_indexer.values()) == [0, 1]
    assert info.block_iter_paddings is None
    if tvm is not None:
        assert tvm_loop_names(DENSE, "compute", DOT_16X4_DESC) == loop_names(sch, info)


def test_get_tensorize_loop_mapping_conv2d_nchwc_16x4():
    """The inner output channel (i4) and the innermost reduction (i9) take the desc loops."""
    sch = schedule(CONV2D_NCHWC)
    info = get_tensorize_loop_mapping(sch, sch.get_block("conv"), DOT_16X4_DESC)
    assert loop_names(sch, info) == {"i4": "i", "i9": "k"}
    if tvm is not None:
        assert tvm_loop_names(CONV2D_NCHWC, "conv", DOT_16X4_DESC) == loop_names(sch, info)


def test_get_tensorize_loop_mapping_matmul_mma_any_loop_order():
    sch = schedule(program("matmul_relu_512"))
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    want = {"i": "i", "j": "j", "k": "k"}
    assert loop_names(sch, get_tensorize_loop_mapping(sch, block, MMA_16X16X16_DESC)) == want
    sch.reorder(k, i, j)
    assert loop_names(sch, get_tensorize_loop_mapping(sch, block, MMA_16X16X16_DESC)) == want


def test_get_tensorize_loop_mapping_padding():
    """127 x 256 x 65 against 16 x 16 x 16: i and k padded to multiples of 16."""
    sch = schedule(program("matmul_relu_pad"))
    block = sch.get_block("C")
    info = get_tensorize_loop_mapping(sch, block, WMMA_SYNC_F16F16F32_DESC, allow_padding=True)
    assert info.block_iter_paddings == [16, 1, 16]
    assert get_tensorize_loop_mapping(sch, block, WMMA_SYNC_F16F16F32_DESC) is None
    if tvm is not None:
        s = tvm.tir.Schedule(tvm.script.from_source(program("matmul_relu_pad")))
        theirs = tvm_analysis.get_tensorize_loop_mapping(
            s, s.get_block("C"), tvm.script.from_source(WMMA_SYNC_F16F16F32_DESC), True
        )
        assert [int(p) for p in theirs.block_iter_paddings] == info.block_iter_paddings


def test_get_tensorize_loop_mapping_refusals():
    """No reduction iter var for the desc's k; a desc with more iter vars than the block."""
    sch = schedule(program("matmul_relu_512"))
    assert get_tensorize_loop_mapping(sch, sch.get_block("compute"), DOT_16X4_DESC) is None
    sch = schedule(program("matmul_1").replace('"SSR"', '"SSS"'))
    assert get_tensorize_loop_mapping(sch, sch.get_block("C"), MMA_16X16X16_DESC) is None
    sch = schedule(TWO_ELEMENTWISE)
    assert get_tensorize_loop_mapping(sch, sch.get_block("B"), MMA_16X16X16_DESC) is None


def test_get_tensorize_loop_mapping_registered_intrinsic_by_name():
    sch = schedule(program("matmul_512"))
    info = get_tensorize_loop_mapping(sch, sch.get_block("C"), "wmma_sync_16x16x16_f16f16f32")
    assert loop_names(sch, info) == {"i": "i", "j": "j", "k": "k"}


# --- get_auto_tensorize_mapping_info --------------------------------------------------------------
@pytest.mark.parametrize(
    "name, block, want",
    [
        (
            "conv2d_nhwc_4",
            "conv2d_nhwc",
            "lambda n, h, w, c, rh, rw, rc: (n * 256 + h * 16 + w, c, rh * 192 + rw * 64 + rc)",
        ),
        (
            "conv2d_nhwc_1",
            "conv2d_nhwc",
            "lambda n, h, w, c, rh, rw, rc: (n * 256 + h * 16 + w, c, rh * 192 + rw * 64 + rc)",
        ),
        ("batch_matmul_1", "Z", "lambda b, m, n, k: (b, m, n, k)"),
        ("batch_matmul_16", "Z", "lambda b, m, n, k: (b, m, n, k)"),
        ("matmul_512", "C", "lambda n, m, k: (n, m, k)"),
        ("matmul_1", "C", "lambda n, m, k: (n, m, k)"),
    ],
)
def test_get_auto_tensorize_mapping_info(name, block, want):
    sch = schedule(program(name))
    info = get_auto_tensorize_mapping_info(sch, sch.get_block(block), WMMA_SYNC_F16F16F32_DESC)
    assert len(info.mappings) == 1
    got = info.mappings[0]
    assert same_on_domains(got, want, sch.get(sch.get_block(block)))
    assert info.rhs_iters == ["vii", "vjj", "vkk"]
    assert set(info.lhs_buffer_map.values()) == {"A", "B", "C"}
    if tvm is not None:
        s = tvm.tir.Schedule(tvm.script.from_source(program(name)))
        theirs = tvm_analysis.get_auto_tensorize_mapping_info(
            s, s.get_block(block), tvm.script.from_source(WMMA_SYNC_F16F16F32_DESC)
        )
        assert tvm_equivalent(got, theirs.mappings[0])


def same_on_domains(got: str, want: str, block) -> bool:
    """Equal at 500 random points of the block's iter var domains (and at the corners)."""
    doms = [int(v.dom.extent) for v in block.iter_vars]
    rng = random.Random(0)
    points = [[rng.randrange(d) for d in doms] for _ in range(500)]
    points += [[0] * len(doms), [d - 1 for d in doms]]
    return all(tuple(evaluate(got, p)) == tuple(evaluate(want, p)) for p in points)


def test_get_auto_tensorize_mapping_info_names_follow_the_block():
    sch = schedule(program("conv2d_nhwc_4"))
    info = get_auto_tensorize_mapping_info(
        sch, sch.get_block("conv2d_nhwc"), "wmma_sync_16x16x16_f16f16f32"
    )
    assert info.mappings == [
        (
            "lambda v_n, v_h, v_w, v_co, v_rh, v_rw, v_rc: "
            "(v_n * 256 + v_h * 16 + v_w, v_co, v_rh * 192 + v_rw * 64 + v_rc)"
        )
    ]
    assert info.lhs_buffer_map == {"conv2d_nhwc": "C", "PadInput": "A", "weight": "B"}


def test_get_auto_tensorize_mapping_info_other_computation():
    """relu is no multiply-accumulate; a float32 matmul does not cast like the desc."""
    sch = schedule(program("matmul_relu_512"))
    assert (
        get_auto_tensorize_mapping_info(sch, sch.get_block("compute"), WMMA_SYNC_F16F16F32_DESC)
        is None
    )
    assert (
        get_auto_tensorize_mapping_info(sch, sch.get_block("C"), WMMA_SYNC_F16F16F32_DESC) is None
    )


# --- is_output_block, has_block -------------------------------------------------------------------
TWO_ELEMENTWISE = """
@T.prim_func
def main(a: T.handle, c: T.handle):
    A = T.match_buffer(a, (128, 128), "float32")
    B = T.alloc_buffer((128, 128), "float32")
    C = T.match_buffer(c, (128, 128), "float32")
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0
"""


def test_is_output_block():
    sch = schedule(TWO_ELEMENTWISE)
    assert is_output_block(sch, sch.get_block("C"))
    assert not is_output_block(sch, sch.get_block("B"))


def test_has_block():
    sch = schedule(TWO_ELEMENTWISE)
    assert has_block(sch, "B") and has_block(sch, "C") and has_block(sch, "root")
    assert not has_block(sch, "D")
    if tvm is not None:
        s = tvm.tir.Schedule(tvm.script.from_source(TWO_ELEMENTWISE))
        assert [tvm_analysis.has_block(s, n) for n in ("B", "C", "root", "D")] == [
            True,
            True,
            True,
            False,
        ]


EMPTY_GRID = """
@T.prim_func
def main(out: T.Buffer((T.int64(1), T.int64(8), T.int64(8)), "int32")):
    act = T.alloc_buffer((1, 8, 8), "int32")
    for z2, y2, x2 in T.grid(1, 8, 8):
        with T.block("b0"):
            az, ay, ax = T.axis.remap("SSS", [z2, y2, x2])
            T.writes(act[az, ay, ax])
            act[az, ay, az] = T.int32(0)
    for z1, y1, x1 in T.grid(0, 8, 8):
        with T.block("b1"):
            az, ay, ax = T.axis.remap("SSS", [z1, y1, x1])
            T.reads(act[az + 1, ay, ax])
            T.writes(out[az, ay, ax])
            out[az, ay, ax] = act[az + 1, ay, ax]
    for z2, y2, x2 in T.grid(1, 8, 8):
        with T.block("b2"):
            az, ay, ax = T.axis.remap("SSS", [z2, y2, x2])
            T.writes(out[az, ay, ax])
            out[az, ay, az] = T.int32(0)
"""


def test_empty_grid_is_refused_with_its_location():
    """TVM builds a schedule of a loop of extent 0; tir_mlir refuses zero-extent loops and
    block domains at parse time (a deliberate difference, docs/tvm_compat.md "Front end"),
    with the place and the reason, not a crash."""
    with pytest.raises(
        tir_mlir.TIRError,
        match=r"<string>:11:9: block 'b1': empty or "
        r"malformed iterator domain",
    ):
        tir_mlir.parse(EMPTY_GRID)


def test_auto_tensorize_mapping_then_loop_mapping():
    """The suggested map, applied with transform_block_layout, leaves a block whose loops the
    intrinsic's loops map onto without padding (what the tuner's auto-tensorization does)."""
    sch = schedule(program("conv2d_nhwc_4"))
    block = sch.get_block("conv2d_nhwc")
    intrin = "wmma_sync_16x16x16_f16f16f32"
    sch.transform_block_layout(
        block, get_auto_tensorize_mapping_info(sch, block, intrin).mappings[0]
    )
    assert [sch.get(lp).extent for lp in sch.get_loops(block)] == [1024, 64, 576]
    info = get_tensorize_loop_mapping(sch, block, intrin)
    assert (
        repr(info) == "TensorizeInfo(loop_map={ax2: k, ax1: j, ax0: i}, block_iter_paddings=None)"
    )
    if tvm is not None:
        theirs = tvm.tir.Schedule(tvm.script.from_source(program("conv2d_nhwc_4")))
        b = theirs.get_block("conv2d_nhwc")
        desc = tvm.script.from_source(WMMA_SYNC_F16F16F32_DESC)
        mapping = tvm_analysis.get_auto_tensorize_mapping_info(theirs, b, desc).mappings[0]
        theirs.transform_block_layout(b, mapping)
        tvm.ir.assert_structural_equal(
            theirs.mod["main"].body, tvm.script.from_source(sch.mod.script()).body
        )
