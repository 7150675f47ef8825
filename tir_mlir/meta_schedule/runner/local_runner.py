"""`LocalRunner`: measures each candidate in a separate worker process, one at a time.

A candidate that crashes, loops forever or raises ends as a RunnerResult error, its worker
replaced; the tuner goes on. `TVM_NUM_THREADS`, when set, becomes the workers'
`OMP_NUM_THREADS` (the thread count of `parallel` loops); `affinity` pins them to CPUs."""

import os
import weakref
from typing import List, Optional, Sequence

from tir_mlir.meta_schedule.process_pool import ProcessPool, TaskError
from tir_mlir.meta_schedule.runner.runner import (
    EvaluatorConfig,
    Runner,
    RunnerFuture,
    RunnerInput,
    RunnerResult,
)

_KIND = {"timeout": "RunTimeout", "crash": "RunCrash"}


def to_result(future) -> RunnerResult:
    """The RunnerResult of a finished measuring task (a TaskError becomes its message)."""
    try:
        return RunnerResult(list(future.result()), None)
    except TaskError as e:
        if e.kind == "error" and e.message.startswith("WrongResult:"):
            return RunnerResult(None, e.message)
        return RunnerResult(None, f"{_KIND.get(e.kind, 'RunError')}: {e.message}")


def measure_args(inp: RunnerInput, config: EvaluatorConfig, cooldown_sec, affinity, reference=None):
    """The arguments of `measure.run_artifact` for one input (plain, picklable values);
    `reference` applies when the input names none."""
    args_info = None if inp.args_info is None else [a.as_json() for a in inp.args_info]
    return (
        inp.artifact_path,
        args_info,
        inp.func_name,
        vars(config).copy(),
        inp.reference or reference,
        cooldown_sec,
        list(affinity) if affinity else None,
        inp.slow_secs,
    )


class LocalRunner(Runner):
    def __init__(
        self,
        timeout_sec: float = 30.0,
        evaluator_config: Optional[EvaluatorConfig] = None,
        cooldown_sec: float = 0.0,
        affinity: Optional[Sequence[int]] = None,
        reference: Optional[str] = None,
    ):
        """`timeout_sec` bounds one candidate (load, check and timing); `cooldown_sec` is a
        pause before each measurement (lets clocks and caches settle); `reference` (a
        `make_reference` file) checks every input that names none itself."""
        self.timeout_sec = timeout_sec
        self.evaluator_config = evaluator_config or EvaluatorConfig()
        self.cooldown_sec, self.affinity, self.reference = cooldown_sec, affinity, reference
        env = {}
        if os.environ.get("TVM_NUM_THREADS"):
            env["OMP_NUM_THREADS"] = os.environ["TVM_NUM_THREADS"]
        self._pool = ProcessPool(1, env)
        weakref.finalize(self, self._pool.shutdown)  # the worker goes with the runner

    def run(self, runner_inputs: List[RunnerInput]) -> List[RunnerFuture]:
        out = []
        for inp in runner_inputs:
            if inp.device_type not in ("cpu", "llvm"):
                raise ValueError(f"LocalRunner measures CPU artifacts, not {inp.device_type!r}")
            args = measure_args(
                inp, self.evaluator_config, self.cooldown_sec, self.affinity, self.reference
            )
            future = self._pool.submit(
                "tir_mlir.meta_schedule.runner.measure:run_artifact", args, timeout=self.timeout_sec
            )
            out.append(RunnerFuture(future, to_result, self))
        return out

    def shutdown(self, kill: bool = False):
        """Stop the worker processes (`kill`: without waiting for the candidates in flight)."""
        self._pool.shutdown(kill)
