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
