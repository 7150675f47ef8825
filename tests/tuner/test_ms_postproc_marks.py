"""Postprocessors follow TVM on the marks they read: RewriteReductionBlock gives the init block
of a block marked `meta_schedule.auto_tensorize` the mark "" when there is no init intrinsic,
RewriteTensorize keeps that mark (or, with `vectorize_init_loop`, drops it and vectorizes the
init), and RewriteCooperativeFetch rewrites only the fetches its trace annotated (TVM's
rewrite_tensorize dense_dp4a test, whose program comes with the marks already)."""

from schedule_check import check_numerics, parse

from tir_mlir import meta_schedule as ms
from tir_mlir.schedule.schedule import Schedule

MARKED = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 16):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.block_attr({"meta_schedule.auto_tensorize": "some_intrin"})
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""

INIT_MARKED = """
@T.prim_func
def main(B: T.Buffer((4, 8), "float32")):
    for i in range(4):
        with T.block("B_o_init"):
            vi = T.axis.spatial(4, i)
            T.block_attr({"meta_schedule.auto_tensorize": ""})
            for j in range(8):
                with T.block("B_init"):
                    vj = T.axis.spatial(8, j)
                    B[vi, vj] = T.float32(0)
"""

FETCH = """
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    A_shared = T.alloc_buffer((64,), scope="shared")
    for b in T.thread_binding(2, thread="blockIdx.x"):
        for t in T.thread_binding(32, thread="threadIdx.x"):
            for ax0 in range(64):
                with T.block("A_shared"):
                    v0 = T.axis.spatial(64, ax0)
                    T.block_attr({"meta_schedule.cooperative_fetch": 1})
                    A_shared[v0] = A[v0]
            with T.block("B"):
                vi = T.axis.spatial(64, b * 32 + t)
                B[vi] = A_shared[vi]
"""


def test_init_of_a_marked_block_gets_the_empty_mark():
    sch = Schedule(parse(MARKED))
    sch.enter_postproc()
    assert ms.postproc.RewriteReductionBlock().apply(sch)
    text = sch.mod.script()
    init = text[text.index('with T.block("B_init")') :].split("with T.block")[1]
    assert 'T.block_attr({"meta_schedule.auto_tensorize": ""})' in init
    assert str(sch.trace).endswith(
        'sch.annotate(block_or_loop=b3, ann_key="meta_schedule.auto_tensorize", ann_val="")'
    )


def test_rewrite_tensorize_keeps_or_vectorizes_the_empty_mark():
    mod = parse(INIT_MARKED)
    sch = Schedule(mod)
    sch.enter_postproc()
    assert ms.postproc.RewriteTensorize().apply(sch)
    assert sch.mod.script() == mod.script()
    assert ms.postproc.RewriteTensorize(vectorize_init_loop=True).apply(sch)
    text = sch.mod.script()
    assert "auto_tensorize" not in text and "for j in T.vectorized(8):" in text
    check_numerics(mod, sch.mod, "main")


def test_cooperative_fetch_marked_outside_the_trace_is_left():
    mod = parse(FETCH)
    sch = Schedule(mod)
    sch.enter_postproc()
    assert ms.postproc.RewriteCooperativeFetch().apply(sch)
    assert sch.mod.script() == mod.script()
    sch = Schedule(mod)  # the same mark made by the schedule: rewritten
    sch.unannotate(sch.get_block("A_shared"), "meta_schedule.cooperative_fetch")
    sch.annotate(sch.get_block("A_shared"), "meta_schedule.cooperative_fetch", 1)
    sch.enter_postproc()
    assert ms.postproc.RewriteCooperativeFetch().apply(sch)
    text = sch.mod.script()
    assert "cooperative_fetch" not in text
    assert text.count('T.thread_binding(32, thread="threadIdx.x")') == 2
