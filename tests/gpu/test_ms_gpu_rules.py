"""The tuner's GPU pieces that need cross-thread reductions and shared tiles: the
CrossThreadReduction schedule rule, the RewriteCooperativeFetch postprocessor, RewriteReductionBlock
leaving cross-thread reductions whole, and VerifyGPUCode counting compacted shared memory.
Sketches are checked by running them in the SIMT simulator against numpy."""

from pathlib import Path

import numpy as np
from binding_forms import norm_bmn
from gpu_sim import simulate
from gpu_example_schedules import tiled_matmul

import tir_mlir
from tir_mlir import meta_schedule as ms
from tir_mlir.meta_schedule.tune_context import TuneContext
from tir_mlir.passes.lowering.pipeline import lower
from tir_mlir.passes.lowering.gpu_usage import kernel_usage
from tir_mlir.schedule.schedule import Schedule
from tir_mlir.schedule.trace import SAMPLING_INSTRUCTIONS

DATA = Path(__file__).parent.parent / "data" / "gpu"


def space(mod, rules):
    gen = ms.space_generator.PostOrderApply(sch_rules=rules, postprocs=[], mutator_probs={})
    return TuneContext(mod, "cuda", space_generator=gen, rand_state=1).generate_design_space()


def softmax_ref(a):
    e = np.exp(a - a.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def test_cross_thread_reduction_sketches_run_like_numpy():
    mod = tir_mlir.load(DATA / "softmax_te.tir")
    rules = [
        ms.schedule_rule.AutoInline(into_producer=True, into_consumer=True),
        ms.schedule_rule.CrossThreadReduction(),
        ms.schedule_rule.AutoBind(),
    ]
    sketches = space(mod, rules)
    assert len(sketches) == 4  # each of the two reductions: unchanged or cross-thread
    texts = [s.mod.script() for s in sketches]
    both = [t for t in texts if "maxelem_shared" in t and "expsum_shared" in t]
    assert len(both) == 1  # both moved under the row loop, results in shared memory
    a = np.random.default_rng(0).standard_normal((16, 256)).astype(np.float32)
    for s in sketches:
        b = np.zeros_like(a)
        simulate(lower(s.mod.module, "cuda", "gpu"), a, b)
        np.testing.assert_allclose(b, softmax_ref(a), rtol=1e-5, atol=1e-7)


MAX_AT_EXP = """\
    maxelem_shared = T.alloc_buffer((16,), scope="shared")
    expv = T.alloc_buffer((16, 256))
    expsum = T.alloc_buffer((16,))
    for i in range(16):
        for ax0, ax1_0 in T.grid(1, 1):
            for ax1_1 in T.thread_binding(512, thread="threadIdx.x"):
                with T.block("maxelem"):
                    vi = T.axis.spatial(16, i + ax0)
                    vk = T.axis.reduce(256, ax1_0 * 512 + ax1_1)
                    T.where(ax1_0 * 512 + ax1_1 < 256)
                    T.reads(A[vi, vk])
                    T.writes(maxelem_shared[vi])
                    with T.init():
                        maxelem_shared[vi] = T.float32(-340282346638528859811704183484516925440.0)
                    maxelem_shared[vi] = T.max(maxelem_shared[vi], A[vi, vk])
        for j_0 in range(1):
            for j_1 in T.thread_binding(512, thread="threadIdx.x"):
                with T.block("exp"):
                    vi = T.axis.spatial(16, i)
                    vj = T.axis.spatial(256, j_0 * 512 + j_1)
                    T.where(j_0 * 512 + j_1 < 256)
                    T.reads(A[vi, vj], maxelem_shared[vi])
                    T.writes(expv[vi, vj])
                    expv[vi, vj] = T.exp(A[vi, vj] - maxelem_shared[vi])
    for i, k in T.grid(16, 256):
"""


def test_cross_thread_reduction_joins_an_unbound_consumer():
    """TVM's softmax_mn sketches: each row reduction is kept, or split across the threads and
    computed at its consumer (exp, not yet bound: its innermost loop is split by the same
    sampled thread count and bound), so 4 sketches. With 512 threads for a 256-long row the
    split leaves a T.where, as in TVM."""
    mod = tir_mlir.load(DATA / "softmax_te.tir")
    sketches = space(mod, [ms.schedule_rule.CrossThreadReduction()])
    shared = [
        ("maxelem_shared" in s.mod.script(), "expsum_shared" in s.mod.script()) for s in sketches
    ]
    assert sorted(shared) == [(False, False), (False, True), (True, False), (True, True)]
    trace = sketches[shared.index((True, False))].trace
    for inst in list(trace.insts):
        if inst.name in SAMPLING_INSTRUCTIONS:
            trace = trace.with_decision(inst, 7, remove_postproc=True)  # 512 threads
    sch = Schedule(mod)
    trace.apply_to_schedule(sch, remove_postproc=True)
    assert MAX_AT_EXP in sch.mod.script()
    a = np.random.default_rng(0).standard_normal((16, 256)).astype(np.float32)
    for s in space(mod, [ms.schedule_rule.CrossThreadReduction(), ms.schedule_rule.AutoBind()]):
        b = np.zeros_like(a)
        simulate(lower(s.mod.module, "cuda", "gpu"), a, b)
        np.testing.assert_allclose(b, softmax_ref(a), rtol=1e-5, atol=1e-7)


ROW_MAX_32 = """
@T.prim_func
def main(A: T.Buffer((1, 32), "float32"), B: T.Buffer((1,), "float32")):
    for i, k in T.grid(1, 32):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(-3.4028234663852886e38)
            B[vi] = T.max(B[vi], A[vi, vk])
"""


def test_cross_thread_reduction_splits_a_reduction_shorter_than_a_warp():
    """TVM 0.21 tries the cross-thread sketch for any reduction that is not tiled (its
    argmax_32 test), not only those longer than a warp."""
    sketches = space(tir_mlir.parse(ROW_MAX_32), [ms.schedule_rule.CrossThreadReduction()])
    assert len(sketches) == 2
    a = np.random.default_rng(1).standard_normal((1, 32)).astype(np.float32)
    bound = [s for s in sketches if "threadIdx.x" in s.mod.script()]
    assert len(bound) == 1
    b = np.zeros(1, np.float32)
    simulate(lower(bound[0].mod.module, "cuda", "gpu"), a, b)
    assert b[0] == a.max()


NORM = norm_bmn(16)


def test_cross_thread_reduction_follows_the_consumers_sampled_thread_count():
    """A reduction computed at a consumer that AutoBind already bound is split by the
    consumer's sampled thread count itself (the variable, as TVM reads it from the trace), so a
    candidate that samples another count keeps one thread count per kernel: with the sketch's
    count frozen in, 4 of 8 candidates bound 32 and 128 threads and did not build."""
    mod = tir_mlir.parse(NORM)
    ctx = TuneContext(mod, "cuda", search_strategy="replay-trace", rand_state=11)
    joined = [s for s in ctx.generate_design_space() if "C_shared" in s.mod.script()]
    assert len(joined) == 1
    splits = [i for i in joined[0].trace.insts if i.name == "split"]
    assert splits[-1].args["factors"][1] is splits[0].args["factors"][1]  # one variable
    st = ctx.search_strategy
    st.pre_tuning(8, 8, ctx.generate_design_space())
    a = np.random.default_rng(0).random((1, 16, 16), np.float32)
    for c in st.generate_measure_candidates():
        d = np.zeros(1, np.float32)
        simulate(lower(c.sch.mod.module, "cuda", "gpu"), a, d)
        np.testing.assert_allclose(d, np.sqrt((a * a).sum(keepdims=True)[0, 0]), rtol=1e-5)


def test_cross_thread_reduction_leaves_spatial_work_alone():
    mod = tir_mlir.load(DATA / "matmul.tir")  # 65536 outputs of 256-long reductions
    assert len(space(mod, [ms.schedule_rule.CrossThreadReduction()])) == 1


def test_rewrite_reduction_block_keeps_cross_thread_init():
    mod = tir_mlir.load(DATA / "softmax_te.tir")
    rules = [
        ms.schedule_rule.AutoInline(into_producer=True, into_consumer=True),
        ms.schedule_rule.CrossThreadReduction(),
        ms.schedule_rule.AutoBind(),
    ]
    sch = [s for s in space(mod, rules) if "maxelem_shared" in s.mod.script()][0]
    sch.enter_postproc()
    assert ms.postproc.RewriteReductionBlock().apply(sch)
    names = sch.get_block_names()
    assert "maxelem_init" not in names and "expsum_init" not in names


def test_rewrite_cooperative_fetch_binds_and_vectorizes():
    src = (DATA / "matmul.tir").read_text().replace("256", "64")
    sch = tir_mlir.Schedule(tir_mlir.parse(src))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    bi, ti = sch.split(i, [None, 8])
    bj, tj = sch.split(j, [None, 16])
    ko, ki = sch.split(k, [None, 8])
    sch.reorder(bi, bj, ti, tj, ko, ki)
    for loop, tag in (
        (bi, "blockIdx.y"),
        (bj, "blockIdx.x"),
        (ti, "threadIdx.y"),
        (tj, "threadIdx.x"),
    ):
        sch.bind(loop, tag)
    cache = sch.cache_read(c, 0, "shared")
    sch.compute_at(cache, ko, preserve_unit_loops=True)
    sch.annotate(cache, "meta_schedule.cooperative_fetch", 2)
    sch.enter_postproc()
    assert ms.postproc.RewriteCooperativeFetch().apply(sch)
    text = sch.mod.script()
    fetch = text[: text.index('with T.block("A_shared")')].split("for k_0 in range(8):")[1]
    # the 8x8 tile: 64 = [1, 8 (threadIdx.y), 16 (threadIdx.x), 2 (vector)] with a guard
    assert 'T.thread_binding(8, thread="threadIdx.y")' in fetch
    assert 'T.thread_binding(16, thread="threadIdx.x")' in fetch
    assert "T.vectorized(2)" in fetch and "cooperative_fetch" not in text
    rng = np.random.default_rng(1)
    a, b = rng.random((64, 64), np.float32), rng.random((64, 64), np.float32)
    out = np.zeros((64, 64), np.float32)
    simulate(lower(sch.mod.module, "cuda", "gpu"), a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5)


def test_verify_gpu_code_counts_compacted_shared_memory():
    sch = tiled_matmul(1024)  # declares 2 x 4 MB of shared, uses 2 x 4 KB per block
    assert kernel_usage(sch.mod)["shared_bytes"] == 8192
    verify = ms.postproc.VerifyGPUCode()
    verify.initialize_with_tune_context(TuneContext(sch.mod, "cuda"))
    assert verify.apply(sch)
