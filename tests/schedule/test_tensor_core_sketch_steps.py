"""Schedule steps TVM's tensor-core sketch takes on copies under fused block/warp loops: a
binding `f // 2 * 64 + i` (the fused loop outside, constant there) reorders and blockizes
(the outer part divided by the inner extent, kept in the binding's term order), and
storage_align counts a negative axis from the last dimension."""

import pytest

import tir_mlir
from schedule_check import check_numerics

COPY = """
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
    for f in range(4):
        for i, j in T.grid(64, 64):
            with T.block("B"):
                vi = T.axis.spatial(128, f // 2 * 64 + i)
                vj = T.axis.spatial(128, f % 2 * 64 + j)
                B[vi, vj] = A[vi, vj]
"""


def test_tiles_under_a_fused_loop_blockize():
    mod = tir_mlir.parse(COPY)
    sch = tir_mlir.Schedule(mod)
    block = sch.get_block("B")
    _, i, j = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 16])
    sch.reorder(i0, j0, i1, j1)  # (f, outside the reordered loops, is a constant there)
    outer = sch.blockize(i1)
    text = sch.mod.script()
    assert "vi_o = T.axis.spatial(8, f // 2 * 4 + i_0)" in text, text
    assert "vj_o = T.axis.spatial(8, f % 2 * 4 + j_0)" in text, text
    assert sch.get(outer).name == "B_o"
    check_numerics(mod, sch.mod, "main")


def test_storage_align_counts_a_negative_axis_from_the_last():
    sch = tir_mlir.Schedule(tir_mlir.parse(COPY))
    cache = sch.cache_read(sch.get_block("B"), 0, "shared")
    sch.storage_align(cache, 0, -2, 32, 8)
    assert '"buffer_dim_align": [[0, 0, 32, 8]]' in sch.mod.script()
    with pytest.raises(tir_mlir.ScheduleError, match="axis -3 is out of range"):
        sch.storage_align(cache, 0, -3, 32, 8)


CONV_1X1 = """
@T.prim_func
def main(inputs: T.Buffer((1, 16, 16, 64), "float16"), weight: T.Buffer((1, 1, 64, 64), "float16"), conv: T.Buffer((1, 16, 16, 64), "float32")):
    for n, h, w, co, rh, rw, rc in T.grid(1, 16, 16, 64, 1, 1, 64):
        with T.block("conv"):
            v_n, v_h, v_w, v_co, v_rh, v_rw, v_rc = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, rc])
            with T.init():
                conv[v_n, v_h, v_w, v_co] = T.float32(0.0)
            conv[v_n, v_h, v_w, v_co] = conv[v_n, v_h, v_w, v_co] + T.Cast("float32", inputs[v_n, v_h + v_rh, v_w + v_rw, v_rc]) * T.Cast("float32", weight[v_rh, v_rw, v_rc, v_co])
"""


def test_a_1x1_convolution_reindexes_and_relayouts_as_tvm():
    """reindex reads a unit iter var in `h + rh` as 0 (the input's copy is indexed by n, h, w,
    rc), but keeps one that is a whole index (the weight's rh, rw); a new iter var of one point
    is data parallel after transform_block_layout (TVM's rules: the tensor-core sketch of a
    1x1 convolution keeps rh, rw as outer spatial loops)."""
    mod = tir_mlir.parse(CONV_1X1)
    sch = tir_mlir.Schedule(mod)
    block = sch.get_block("conv")
    sch.reindex(block, ("read", 0))
    sch.reindex(block, ("read", 1))
    text = sch.mod.script()
    assert 'inputs_reindex = T.alloc_buffer((1, 16, 16, 64), "float16")' in text, text
    assert 'weight_reindex = T.alloc_buffer((64, 1, 1, 64), "float16")' in text, text
    sch.transform_block_layout(
        block,
        "lambda v_n, v_h, v_w, v_co, v_rh, v_rw, v_rc: "
        "(v_rh, v_rw, v_n * 256 + v_h * 16 + v_w, v_co, v_rc)",
    )
    assert sch.get_iter_types(block) == ["S", "S", "S", "S", "R"]
    check_numerics(mod, sch.mod, "main")
