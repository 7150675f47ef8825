"""Design spaces: every schedule rule on matmul, conv2d, softmax and layernorm (the sketches
it generates, printed, against golden files: `pytest --update-golden` rewrites them),
custom rules and ScheduleFn, postprocessors, and the property that random candidates of
the design spaces compute what the unscheduled programs compute."""

import os
from pathlib import Path

import pytest

import tir_mlir
import tir_mlir.meta_schedule as ms
from schedule_check import check_numerics, check_replay, parse
from tir_mlir import Schedule, ScheduleError
from tir_mlir.meta_schedule.tune_context import TuneContext
from tir_mlir.passes.lowering.gpu_usage import kernel_usage

PROGRAMS = Path(__file__).parent.parent / "data" / "programs"
GOLDEN = Path(__file__).parent.parent / "golden" / "meta_schedule"
WORKLOADS = {
    "matmul": "matmul",
    "conv2d": "conv2d_pad",
    "softmax": "softmax",
    "layernorm": "layernorm",
    "mm_relu": "mm_relu",
}
TARGET = "llvm -num-cores=2"


def load(name):
    return parse((PROGRAMS / f"{WORKLOADS[name]}.tir").read_text())


RULES = {
    "auto_inline": lambda: ms.schedule_rule.AutoInline(),
    "multi_level_tiling": lambda: ms.schedule_rule.MultiLevelTiling(
        structure="SSRSRS",
        max_innermost_factor=64,
        reuse_write=ms.schedule_rule.ReuseConfig(req="may", levels=[1, 2], scope="global"),
    ),
    "parallelize_vectorize_unroll": lambda: ms.schedule_rule.ParallelizeVectorizeUnroll(
        max_jobs_per_core=16, max_vectorize_extent=64, unroll_max_steps=[0, 16, 64, 512]
    ),
    "random_compute_location": lambda: ms.schedule_rule.RandomComputeLocation(),
}


def sketches(mod, rules, seed=0):
    space = ms.space_generator.PostOrderApply(sch_rules=rules, postprocs=[], mutator_probs={})
    return ms.generate_design_space(mod, TARGET, space=space, seed=seed)


@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize("workload", ["matmul", "conv2d", "softmax", "layernorm"])
def test_rule_sketches(rule, workload, request):
    mod = load(workload)
    spaces = sketches(mod, [RULES[rule]()])
    text = "\n\n".join(f"# sketch {k}\n{s.trace}" for k, s in enumerate(spaces)) + "\n"
    path = GOLDEN / f"{rule}__{workload}.txt"
    if request.config.getoption("--update-golden"):
        path.write_text(text)
    assert text == path.read_text()
    for s in spaces:
        check_numerics(mod, s.mod, next(iter(mod.functions)))
        check_replay(s, mod)


def test_default_llvm_space_of_matmul():
    spaces = ms.generate_design_space(load("matmul"), TARGET, seed=1)
    # MultiLevelTiling with reuse_write "may" at levels [1, 2]: no cache, cache at 1, at 2
    assert len(spaces) == 3
    texts = [str(s.trace) for s in spaces]
    assert sum("cache_write" in t for t in texts) == 2
    assert all("sample_perfect_tile" in t and "meta_schedule.unroll_explicit" in t for t in texts)


def test_mm_relu_fuses_the_consumer_instead_of_a_cache():
    spaces = ms.generate_design_space(load("mm_relu"), TARGET, seed=0)
    texts = [str(s.trace) for s in spaces]
    assert sum("reverse_compute_at(block=b" in t for t in texts) == 2
    assert not any("cache_write" in t for t in texts)


def test_custom_rule_and_schedule_fn():
    def tile_j(sch, block):
        if sch.get(block).name_hint != "C":
            return [sch]
        i, j, k = sch.get_loops(block)
        a, b = sch.copy(), sch.copy()
        a.split(j, a.sample_perfect_tile(j, n=2, max_innermost_factor=8))
        b.split(i, b.sample_perfect_tile(i, n=2, max_innermost_factor=8))
        return [a, b]

    mod = load("matmul")
    spaces = sketches(mod, [tile_j])
    assert len(spaces) == 2 and all("sample_perfect_tile" in str(s.trace) for s in spaces)

    def fn(sch):
        i, j, k = sch.get_loops(sch.get_block("C"))
        sch.split(k, sch.sample_perfect_tile(k, n=3, max_innermost_factor=4))

    (only,) = ms.generate_design_space(mod, TARGET, space=ms.space_generator.ScheduleFn(fn))
    assert len(only.get_loops(only.get_block("C"))) == 5

    def bad(sch, block):
        return None

    with pytest.raises(ScheduleError, match="must return a list of Schedules"):
        sketches(mod, [bad])


def test_postprocessors_apply_annotations():
    mod = load("matmul")
    (sch,) = [
        s
        for s in ms.generate_design_space(mod, TARGET, seed=3)
        if "cache_write" not in str(s.trace)
    ]
    sch.enter_postproc()
    for p in ms.postproc.create("llvm"):
        assert p.apply(sch)
    text = sch.mod.script()
    assert "T.parallel(" in text and "T.vectorized(" in text and '"C_init"' in text
    assert "meta_schedule.parallel" not in text
    check_numerics(mod, sch.mod, "matmul")
    check_replay(sch, mod)


@pytest.mark.parametrize("workload", ["matmul", "conv2d", "softmax", "layernorm", "mm_relu"])
def test_random_candidates_compute_the_same_numbers(workload):
    """The property: random candidates of the full design space (sampled decisions,
    postprocessors applied) all compute the unscheduled program's numbers. 20 per workload
    (100 in all) by default; TIR_MLIR_LONG_TESTS=1 checks 100 per workload (500 in all)."""
    n = 100 if os.environ.get("TIR_MLIR_LONG_TESTS") == "1" else 20
    mod = load(workload)
    ctx = TuneContext(mod, TARGET, search_strategy="replay-trace", rand_state=7)
    strategy = ctx.search_strategy
    strategy.pre_tuning(n, n, ctx.generate_design_space())
    cands = strategy.generate_measure_candidates()
    assert len(cands) == n, strategy.failures
    func = next(iter(mod.functions))
    seen = set()
    for c in cands:
        text = c.sch.mod.script()
        if text in seen:
            continue
        seen.add(text)
        check_numerics(mod, c.sch.mod, func)
    assert len(seen) > n // 10


def test_failing_postprocessor_drops_the_candidate():
    class Reject(ms.postproc.Postproc):
        def apply(self, sch):
            raise ScheduleError("no")

    space = ms.space_generator.PostOrderApply(postprocs=[Reject()])
    ctx = TuneContext(
        load("matmul"),
        TARGET,
        space_generator=space,
        search_strategy=ms.search_strategy.ReplayTrace(max_fail_count=5),
    )
    ctx.search_strategy.pre_tuning(4, 4, ctx.generate_design_space())
    assert ctx.search_strategy.generate_measure_candidates() is None
    assert ctx.search_strategy.failures["ScheduleError"] == 5


def test_mutators_keep_the_program_valid():
    mod = load("matmul")
    ctx = TuneContext(mod, TARGET, rand_state=3)
    (sketch, *_) = ctx.generate_design_space()
    strategy = ctx.search_strategy
    strategy.pre_tuning(8, 8, [sketch])
    sch = strategy.sample(sketch.trace)
    import random

    rng = random.Random(0)
    for mutator in [
        ms.mutator.MutateTileSize(),
        ms.mutator.MutateUnroll(),
        ms.mutator.MutateParallel(),
    ]:
        mutator.initialize_with_tune_context(ctx)
        new = None
        for _ in range(10):
            new = new or mutator.apply(sch.trace, rng)
        assert new is not None and str(new) != str(sch.trace.without_postproc())
        child = strategy.replay(new)
        assert child is not None
        check_numerics(mod, child.mod, "matmul")


ROWSUM = """
@T.prim_func
def main(A: T.Buffer((4, 1024), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 1024):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""


def test_add_rfactor_on_a_reduction_with_little_parallelism():
    mod = parse(ROWSUM)
    spaces = sketches(mod, [ms.schedule_rule.AddRFactor(max_jobs_per_core=16)])
    assert len(spaces) == 3  # unchanged, rfactor at outer, at inner
    assert [str(s.trace).count("sch.rfactor(") for s in spaces] == [0, 1, 1]
    for s in spaces:
        check_numerics(mod, s.mod, "main")
    # enough spatial parallelism: nothing to do
    assert len(sketches(load("matmul"), [ms.schedule_rule.AddRFactor()])) == 1


SMALL_GPU = {
    "matmul16": """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
""",
    "rowsum": ROWSUM,
}


@pytest.mark.parametrize("name", sorted(SMALL_GPU))
def test_cuda_space_binds_threads_and_computes_the_same_numbers(name):
    from schedule_check import interp

    mod = parse(SMALL_GPU[name])
    ctx = TuneContext(mod, "cuda", search_strategy="replay-trace", rand_state=2)
    st = ctx.search_strategy
    st.pre_tuning(6, 6, ctx.generate_design_space())
    cands = st.generate_measure_candidates()
    assert cands, st.failures
    for c in cands:
        text = c.sch.mod.script()
        assert 'thread="blockIdx.x"' in text and 'thread="threadIdx.x"' in text
        assert kernel_usage(c.sch.mod)["threads_per_block"] <= 1024
        check_numerics(mod, c.sch.mod, "main", runner=interp)


def test_verify_gpu_code_rejects_too_many_threads():
    sch = Schedule(parse(ROWSUM))
    i, k = sch.get_loops(sch.get_block("B"))
    sch.bind(i, "blockIdx.x")
    sch.bind(k, "threadIdx.x")  # 1024 threads: allowed
    verify = ms.postproc.VerifyGPUCode()
    verify.initialize_with_tune_context(TuneContext(parse(ROWSUM), "cuda"))
    assert verify.apply(sch)
    sch2 = Schedule(parse(ROWSUM.replace("1024", "2048")))
    i, k = sch2.get_loops(sch2.get_block("B"))
    sch2.bind(k, "threadIdx.x")
    assert not verify.apply(sch2)


def test_verify_gpu_code_rejects_a_thread_bound_with_two_extents():
    """AutoBind's unit blockIdx loop around a nest already bound to blockIdx (a softmax
    candidate): nested loops bound to one thread read one id, which cannot range over 1 and 4
    values; the build refuses it (it computed row 0 only)."""
    verify = ms.postproc.VerifyGPUCode()
    verify.initialize_with_tune_context(TuneContext(parse(ROWSUM), "cuda"))
    sch = Schedule(parse(ROWSUM))
    i, k = sch.get_loops(sch.get_block("B"))
    sch.bind(i, "blockIdx.x")
    assert verify.apply(sch)
    sch.bind(sch.add_unit_loop(i), "blockIdx.x")
    assert kernel_usage(sch.mod)["rebound_threads"] and not verify.apply(sch)
    with pytest.raises(
        tir_mlir.errors.BuildError,
        match="loop 'i' binds blockIdx.x with extent 4 "
        "inside loop 'u', which binds it with extent 1",
    ):
        tir_mlir.build(sch.mod, target="cuda")


def test_mutate_compute_location_moves_the_block():
    import random

    mod = load("softmax")
    space = ms.space_generator.PostOrderApply(
        sch_rules=[ms.schedule_rule.RandomComputeLocation()], postprocs=[], mutator_probs={}
    )
    ctx = TuneContext(mod, TARGET, space_generator=space, rand_state=0)
    (sketch,) = ctx.generate_design_space()
    mutator = ms.mutator.MutateComputeLocation()
    mutator.initialize_with_tune_context(ctx)
    rng = random.Random(1)
    replayed = 0
    for _ in range(6):
        new = mutator.apply(sketch.trace, rng)
        assert new is not None
        assert new.decisions != sketch.trace.without_postproc().decisions
        sch = Schedule(mod)
        try:  # a location compute_at refuses: the search drops such a candidate
            new.apply_to_schedule(sch)
        except ScheduleError:
            continue
        replayed += 1
        check_numerics(mod, sch.mod, "softmax")
    assert replayed
