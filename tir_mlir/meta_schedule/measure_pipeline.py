"""Build and measure a batch of candidates.

When the measurement does not share CPUs with the compiles (a remote runner, or a
LocalRunner pinned by `affinity` to cores the builder's workers leave free), builds overlap
measurement: each candidate goes to the runner as soon as its own compile is done, while
later ones still compile. Otherwise every compile finishes first (TVM's order): a `parallel`
kernel timed next to running compiles is slowed by a random amount, and the search would learn
from that noise."""

import logging
import os
import time
from typing import Callable, List, Optional

from tir_mlir.meta_schedule.builder import BuilderInput
from tir_mlir.meta_schedule.runner import RunnerInput, RunnerResult

log = logging.getLogger("tir_mlir.meta_schedule")


def can_overlap(builder, runner) -> bool:
    """True when the runner measures on CPUs the builder's workers do not need."""
    from tir_mlir.meta_schedule.runner import LocalRunner

    if not isinstance(runner, LocalRunner):
        return True  # measures elsewhere (DaskRunner)
    workers = getattr(builder, "max_workers", None) or os.cpu_count() or 1
    return bool(runner.affinity) and workers + len(runner.affinity) <= (os.cpu_count() or 1)


def build_and_run(
    builder,
    runner,
    build_inputs: List[BuilderInput],
    runner_input: Callable[[int, str], Optional[RunnerInput]],
    overlap: Optional[bool] = None,
    on_result: Optional[Callable[[int, RunnerResult], None]] = None,
    on_built: Optional[Callable[[], None]] = None,
    builder_results: Optional[list] = None,
) -> List[RunnerResult]:
    """One RunnerResult per input: the build error, or the measurement of the artifact.
    `runner_input(k, artifact_path)` makes the k-th candidate's RunnerInput. `overlap`
    (default: `can_overlap(builder, runner)`) measures while later candidates compile.
    Without overlap, candidates are measured one after the other and `on_result(k, result)`
    is called before the next RunnerInput is made (so it can depend on the results so far:
    the tuner's cut-off for slow candidates). `on_built()` is called when the measurements
    start: after every compile without overlap, at once with it. `builder_results`, a list,
    receives the BuilderResults in input order (for the measure callbacks)."""
    if overlap is None:
        overlap = can_overlap(builder, runner)
    waits = builder.build_async(build_inputs)

    def start(k, built):
        """The build error, or the future of the measurement."""
        if builder_results is not None:
            builder_results.append(built)
        if built.error_msg is not None:
            return RunnerResult(None, built.error_msg)
        return runner.run([runner_input(k, built.artifact_path)])[0]

    def finish(k, started) -> RunnerResult:
        result = started if isinstance(started, RunnerResult) else started.result()
        if on_result is not None:
            on_result(k, result)
        return result

    if overlap:
        if on_built is not None:
            on_built()
        started = [start(k, wait()) for k, wait in enumerate(waits)]
        return [finish(k, s) for k, s in enumerate(started)]
    begin = time.perf_counter()
    built_all = [wait() for wait in waits]
    log.debug("built %d candidates in %.1fs", len(built_all), time.perf_counter() - begin)
    if on_built is not None:
        on_built()
    return [finish(k, start(k, built)) for k, built in enumerate(built_all)]
