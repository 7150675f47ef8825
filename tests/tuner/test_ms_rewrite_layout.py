"""RewriteLayout: a layout-free weight (`layout_free_buffers`) is copied, in a block marked
`meta_schedule.layout_rewrite_preproc`, into the order its reader's loops walk it, and the
reader reads the copy. The expected programs are what TVM 0.21's RewriteLayout prints for the
same inputs (recorded here); the rewritten programs compute what the originals do."""

import pytest
from schedule_check import check_numerics, check_replay

import tir_mlir
from tir_mlir import meta_schedule as ms
from tir_mlir.schedule.schedule import Schedule

HEAD = """\
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"layout_free_buffers": [1]})
"""

MATMUL = (
    HEAD
    + """\
    for i, j0, k0, j1, k1 in T.grid(16, 8, 2, 2, 8):
        with T.block("matmul"):
            vi = T.axis.spatial(16, i)
            vj = T.axis.spatial(16, j0 * 2 + j1)
            vk = T.axis.reduce(16, k0 * 8 + k1)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""
)

# B[vk, vj] is walked by the loops j0, k0, j1, k1: B'[j0, k0, j1, k1]
REWRITTEN = """\
    B_global = T.alloc_buffer((8, 2, 2, 8))
    for ax0, ax1 in T.grid(16, 16):
        with T.block("B_global"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(B[v0, v1])
            T.writes(B_global[v1 // 2, v0 // 8, v1 % 2, v0 % 8])
            T.block_attr({"meta_schedule.layout_rewrite_preproc": True})
            B_global[v1 // 2, v0 // 8, v1 % 2, v0 % 8] = B[v0, v1]
    for i, j0, k0, j1, k1 in T.grid(16, 8, 2, 2, 8):
        with T.block("matmul"):
            vi = T.axis.spatial(16, i)
            vj = T.axis.spatial(16, j0 * 2 + j1)
            vk = T.axis.reduce(16, k0 * 8 + k1)
            T.reads(A[vi, vk], B_global[vj // 2, vk // 8, vj % 2, vk % 8])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B_global[vj // 2, vk // 8, vj % 2, vk % 8]"""


def rewrite(sch: Schedule) -> Schedule:
    sch.enter_postproc()
    assert ms.postproc.RewriteLayout().apply(sch)
    return sch


def test_rewrite_layout_stores_the_weight_in_reading_order():
    mod = tir_mlir.parse(MATMUL)
    sch = rewrite(Schedule(mod))
    assert REWRITTEN in sch.mod.script()
    assert str(sch.trace).endswith(
        "index_map=lambda i0, i1: (i1 // 2, i0 // 8, i1 % 2, i0 % 8,), pad_value=None, "
        "assume_injective_transform=False)"
    )
    check_numerics(mod, sch.mod, "main")
    check_replay(sch, mod)


def test_rewrite_layout_carries_the_layout_along_cache_reads():
    """The reader reads a cache_read copy of the weight: that copy is rewritten, and the layout
    carried back to a new first copy from the parameter."""
    mod = tir_mlir.parse(MATMUL)
    sch = Schedule(mod)
    block = sch.get_block("matmul")
    copy = sch.cache_read(block, 1, "global")
    sch.compute_at(copy, sch.get_loops(block)[2])
    text = rewrite(sch).mod.script()
    assert (
        """\
    B_global = T.alloc_buffer((8, 2, 2, 8))
    B_global_1 = T.alloc_buffer((8, 2, 2, 8))
    for ax0, ax1 in T.grid(16, 16):
        with T.block("B_global_1"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(B[v0, v1])
            T.writes(B_global_1[v1 // 2, v0 // 8, v1 % 2, v0 % 8])
            T.block_attr({"meta_schedule.layout_rewrite_preproc": True})
            B_global_1[v1 // 2, v0 // 8, v1 % 2, v0 % 8] = B[v0, v1]
    for i, j0, k0 in T.grid(16, 8, 2):
        for ax0, ax1 in T.grid(8, 2):
            with T.block("B_global"):
                v0 = T.axis.spatial(16, k0 * 8 + ax0)
                v1 = T.axis.spatial(16, j0 * 2 + ax1)
                T.reads(B_global_1[v1 // 2, v0 // 8, v1 % 2, v0 % 8])
                T.writes(B_global[v1 // 2, v0 // 8, v1 % 2, v0 % 8])"""
        in text
    )
    check_numerics(mod, sch.mod, "main")


def add(f: int, g: int, vi: str, vj: str, where: str = "") -> str:
    pred = f"            T.where({where})\n" if where else ""
    return HEAD + (
        f"    for f, g in T.grid({f}, {g}):\n"
        '        with T.block("add"):\n'
        f"{pred}"
        f"            vi = T.axis.spatial(16, {vi})\n"
        f"            vj = T.axis.spatial(16, {vj})\n"
        "            C[vi, vj] = A[vi, vj] + B[vi, vj]\n"
    )


@pytest.mark.parametrize(
    "text, store",
    [
        # rows walked by the inner loop, columns in blocks of 8 by the outer
        (add(32, 8, "f % 16", "f // 16 * 8 + g"), "B_global[v1 // 8, v0, v1 % 8]"),
        # the same with the outer loop narrowed by a T.where
        (add(34, 8, "f % 16", "f // 16 * 8 + g", "f < 32"), "B_global[v1 // 8, v0, v1 % 8]"),
        # one fused loop walks the whole buffer: one axis
        (add(256, 1, "f // 16", "f % 16 + g"), "B_global[v0 * 16 + v1]"),
    ],
    ids=["transposed_blocks", "predicated", "fused"],
)
def test_rewrite_layout_maps_as_tvm(text, store):
    mod = tir_mlir.parse(text)
    sch = rewrite(Schedule(mod))
    assert f"{store} = B[v0, v1]" in sch.mod.script()
    check_numerics(mod, sch.mod, "main")


@pytest.mark.parametrize(
    "text",
    [
        MATMUL.replace('    T.func_attr({"layout_free_buffers": [1]})\n', ""),
        # every other column: not a tiling of the loops (TVM's map here folds rows together)
        add(16, 8, "f", "g * 2"),
    ],
    ids=["not_layout_free", "strided"],
)
def test_rewrite_layout_leaves_other_programs_alone(text):
    mod = tir_mlir.parse(text)
    sch = rewrite(Schedule(mod))
    assert sch.mod.script() == mod.script()
