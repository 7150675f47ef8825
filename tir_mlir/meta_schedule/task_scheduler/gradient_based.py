"""GradientBased: after one round of every task, tune the task whose weighted end-to-end time
is expected to drop most (TVM's gradient-based scheduler): the expected drop of a task mixes
its recent improvement (backward gradient over `window_size` rounds) and an optimistic guess
that the next round improves as much as an average past round (`alpha` weights the two)."""

import math

from tir_mlir.meta_schedule.task_scheduler.task_scheduler import TaskScheduler


class GradientBased(TaskScheduler):
    def __init__(self, alpha: float = 0.2, window_size: int = 3, seed=None):
        self.alpha = alpha
        self.window_size = window_size

    def next_task_id(self) -> int:
        live = [k for k, t in enumerate(self.tasks) if not t.done]
        if not live:
            return -1
        fresh = [k for k in live if self.tasks[k].rounds == 0]
        if fresh:
            return fresh[0]
        return max(live, key=self._gain)

    def _gain(self, k: int) -> float:
        t = self.tasks[k]
        hist = t.best_history
        if not math.isfinite(hist[-1]):
            return math.inf  # nothing valid yet: it needs trials most
        w = min(self.window_size, len(hist) - 1)
        backward = (hist[-1 - w] - hist[-1]) / w if w and math.isfinite(hist[-1 - w]) else 0
        forward = hist[-1] / (t.rounds + 1)
        return t.weight * (self.alpha * backward + (1 - self.alpha) * forward)
