"""compute_at / reverse_compute_at next to a blockized block (a block with blocks nested in it),
as TVM 0.21 allows: its producers' / consumers' region is what its nested blocks touch,
relaxed over the loops inside it (TVM reads it from the block's T.reads / T.writes)."""
import numpy as np
import pytest

import tir_mlir
from schedule_check import parse
from test_ms_auto_tensorize import MM

# A matmul whose inner 16 columns are blockized (as MultiLevelTilingWithIntrin does), with
# both inputs cached at loops above the blockized block and the result written through a
# cache moved under i_0: TVM 0.21 prints exactly this for the same schedule.
EXPECTED = '''\
    A_global = T.alloc_buffer((64, 32))
    B_global = T.alloc_buffer((32, 64))
    C_global = T.alloc_buffer((64, 64))
    for i_0 in range(8):
        for ax0, ax1 in T.grid(32, 64):
            with T.block("B_global"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(B[v0, v1])
                T.writes(B_global[v0, v1])
                B_global[v0, v1] = B[v0, v1]
        for j_0 in range(4):
            for ax0, ax1 in T.grid(8, 32):
                with T.block("A_global"):
                    v0 = T.axis.spatial(64, i_0 * 8 + ax0)
                    v1 = T.axis.spatial(32, ax1)
                    T.reads(A[v0, v1])
                    T.writes(A_global[v0, v1])
                    A_global[v0, v1] = A[v0, v1]
            for i_1, k in T.grid(8, 32):
                with T.block("C_o"):
                    vi_o = T.axis.spatial(64, i_0 * 8 + i_1)
                    vj_o, vk_o = T.axis.remap("SR", [j_0, k])
                    T.reads(A_global[vi_o, vk_o], B_global[vk_o, vj_o * 16:vj_o * 16 + 16])
                    T.writes(C_global[vi_o, vj_o * 16:vj_o * 16 + 16])
'''
EXPECTED_WRITE_BACK = '''\
        for ax0, ax1 in T.grid(8, 64):
            with T.block("C_global"):
                v0 = T.axis.spatial(64, i_0 * 8 + ax0)
                v1 = T.axis.spatial(64, ax1)
                T.reads(C_global[v0, v1])
                T.writes(C[v0, v1])
                C[v0, v1] = C_global[v0, v1]
'''


def _schedule(sch):
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, [None, 16])
    sch.reorder(i, j0, k, j1)
    outer = sch.blockize(j1)
    i0, i1 = sch.split(i, [None, 8])
    sch.reorder(i0, j0, i1, k)
    sch.compute_at(sch.cache_read(outer, 0, "global"), j0)
    sch.compute_at(sch.cache_read(outer, 1, "global"), i0)
    sch.reverse_compute_at(sch.cache_write(outer, 0, "global"), i0)
    return sch


def test_caches_move_next_to_a_blockized_block():
    mod = parse(MM.format(n=64))
    sch = _schedule(tir_mlir.Schedule(mod))
    text = sch.mod.script()
    assert EXPECTED in text and EXPECTED_WRITE_BACK.rstrip() in text
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (64, 32)).astype("float32")
    b = rng.uniform(-1, 1, (32, 64)).astype("float32")
    c = np.zeros((64, 64), "float32")
    tir_mlir.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_same_module_as_tvm():
    tvm = pytest.importorskip("tvm")
    mod = parse(MM.format(n=64))
    ours = _schedule(tir_mlir.Schedule(mod)).mod.script()
    theirs = _schedule(tvm.tir.Schedule(tvm.IRModule(
        {"main": tvm.script.from_source(MM.format(n=64))}))).mod["main"].script()
    assert ours.strip() == theirs.strip()


def test_a_loop_inside_the_blockized_block_is_refused_and_nothing_changes():
    sch = _schedule(tir_mlir.Schedule(parse(MM.format(n=64))))
    before = sch.mod.script()
    inner_loop = sch.get_loops(sch.get_block("C"))[-1]          # j_1, inside C_o
    with pytest.raises(tir_mlir.ScheduleError,
                       match="not all producers of the block are under the loop"):
        sch.reverse_compute_at(sch.get_block("C_global"), inner_loop)
    assert sch.mod.script() == before


POOL = """
@T.prim_func
def main(A: T.Buffer((1, 8, 32, 32), "float32"), B: T.Buffer((1, 8, 16, 16), "float32")):
    for n, c, h, w, rh, rw in T.grid(1, 8, 16, 16, 2, 2):
        with T.block("pool"):
            vn, vc, vh, vw, vrh, vrw = T.axis.remap("SSSSRR", [n, c, h, w, rh, rw])
            with T.init():
                B[vn, vc, vh, vw] = T.float32(-3.4028234663852886e38)
            B[vn, vc, vh, vw] = T.max(B[vn, vc, vh, vw], A[vn, vc, vh * 2 + vrh, vw * 2 + vrw])
"""


@pytest.mark.parametrize("kind", ["compute_at", "reverse_compute_at"])
def test_blockized_block_under_a_loop_inside_it_is_refused(kind):
    """(Found by the random-schedule fuzzer: accepted, it erased the whole program.)"""
    sch = tir_mlir.Schedule(tir_mlir.parse(POOL))
    pool = sch.get_block("pool")
    outer = sch.blockize(sch.get_loops(pool)[2])
    before = sch.mod.script()
    with pytest.raises(tir_mlir.ScheduleError, match="the loop is inside the block"):
        getattr(sch, kind)(outer, sch.get_loops(pool)[0])
    assert sch.mod.script() == before
