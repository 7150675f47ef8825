"""Task schedulers: which task of a multi-function tuning job gets the next round."""

from tir_mlir.meta_schedule.task_scheduler.gradient_based import GradientBased
from tir_mlir.meta_schedule.task_scheduler.round_robin import RoundRobin
from tir_mlir.meta_schedule.task_scheduler.task_scheduler import TaskScheduler


def create(kind: str = "gradient") -> TaskScheduler:
    if kind == "gradient":
        return GradientBased()
    if kind == "round-robin":
        return RoundRobin()
    raise ValueError(f"unknown task scheduler {kind!r}: expected gradient or round-robin")


__all__ = ["GradientBased", "RoundRobin", "TaskScheduler", "create"]
