"""What a runner takes and returns (TVM's `RunnerInput`, `RunnerResult`, `RunnerFuture`)."""

from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Protocol

from tir_mlir.meta_schedule.database.record import bad_run_secs


@dataclass
class EvaluatorConfig:
    """How a candidate is timed: `repeat` measurements of `number` calls each, `number` grown
    until one measurement lasts `min_repeat_ms`; `enable_cpu_cache_flush` evicts the caches
    before each measurement (then the one warm-up call is the only cache-warm run)."""

    number: int = 3
    repeat: int = 1
    min_repeat_ms: int = 40
    enable_cpu_cache_flush: bool = False


@dataclass
class RunnerInput:
    """A built candidate to measure.

    `artifact_path`: a BuilderResult's shared object. `device_type`: "cpu" (only CPU
    artifacts are measured by the local runner). `args_info`: list[ArgInfo], the buffers to
    allocate. `reference`: optional path of a reference file from `make_reference(mod)` (the
    unscheduled program's inputs and outputs): the candidate runs on those inputs first and
    must reproduce the outputs, else its result is a "WrongResult: ..." error. `func_name`:
    the function to run (default: "main", else the artifact's only function). `slow_secs`: a
    candidate whose calls take longer is timed by its first call, or the faster of its first
    two (the tuner passes a multiple of the best time known when the candidate is measured:
    a candidate 10x slower than the best needs no precise time, and its repeats were most of
    the measuring time)."""

    artifact_path: str
    device_type: str = "cpu"
    args_info: Optional[list] = None
    reference: Optional[str] = None
    func_name: Optional[str] = None
    slow_secs: Optional[float] = None


@dataclass
class RunnerResult:
    """`run_secs`: one mean time per repeat, in seconds; None on failure, and then `error_msg`
    says why, starting with its kind: "RunError", "RunTimeout", "RunCrash", "WrongResult"."""

    run_secs: Optional[List[float]]
    error_msg: Optional[str] = None

    def __post_init__(self):
        """A runner's reply is data (from a worker process or another machine): anything but
        positive finite seconds becomes a failure, never a time the search could choose."""
        if self.error_msg is not None and not isinstance(self.error_msg, str):
            self.error_msg = str(self.error_msg)
        if self.run_secs is not None:
            why = bad_run_secs(self.run_secs)
            if why:
                self.run_secs, self.error_msg = None, self.error_msg or f"InvalidResult: {why}"
            else:
                self.run_secs = [float(s) for s in self.run_secs]


class Pending(Protocol):
    """A task in flight: a concurrent.futures.Future or a Dask future."""

    def done(self) -> bool: ...

    def result(self) -> Any: ...


class RunnerFuture:
    """A measurement in flight: `done()` polls, `result()` waits and never raises."""

    def __init__(self, future: Pending, to_result: Callable[[Any], RunnerResult], owner=None):
        """`owner`: the runner, kept alive while the measurement is in flight (its worker
        processes end when it is collected)."""
        self._future, self._to_result, self._owner = future, to_result, owner

    def done(self) -> bool:
        return self._future.done()

    def result(self) -> RunnerResult:
        return self._to_result(self._future)


class Runner:
    def run(self, runner_inputs: List[RunnerInput]) -> List[RunnerFuture]:
        raise NotImplementedError
