"""Build and measure a batch of candidates with builds overlapping measurement: each
candidate goes to the runner as soon as its own compile is done, while later ones still
compile. (On one machine the compiles then share the CPU with the measurement: leave the
measuring cores free with `LocalBuilder(max_workers=...)` and `LocalRunner(affinity=...)`
when that matters; with a remote runner the overlap is free.)"""
from typing import Callable, List, Optional

from tir_mlir.meta_schedule.builder import BuilderInput
from tir_mlir.meta_schedule.runner import RunnerInput, RunnerResult


def build_and_run(builder, runner, build_inputs: List[BuilderInput],
                  runner_input: Callable[[int, str], Optional[RunnerInput]]) -> List[RunnerResult]:
    """One RunnerResult per input: the build error, or the measurement of the artifact.
    `runner_input(k, artifact_path)` makes the k-th candidate's RunnerInput."""
    results: List[Optional[RunnerResult]] = [None] * len(build_inputs)
    futures = []
    for k, wait in enumerate(builder.build_async(build_inputs)):
        built = wait()
        if built.error_msg is not None:
            results[k] = RunnerResult(None, built.error_msg)
        else:
            (future,) = runner.run([runner_input(k, built.artifact_path)])
            futures.append((k, future))
    for k, future in futures:
        results[k] = future.result()
    return results
