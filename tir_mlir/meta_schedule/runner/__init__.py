"""Runners measure built candidates (TVM's `ms.runner`)."""

from tir_mlir.meta_schedule.runner.local_runner import LocalRunner
from tir_mlir.meta_schedule.runner.reference import make_reference
from tir_mlir.meta_schedule.runner.runner import (
    EvaluatorConfig,
    Runner,
    RunnerFuture,
    RunnerInput,
    RunnerResult,
)

__all__ = [
    "EvaluatorConfig",
    "LocalRunner",
    "Runner",
    "RunnerFuture",
    "RunnerInput",
    "RunnerResult",
    "make_reference",
]


def __getattr__(name):
    if name in ("DaskRunner", "plain_data_client"):  # optional extra: dask[distributed]
        from tir_mlir.meta_schedule.runner import dask_runner

        return getattr(dask_runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
