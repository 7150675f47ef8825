"""MultiLevelTilingTensorCore: TVM's tensor-core rule (WMMA 16x16x16) on fp16 matmuls. The
sketch is built as TVM builds it (reindex, blockized 16x16x16 block marked with the compute and
init intrinsics, SSSRRSRS tiles bound to blocks and warps, shared + wmma.accumulator write
reuse, shared + wmma.matrix_a/b read reuse, each fragment copy blockized and marked); the
cuda-tensorcore postprocessors turn a sample into a program whose every fragment access is a
tensor-core op, run in the SIMT simulator against numpy."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import tir_mlir
import tir_mlir.meta_schedule as ms
from gpu_sim import simulate
from tir_mlir.intrinsics.cuda import get_wmma_intrin_group
from tir_mlir.meta_schedule.schedule_rule import MultiLevelTilingTensorCore, ReuseConfig
from tir_mlir.meta_schedule.tune_context import TuneContext
from tir_mlir.passes.lowering.pipeline import lower
from tir_mlir.schedule.trace import Trace

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "gpu_tensorcore", ROOT / "examples" / "gpu_tensorcore.py"
)
example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(example)
TARGET = "cuda -arch=sm_80"


def rule(trans_b=(False,), store="shared"):
    return MultiLevelTilingTensorCore(
        intrin_groups=[
            get_wmma_intrin_group("shared", store, "float16", "float32", t) for t in trans_b
        ],
        structure="SSSRRSRS",
        tile_binds=["blockIdx.y", "blockIdx.x", "threadIdx.y"],
        max_innermost_factor=4,
        vector_load_lens=[1, 2, 3, 4, 8, 16],
        reuse_read=ReuseConfig("must", [4], "shared"),
        reuse_write=ReuseConfig("must" if store == "shared" else "no", [2], store),
    )


def sketches(mod, r, seed=0):
    return ms.generate_design_space(
        mod, TARGET, sch_rules=[r], postprocs=[], mutator_probs={}, seed=seed
    )


def candidate(mod, r):
    """A sample the cuda-tensorcore postprocessors accept (shared memory within limits)."""
    ctx = TuneContext(
        mod=mod,
        target=TARGET,
        space_generator=ms.space_generator.PostOrderApply(
            sch_rules=[], postprocs=ms.postproc.create("cuda-tensorcore"), mutator_probs={}
        ),
    )
    for seed in range(40):
        (sch,) = sketches(mod, r, seed)
        sch.enter_postproc()
        if all(p.apply(sch) for p in ctx.space_generator.postprocs):
            return sch
    raise AssertionError("no sample fits the GPU's limits")


# TVM's te.create_prim_func(te_workload.matmul_relu(128, 128, 128, "float16", "float32"))
MATMUL_RELU = """
@T.prim_func
def main(A: T.Buffer((128, 128), "float16"), B: T.Buffer((128, 128), "float16"), compute: T.Buffer((128, 128), "float32")):
    T.func_attr({"tir.noalias": True})
    C = T.alloc_buffer((128, 128))
    for i, j, k in T.grid(128, 128, 128):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + T.Cast("float32", A[v_i, v_k]) * T.Cast("float32", B[v_k, v_j])
    for i0, i1 in T.grid(128, 128):
        with T.block("compute"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T.reads(C[v_i0, v_i1])
            T.writes(compute[v_i0, v_i1])
            compute[v_i0, v_i1] = T.max(C[v_i0, v_i1], T.float32(0.0))
"""
# the decisions of TVM 0.21's expected sketch (test_meta_schedule_schedule_rule_mlt_tc.py's
# test_matmul_relu): m, n, k tiles; the vector lengths of the C write-back (fp32: 1, 2, 3, 4),
# the A and B fetches (fp16: 1, 2, 4, 8)
TVM_DECISIONS = [[4, 1, 1, 1, 2], [2, 2, 2, 1, 1], [1, 4, 2], 3, 3, 0]
GOLDEN = ROOT / "tests" / "golden" / "meta_schedule" / "tensor_core__matmul_relu.txt"


def with_decisions(trace, decisions):
    it = iter(decisions)
    for inst in list(trace.insts):
        if inst.name in ("sample_perfect_tile", "sample_categorical"):
            trace = trace.with_decision(inst, next(it), remove_postproc=True)
    return trace


def test_the_sketch_is_tvms(request):
    """TVM's sketch for matmul + relu (MultiLevelTilingTensorCore, then AutoInline): with
    TVM's decisions, the program TVM's test expects (the golden text; the TVM adapter,
    benchmarks/tvm_ms_tests.py, checks it against TVM's by structural equality): the
    accumulator 6-D per warp [m // 32, n // 16, m % 32 // 16, 0, 16, 16], written back row by
    row of fragments with the relu inlined, fp16 fetches row-padded (buffer_dim_align), every
    16x16 tile marked with its intrinsic."""
    mod = tir_mlir.parse(MATMUL_RELU)
    inline = [r for r in ms.schedule_rule.create("cuda") if type(r).__name__ == "AutoInline"]
    rules = [rule(), *inline]  # (what TVM's test takes: get_rules("cuda", AutoInline))
    (sketch,) = ms.generate_design_space(
        mod, TARGET, sch_rules=rules, postprocs=[], mutator_probs={}, seed=0
    )
    trace = with_decisions(sketch.trace, TVM_DECISIONS)
    # (the per-warp layout's map names the sampled tile sizes, as TVM's trace does)
    assert "index_map=lambda i0, i1: (i0 // 16 // (v" in str(trace)
    replayed = tir_mlir.Schedule(mod)
    trace.apply_to_schedule(replayed)
    text = replayed.mod.script()
    if request.config.getoption("--update-golden"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()
    # the trace keeps that map over its handles: through JSON, other decisions, other layout
    again = Trace.from_json(json.loads(json.dumps(trace.as_json())))
    other = tir_mlir.Schedule(mod)
    with_decisions(again, [[2, 1, 2, 2, 1], [1, 1, 2, 1, 4], [2, 2, 2], 0, 1, 2]).apply_to_schedule(
        other
    )
    assert "C_reindex_shared_wmma_accumulator = T.alloc_buffer((4, 2, 2, 4, 16, 16)" in (
        other.mod.script()
    )


@pytest.mark.parametrize("trans_b", [False, True])
def test_a_sample_runs_on_tensor_cores(trans_b):
    mod = example.matmul(128, transpose_b=trans_b)
    sch = candidate(mod, rule(trans_b=(trans_b,)))
    text = sch.mod.script()
    for op in ("fill", "load_a", "sync_trans" if trans_b else "sync", "store"):
        assert f'"tir_mlir.wmma": "{op}"' in text
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((128, 128)).astype(np.float16) for _ in range(2))
    c = np.full((128, 128), np.nan, np.float32)
    simulate(lower(sch.mod.module, "cuda", "gpu"), a, b, c)
    bt = b.astype(np.float32).T if trans_b else b.astype(np.float32)
    np.testing.assert_allclose(c, a.astype(np.float32) @ bt, rtol=1e-4, atol=1e-3)


def test_one_sketch_per_intrinsic_group_that_fits():
    """B laid out [k, j] for the plain intrinsic, [j, k] for the transposed one: both apply."""
    plain, trans = sketches(example.matmul(128), rule(trans_b=(False, True)))
    assert '"wmma_sync_16x16x16_f16f16f32"' in plain.mod.script()
    assert '"wmma_sync_16x16x16_f16f16f32_trans"' in trans.mod.script()


def test_a_block_no_intrinsic_computes_is_left_alone():
    fp32 = tir_mlir.parse(
        example.PROGRAM.replace("SHORT", "f32").replace("DTYPE", "float32").replace("N", "64")
    )
    (sch,) = sketches(fp32, rule())
    assert not sch.trace.insts[1:] or all(i.name == "get_block" for i in sch.trace.insts)
    assert sch.mod.script() == fp32.script()


def test_bad_arguments():
    with pytest.raises(ValueError, match="threadIdx.x"):
        MultiLevelTilingTensorCore(
            [get_wmma_intrin_group("shared", "shared", "float16", "float32", False)],
            tile_binds=["blockIdx.x", "threadIdx.x"],
        )
    with pytest.raises(ValueError, match="missing store"):
        MultiLevelTilingTensorCore(
            [
                {"init": "wmma_fill_16x16x16_f32"}
                | {k: "wmma_fill_16x16x16_f32" for k in ("load_a", "load_b", "compute")}
            ],
            tile_binds=["blockIdx.x", "threadIdx.y"],
        )
    with pytest.raises(ValueError, match="straight to global memory is not supported"):
        rule(store="global")
    with pytest.raises(ValueError, match="float16 -> float32"):
        get_wmma_intrin_group("shared", "shared", "int8", "int32", False)


def test_cuda_tensorcore_defaults():
    rules = ms.schedule_rule.create("cuda-tensorcore")
    assert any(isinstance(r, MultiLevelTilingTensorCore) for r in rules)
    assert isinstance(ms.postproc.create("cuda-tensorcore")[-1], ms.postproc.RewriteTensorize)


def test_every_seed_gets_a_tensor_core_sketch():
    """Tile draws whose write-back blockize cannot separate are drawn again."""
    for seed in range(12):
        (sch,) = sketches(example.matmul(128), rule(), seed)
        assert '"wmma_sync_16x16x16_f16f16f32"' in sch.mod.script(), seed
