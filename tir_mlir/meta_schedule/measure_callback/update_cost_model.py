"""UpdateCostModel: the task scheduler's cost model learns from the batch. As in TVM, a
candidate that did not build, or that ran without error in no time, is left out."""

from tir_mlir.meta_schedule.measure_callback.measure_callback import MeasureCallback


class UpdateCostModel(MeasureCallback):
    def apply(
        self, task_scheduler, task_id, measure_candidates, builder_results, runner_results
    ) -> None:
        model = task_scheduler.cost_model_
        if model is None:
            return
        kept = [
            (c, r)
            for c, b, r in zip(measure_candidates, builder_results, runner_results)
            if b.error_msg is None and (r.error_msg is not None or sum(r.run_secs or []) > 0)
        ]
        model.update(task_scheduler.tasks_[task_id].ctx, [c for c, _ in kept], [r for _, r in kept])
