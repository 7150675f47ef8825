"""Tuning with a tensor intrinsic (MultiLevelTilingWithIntrin) and its program: the auto-tensorize
and trusted-replay tests share them."""

import tir_mlir.meta_schedule as ms
from tir_mlir.meta_schedule.tune_context import TuneContext


MM = """
@T.prim_func
def main(A: T.Buffer((64, 32), "float32"), B: T.Buffer((32, {n}), "float32"),
         C: T.Buffer((64, {n}), "float32")):
    for i, j, k in T.grid(64, {n}, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


REUSE_WRITE = {"req": "may", "levels": [1, 2], "scope": "global"}


def _reuse_context(mod, seed=0):
    rules = [
        ms.schedule_rule.MultiLevelTilingWithIntrin(
            "mac16_f32", structure="SSRSRS", reuse_write=REUSE_WRITE
        )
    ]
    post = [
        ms.postproc.DisallowDynamicLoop(),
        ms.postproc.RewriteReductionBlock(),
        ms.postproc.RewriteTensorize(vectorize_init_loop=True),
    ]
    space = ms.space_generator.PostOrderApply(sch_rules=rules, postprocs=post, mutator_probs={})
    return TuneContext(
        mod,
        "llvm -num-cores=2",
        space_generator=space,
        search_strategy="replay-trace",
        rand_state=seed,
    )
