"""RoundRobin: tune the tasks in turn, one round each."""

from tir_mlir.meta_schedule.task_scheduler.task_scheduler import TaskScheduler


class RoundRobin(TaskScheduler):
    def __init__(self):
        self._next = 0

    def next_task_id(self) -> int:
        n = len(self.tasks)
        for step in range(n):
            k = (self._next + step) % n
            if not self.tasks[k].done:
                self._next = k + 1
                return k
        return -1
