"""The tuner's own speed, without building or measuring anything:

    python benchmarks/bench_search.py [--samples 50] [--population 512] [--only matmul1024,...]

Per workload (1024 matmul, conv2d 1x64x56x56 with 64 3x3 filters, softmax 256x1024):
  * trace replay: CPU ms to replay one sampled sketch trace (decisions fixed, no
    postprocessors) on a fresh Schedule, checked (what users get: per-step snapshot and
    verification) and trusted (the search's mode), and per step (issue 9: <= 2 ms for 20);
  * replay: CPU ms to turn a design-space sketch into a candidate (fresh decisions replayed
    in trusted mode, then the postprocessors), the unit of work of every search strategy;
  * features: CPU ms to extract a candidate's cost-model features;
  * evolutionary round: CPU and wall seconds of EvolutionarySearch's second round
    (`--population`, 64 candidates picked) after its cost model (XGBModel) learned the first
    round's candidates with made-up run times: what a tuning round spends between
    measurements.
CPU time is reported because the machine is shared; the load average is printed.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

import tir_mlir
import tir_mlir.meta_schedule as ms
from tir_mlir.context import get_context
from tir_mlir.meta_schedule.runner import RunnerResult
from tir_mlir.meta_schedule.tune_context import TuneContext

sys.path.insert(0, str(Path(__file__).parent))
from programs import conv2d_tvmscript, matmul_tvmscript, softmax_tvmscript  # noqa: E402

WORKLOADS = {
    "matmul1024": lambda: matmul_tvmscript(1024),
    "conv2d": lambda: conv2d_tvmscript(1, 64, 56, 64, 3),
    "softmax": lambda: softmax_tvmscript(256, 1024),
}
TARGET = "llvm -num-cores=2"


def replay_and_features(mod, samples: int):
    ctx = TuneContext(mod, TARGET, search_strategy="replay-trace", rand_state=0)
    spaces = ctx.generate_design_space()
    strategy = ctx.search_strategy
    strategy.pre_tuning(samples, samples, spaces)
    strategy.sample(spaces[0].trace)  # warm caches
    start = time.process_time()
    cands = [strategy.sample(spaces[k % len(spaces)].trace) for k in range(samples)]
    replay = (time.process_time() - start) / samples
    extractor = ms.feature_extractor.PerStoreFeature()
    start = time.process_time()
    with get_context():
        extractor.extract_from(
            ctx, [ms.search_strategy.MeasureCandidate(s) for s in cands if s is not None]
        )
    features = (time.process_time() - start) / samples
    return replay, features, len(spaces), sum(s is None for s in cands)


def trace_replay(mod, samples: int):
    """(steps, checked ms, trusted ms) per replay of the longest sketch's sampled trace."""
    ctx = TuneContext(mod, TARGET, search_strategy="replay-trace", rand_state=0)
    spaces = ctx.generate_design_space()
    ctx.search_strategy.pre_tuning(samples, samples, spaces)
    longest = max(spaces, key=lambda s: len(s.trace.insts))
    cand = None
    while cand is None:
        cand = ctx.search_strategy.sample(longest.trace)
    trace = cand.trace.without_postproc()
    out = []
    for trusted in (False, True):
        trace.apply_to_schedule(tir_mlir.Schedule(mod), trusted=trusted)  # warm
        start = time.process_time()
        for _ in range(samples):
            trace.apply_to_schedule(tir_mlir.Schedule(mod), trusted=trusted)
        out.append((time.process_time() - start) / samples)
    return len(trace.insts), *out


def evolutionary_round(mod, population: int):
    search = ms.search_strategy.EvolutionarySearch(population_size=population)
    ctx = TuneContext(mod, TARGET, search_strategy=search, rand_state=0)
    model = ms.cost_model.XGBModel()
    search.pre_tuning(128, 64, ctx.generate_design_space(), cost_model=model)
    first = search.generate_measure_candidates()
    rng = np.random.default_rng(0)
    results = [RunnerResult([float(rng.uniform(1e-3, 1e-2))]) for _ in first]
    model.update(ctx, first, results)
    search.notify_runner_results(first, results)
    cpu, wall = time.process_time(), time.perf_counter()
    second = search.generate_measure_candidates()
    return time.process_time() - cpu, time.perf_counter() - wall, len(second)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--samples", type=int, default=50)
    p.add_argument("--population", type=int, default=512)
    p.add_argument("--only", default=",".join(WORKLOADS))
    a = p.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    for name in a.only.split(","):
        mod = tir_mlir.parse(WORKLOADS[name]())
        steps, checked, trusted = trace_replay(mod, a.samples)
        print(
            f"{name:11s} trace replay ({steps} steps): checked {checked * 1e3:6.2f} ms, "
            f"trusted {trusted * 1e3:6.2f} ms ({trusted / steps * 1e3:5.3f} ms/step, "
            f"{trusted / steps * 20e3:5.2f} ms per 20 steps)",
            flush=True,
        )
        replay, feats, sketches, failed = replay_and_features(mod, a.samples)
        cpu, wall, n = evolutionary_round(mod, a.population)
        print(
            f"{name:11s} {sketches} sketches: replay {replay * 1e3:6.2f} ms/candidate "
            f"({failed} failed), features {feats * 1e3:5.2f} ms/candidate; evolutionary "
            f"round (population {a.population}, {n} picked): {cpu:6.1f} s CPU, "
            f"{wall:6.1f} s wall",
            flush=True,
        )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
