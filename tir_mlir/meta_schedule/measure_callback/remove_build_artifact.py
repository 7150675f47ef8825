"""RemoveBuildArtifact: the shared objects of a measured batch are deleted (TVM's callback;
without it they stay in the builder's folder until the tuner exits)."""

import os

from tir_mlir.meta_schedule.measure_callback.measure_callback import MeasureCallback


class RemoveBuildArtifact(MeasureCallback):
    def apply(
        self, task_scheduler, task_id, measure_candidates, builder_results, runner_results
    ) -> None:
        remove_artifacts(builder_results)


def remove_artifacts(builder_results) -> None:
    """Delete the shared objects of `builder_results` (those already gone are no error)."""
    for result in builder_results:
        if result.artifact_path:
            try:
                os.remove(result.artifact_path)
            except FileNotFoundError:
                pass
