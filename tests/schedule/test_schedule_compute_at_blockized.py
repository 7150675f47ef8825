"""compute_at of a blockized producer (TVM's compute_at_blockized_2): its iteration domain
comes from its own region of the buffer (tiles of one iter var each), not from the accesses of
its inner blocks."""

from schedule_check import check_all, check_error, parse
from tir_mlir import Schedule

BLOCKIZED = """
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    B = T.alloc_buffer((64, 64))
    for i_o, j_o in T.grid(8, 8):
        with T.block("B_outer"):
            vio, vjo = T.axis.remap("SS", [i_o, j_o])
            T.reads(A[vio * 8:vio * 8 + 8, vjo * 8:vjo * 8 + 8])
            T.writes(B[vio * 8:vio * 8 + 8, vjo * 8:vjo * 8 + 8])
            for i_i, j_i in T.grid(8, 8):
                with T.block("B_inner"):
                    vi = T.axis.spatial(64, vio * 8 + i_i)
                    vj = T.axis.spatial(64, vjo * 8 + j_i)
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
    for i_o, j_o, i_i, j_i in T.grid(TILE_O, TILE_O, TILE, TILE):
        with T.block("C"):
            vi = T.axis.spatial(64, i_o * TILE + i_i)
            vj = T.axis.spatial(64, j_o * TILE + j_i)
            C[vi, vj] = B[vi, vj] + T.float32(1.0)
"""


def _src(tile):
    return BLOCKIZED.replace("TILE_O", str(64 // tile)).replace("TILE", str(tile))


def _body(text):
    return "\n".join(l for l in text.splitlines() if "T.reads" not in l and "T.writes" not in l)


def _at_j_o(s):
    s.compute_at(s.get_block("B_outer"), s.get_loops(s.get_block("C"))[1], preserve_unit_loops=True)


def test_compute_at_of_a_blockized_producer():
    """Each 16x16 tile of C needs 2x2 of B's 8x8 tiles."""
    sch = check_all(_src(16), _at_j_o, "main")
    assert """    for i_o, j_o in T.grid(4, 4):
        for ax0, ax1 in T.grid(2, 2):
            with T.block("B_outer"):
                vio = T.axis.spatial(8, i_o * 2 + ax0)
                vjo = T.axis.spatial(8, j_o * 2 + ax1)
                for i_i, j_i in T.grid(8, 8):
                    with T.block("B_inner"):""" in _body(sch.mod.script())


def test_compute_at_of_a_blockized_producer_one_tile():
    sch = check_all(_src(8), _at_j_o, "main")
    assert (
        "vio = T.axis.spatial(8, i_o + ax0)" in sch.mod.script()
        or "vio = T.axis.spatial(8, i_o)" in sch.mod.script()
    )


def test_compute_at_of_a_blockized_producer_inside_its_tiles():
    """C's 4x4 tiles lie inside B's 8x8 tiles: one tile of B, i_o // 2 (as TVM)."""
    sch = check_all(_src(4), _at_j_o, "main")
    assert "vio = T.axis.spatial(8, i_o // 2 + ax0)" in sch.mod.script()


def test_compute_at_refuses_overlapping_tiles():
    """Tiles of 9 rows every 8 overlap: no one tile per element."""
    src = (
        _src(16)
        .replace("B = T.alloc_buffer((64, 64))", "B = T.alloc_buffer((72, 64))")
        .replace("for i_i, j_i in T.grid(8, 8):", "for i_i, j_i in T.grid(9, 8):")
        .replace("vi = T.axis.spatial(64, vio * 8 + i_i)", "vi = T.axis.spatial(72, vio * 8 + i_i)")
        .replace("B[vi, vj] = A[vi, vj] * T.float32(2.0)", "B[vi, vj] = T.float32(2.0)")
    )
    sch = Schedule(parse(src))
    assert "vio * 8:vio * 8 + 9" in sch.mod.script()
    loop, b = sch.get_loops(sch.get_block("C"))[1], sch.get_block("B_outer")
    check_error(sch, lambda s: s.compute_at(b, loop), "is not disjoint tiles of an iter var")
