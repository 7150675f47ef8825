"""AddToDatabase: every measured candidate becomes a tuning record of its task's workload,
failures included (with their error), as TVM's callback stores them."""

from tir_mlir.meta_schedule.database.record import TuningRecord
from tir_mlir.meta_schedule.measure_callback.measure_callback import MeasureCallback


class AddToDatabase(MeasureCallback):
    def apply(
        self, task_scheduler, task_id, measure_candidates, builder_results, runner_results
    ) -> None:
        database = task_scheduler.database_
        if database is None:
            return
        task = task_scheduler.tasks_[task_id]
        workload = getattr(task, "workload", None) or database.commit_workload(task.ctx.mod)
        target = str(task.ctx.target)
        database.commit_tuning_records(
            [
                TuningRecord(
                    c.sch.trace,
                    workload,
                    r.run_secs,
                    target,
                    task.args_info,
                    error_msg=b.error_msg or r.error_msg,
                )
                for c, b, r in zip(measure_candidates, builder_results, runner_results)
            ]
        )
