"""Bindings print as TVM 0.21's split and fuse write them (its iter-map normal form), a spelling
kept beside the IR: a fused sum stays whole under `//` and `%` where MLIR folds it
(`(f0 * 1024 + f1) // 512`, not `f0 * 2 + f1 // 512`), a unit loop fused is bound 0, a
parsed binding prints as written; the affine maps, hence the numbers, are unchanged. The
expected lines are what TVM 0.21 printed for the same schedules."""

import numpy as np
from binding_forms import add_one, binding_lines

import tir_mlir
from tir_mlir import Schedule
from tir_mlir.module import module_from_mlir

EW = add_one(512, 512)
UNIT = add_one(1, 8)

SCALED = """
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    for i, j, k in T.grid(8, 4, 64):
        with T.block("C"):
            vi = T.axis.spatial(64, i * 8 + j * 2)
            vk = T.axis.spatial(64, k)
            B[vi, vk] = A[vi, vk] + T.float32(1.0)
"""


def _fused_split(*factors):
    sch = Schedule(tir_mlir.parse(EW))
    f = sch.fuse(*sch.get_loops(sch.get_block("C")))
    return sch, sch.split(f, list(factors))


def test_fuse_then_split_keeps_the_fused_sum_whole():
    sch, _ = _fused_split(None, 1024)
    assert binding_lines(sch) == [
        "vi = T.axis.spatial(512, (i_j_fused_0 * 1024 + i_j_fused_1) // 512)",
        "vj = T.axis.spatial(512, (i_j_fused_0 * 1024 + i_j_fused_1) % 512)",
    ]
    # the IR holds MLIR's form of the same value: lowering sees the affine map as before
    assert "d0 * 2 + d1 floordiv 512" in sch.mod.mlir()
    # a spelling hint: MLIR read back prints the map's own form
    again = module_from_mlir(sch.mod.mlir()).script()
    assert "i_j_fused_0 * 2 + i_j_fused_1 // 512" in again


def test_an_aligned_split_of_a_fused_loop_is_no_remap():
    # the maps hold the loop vars themselves (f0, f1): TVM's form keeps the division, and its
    # T.axis.remap takes only vars, so each binding gets its own line
    sch, _ = _fused_split(None, 512)
    assert binding_lines(sch) == [
        "vi = T.axis.spatial(512, (i_j_fused_0 * 512 + i_j_fused_1) // 512)",
        "vj = T.axis.spatial(512, (i_j_fused_0 * 512 + i_j_fused_1) % 512)",
    ]
    text = sch.mod.script()
    assert tir_mlir.parse(text).script() == text


def test_split_twice_and_reorder_and_bind_keep_it():
    sch, (outer, inner) = _fused_split(None, 1024)
    sch.split(outer, [None, 16])
    assert binding_lines(sch) == [
        "vi = T.axis.spatial(512, (i_j_fused_0_0 * 16384 + i_j_fused_0_1 * 1024 + i_j_fused_1) // 512)",
        "vj = T.axis.spatial(512, (i_j_fused_0_0 * 16384 + i_j_fused_0_1 * 1024 + i_j_fused_1) % 512)",
    ]
    sch, (outer, inner) = _fused_split(None, 1024)
    sch.reorder(inner, outer)
    sch.bind(inner, "threadIdx.x")
    assert (
        binding_lines(sch)[0]
        == "vi = T.axis.spatial(512, (i_j_fused_0 * 1024 + i_j_fused_1) // 512)"
    )


def test_fusing_the_split_loops_back_gives_one_division():
    sch, (outer, inner) = _fused_split(None, 1024)
    sch.fuse(outer, inner)
    assert binding_lines(sch) == [
        "vi = T.axis.spatial(512, i_j_fused_0_i_j_fused_1_fused // 512)",
        "vj = T.axis.spatial(512, i_j_fused_0_i_j_fused_1_fused % 512)",
    ]


def test_tiles_fused_and_split():
    sch = Schedule(tir_mlir.parse(EW))
    i, j = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 8])
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(i0, j0, i1, j1)
    sch.split(sch.fuse(i1, j1), [None, 16])
    assert binding_lines(sch) == [
        "vi = T.axis.spatial(512, i_0 * 8 + (i_1_j_1_fused_0 * 16 + i_1_j_1_fused_1) // 8)",
        "vj = T.axis.spatial(512, j_0 * 8 + (i_1_j_1_fused_0 * 16 + i_1_j_1_fused_1) % 8)",
    ]


def test_a_scaled_sum_is_factored_as_tvm_does():
    sch = Schedule(tir_mlir.parse(SCALED))
    sch.split(sch.get_loops(sch.get_block("C"))[2], [None, 8])
    assert binding_lines(sch)[0] == "vi = T.axis.spatial(64, (i * 4 + j) * 2)"


def test_a_fused_unit_loop_is_bound_to_zero():
    sch = Schedule(tir_mlir.parse(UNIT))
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.split(sch.fuse(i), [None, 1024])
    assert binding_lines(sch) == [
        "vi = T.axis.spatial(1, 0)",
        "vj = T.axis.spatial(8, j)",
        "T.where(i_fused_0 * 1024 + i_fused_1 < 1)",
    ]
    a = np.random.default_rng(0).standard_normal((1, 8)).astype(np.float32)
    b = np.zeros((1, 8), np.float32)
    tir_mlir.build(sch.mod)["main"](a, b)
    np.testing.assert_allclose(b, a + 1)


def test_a_split_unit_loop_keeps_its_sum():
    sch = Schedule(tir_mlir.parse(UNIT))
    sch.split(sch.get_loops(sch.get_block("C"))[0], [None, 1024])
    assert binding_lines(sch)[0] == "vi = T.axis.spatial(1, i_0 * 1024 + i_1)"


def test_the_numbers_are_unchanged():
    sch, (outer, inner) = _fused_split(None, 1000)  # with a T.where
    a = np.random.default_rng(1).standard_normal((512, 512)).astype(np.float32)
    b = np.zeros((512, 512), np.float32)
    tir_mlir.build(sch.mod)["main"](a, b)
    np.testing.assert_allclose(b, a + 1)
    assert "T.where(i_j_fused_0 * 1000 + i_j_fused_1 < 262144)" in binding_lines(sch)


def test_a_parsed_binding_prints_as_written():
    sch, _ = _fused_split(None, 1024)
    text = sch.mod.script()
    again = tir_mlir.parse(text)
    assert again.script() == text
    assert "(i_j_fused_0 * 1024 + i_j_fused_1) // 512" in again.script()


def test_splitting_a_split_loop_again_rewrites_the_form():
    sch, (outer, inner) = _fused_split(None, 1024)
    sch.split(inner, [2, 512])  # the form is rebuilt from the previous one
    assert binding_lines(sch)[0] == (
        "vi = T.axis.spatial(512, (i_j_fused_0 * 1024 + i_j_fused_1_0 * 512 + i_j_fused_1_1) // 512)"
    )


def _split_i(*factors):
    sch = Schedule(tir_mlir.parse(EW))
    i, _ = sch.get_loops(sch.get_block("C"))
    return sch, sch.split(i, list(factors))


def test_a_where_is_substituted_as_tvm_writes_it():
    sch, (i0, i1) = _split_i(None, 100)
    sch.split(i1, [None, 10])
    assert binding_lines(sch)[-1] == "T.where(i_0 * 100 + (i_1_0 * 10 + i_1_1) < 512)"
    sch, (i0, i1) = _split_i(None, 100)
    sch.fuse(i0, i1)  # TVM does not simplify the predicate it substitutes into
    assert (
        binding_lines(sch)[-1] == "T.where(i_0_i_1_fused // 100 * 100 + i_0_i_1_fused % 100 < 512)"
    )
    assert "T.where(i_0_i_1_fused < 512)" in module_from_mlir(sch.mod.mlir()).script()
    sch, _ = _fused_split(None, 1000)
    sch.split(sch.get_loops(sch.get_block("C"))[1], [None, 10])
    assert binding_lines(sch)[-1] == (
        "T.where(i_j_fused_0 * 1000 + (i_j_fused_1_0 * 10 + i_j_fused_1_1) < 262144)"
    )


def test_a_where_prints_back_as_written():
    sch, (i0, i1) = _split_i(None, 100)
    sch.split(i1, [None, 10])
    text = sch.mod.script()
    assert tir_mlir.parse(text).script() == text
    a = np.random.default_rng(2).standard_normal((512, 512)).astype(np.float32)
    b = np.zeros((512, 512), np.float32)
    tir_mlir.build(sch.mod)["main"](a, b)
    np.testing.assert_allclose(b, a + 1)


def test_a_sum_written_out_of_scale_order_prints_as_written():
    src = """
@T.prim_func
def main(A: T.Buffer((56, 56), "float32"), B: T.Buffer((56, 56), "float32")):
    for f, i2_1, i2_2, i2_3 in T.grid(4, 2, 14, 1):
        with T.block("C"):
            xx = T.axis.spatial(56, i2_3 + f % 2 * 28 + i2_1 * 14 + i2_2)
            yy = T.axis.spatial(56, f // 2 * 28 + i2_2)
            B[xx, yy] = A[xx, yy] + T.float32(1.0)
"""
    text = tir_mlir.parse(src).script()
    assert "xx = T.axis.spatial(56, i2_3 + f % 2 * 28 + i2_1 * 14 + i2_2)" in text  # as TVM
    assert "yy = T.axis.spatial(56, f // 2 * 28 + i2_2)" in text
    assert tir_mlir.parse(text).script() == text
