"""The default CPU design space of a matmul holds the shape of the hand schedule
benchmarks/schedules/matmul_1024.py (64-column panels, a 4x64 accumulator tile over all of
k, written back per panel row): replayed with those decisions, its write cache compacts to a
4x64 tile, its inner loop is a 64-lane vector, and it computes numpy's numbers. As in TVM,
RewriteParallelVectorizeUnroll fuses the panel rows into the parallel loop too (4 panels
are under the 32 jobs of 2 cores, so the next loop is taken): one job per 4x64 tile."""

import sys
from pathlib import Path

import numpy as np

import tir_mlir
from schedule_check import parse
from tir_mlir.meta_schedule.tune_context import TuneContext
from tir_mlir.passes.lowering.pipeline import emit_text

sys.path.insert(0, str(Path(__file__).parent.parent.parent / "benchmarks"))
from vs_tvm_cases import matmul  # noqa: E402

N = 256
MM = matmul(N)
# i: 1 x 64 x 1 x 4, j: 4 x 1 x 1 x 64 (4 parallel panels), k: all outside, unroll 512
HAND = [[1, N // 4, 1, 4], [N // 64, 1, 1, 64], [N, 1], 3]


def test_default_space_holds_the_hand_schedule_shape():
    mod = parse(MM)
    ctx = TuneContext(mod, "llvm -num-cores=2", search_strategy="replay-trace", rand_state=0)
    spaces = ctx.generate_design_space()
    cached = [
        s
        for s in spaces
        if any(
            i.name == "cache_write" and i.args["storage_scope"] == "global" for i in s.trace.insts
        )
        and any(i.name == "reverse_compute_at" for i in s.trace.insts)
    ]
    # the write cache computed under the second spatial level (TVM's reuse level 2)
    trace = next(s.trace for s in cached if "loop=l21" in str(s.trace))
    decisions = iter(HAND)
    for inst in list(trace.insts):
        if inst.name in ("sample_perfect_tile", "sample_categorical"):
            trace = trace.with_decision(inst, next(decisions), remove_postproc=True)
    strategy = ctx.search_strategy
    strategy.pre_tuning(1, 1, spaces)
    cand = strategy.replay(trace)
    assert cand is not None, dict(strategy.failures)
    text = cand.mod.script()
    assert f"for i_0_j_0_i_1_fused in T.parallel({N // 64 * N // 4}" in text
    assert "for j_3 in T.vectorized(64):" in text
    scf = emit_text(cand.mod.module, "scf", "cpu", False)
    assert "memref.alloca() : memref<4x64xf32>" in scf  # the tile, not a full C copy
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (N, N)).astype("float32") for _ in range(2))
    c = np.zeros((N, N), "float32")
    tir_mlir.build(cand.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
