"""The default CPU design space of a matmul holds the tile shape that runs closest to the vendor
libraries (issue 28, benchmarks/README.md): 8 x 32 register tiles over 64 steps of k, 256 rows
and 256 columns of C per k tile. Replayed with those decisions, the candidate the tuner
measures reads B's 64 x 256 panel (64 KiB: more than an L1, rows 1 KiB apart, 16 in each of
four L1 sets) from the contiguous copy `pack-panels` makes once per k tile, and computes
numpy's numbers."""

import re
import sys
from pathlib import Path

import numpy as np

import tir_mlir
from schedule_check import parse
from tir_mlir.meta_schedule.space_point import replay_space_point
from tir_mlir.meta_schedule.tune_context import TuneContext
from tir_mlir.passes.lowering.pipeline import emit_text

sys.path.insert(0, str(Path(__file__).parent.parent.parent / "benchmarks"))
from vs_tvm_cases import matmul  # noqa: E402

N = 256
# i: 1 x 1 x 32 x 8, j: 1 x 1 x 8 x 32, k: 4 x 64, no unrolling
DECISIONS = [[1, 1, 32, 8], [1, 1, 8, 32], [4, 64], 0]


def test_default_space_holds_a_packed_panel_tile():
    mod = parse(matmul(N))
    ctx = TuneContext(mod, "llvm -num-cores=2", search_strategy="replay-trace", rand_state=0)
    spaces = ctx.generate_design_space()
    trace = next(s.trace for s in spaces if not any(i.name == "cache_write" for i in s.trace.insts))
    decisions = iter(DECISIONS)
    for inst in list(trace.insts):
        if inst.name in ("sample_perfect_tile", "sample_categorical"):
            trace = trace.with_decision(inst, next(decisions), remove_postproc=True)
    strategy = ctx.search_strategy
    strategy.pre_tuning(1, 1, spaces)
    cand = strategy.replay(trace)
    assert cand is not None, dict(strategy.failures)
    assert "for j_3 in T.vectorized(32):" in cand.mod.script()
    scf = emit_text(cand.mod.module, "scf", "cpu", False)
    assert re.findall(r"memref\.alloca\(\) : memref<(\d+x\d+)xf32>", scf) == ["64x256"]
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (N, N)).astype("float32") for _ in range(2))
    c = np.zeros((N, N), "float32")
    tir_mlir.build(cand.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def _k_tile(trace):
    """The sample_perfect_tile instruction that splits the matmul's reduction loop `k`."""
    ks = [i for i in trace.insts if i.name == "sample_perfect_tile" and len(i.outputs) == 2]
    assert len(ks) == 1, [i.name for i in trace.insts]
    return ks[0]


def test_default_space_accumulates_a_register_tile_over_the_whole_reduction():
    """The CPU rule lets the innermost tile of `k` be the whole loop (TVM caps it at 64, like
    the spatial ones): a register tile of C then accumulates all N steps between one load and
    one store of its accumulators, while the packed B panel under the spatial tiles serves
    every row tile, BLAS's loop structure (benchmarks/README.md, "Issue 28, session 11")."""
    mod = parse(matmul(N))
    ctx = TuneContext(mod, "llvm -num-cores=2", search_strategy="replay-trace", rand_state=0)
    for space in ctx.generate_design_space():
        assert _k_tile(space.trace).args["max_innermost_factor"] == N
    # i: 1 x 1 x 32 x 8, j: 1 x 2 x 4 x 32, k: 1 x N (the whole reduction), no unrolling
    cand = replay_space_point(mod, "llvm -num-cores=2", [[1, 1, 32, 8], [1, 2, 4, 32], [1, N], 0])
    scf = emit_text(cand.mod.module, "scf", "cpu", False)
    # one loop over all N steps of k carries the 8 x 32 tile's 8 accumulators
    assert re.findall(rf"%\w+:(\d+) = scf\.for %\w+ = %c0\w* to %c{N}\w* step", scf) == ["8"], scf
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (N, N)).astype("float32") for _ in range(2))
    c = np.zeros((N, N), "float32")
    tir_mlir.build(cand.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
