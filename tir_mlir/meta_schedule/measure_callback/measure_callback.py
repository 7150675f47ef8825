"""The measure callback interface (TVM 0.21's): what the task scheduler runs after each batch
of candidates is measured, as
`apply(task_scheduler, task_id, measure_candidates, builder_results, runner_results)`.

The task scheduler itself only notifies the search strategy; storing the results, removing
the built shared objects and training the cost model are callbacks (`create("default")`), so
a list without AddToDatabase stores nothing, as in TVM. A user's callback derives from
`PyMeasureCallback` (TVM's `@derived_object` form) or from `MeasureCallback`.
"""


class MeasureCallback:
    def apply(
        self,
        task_scheduler,
        task_id: int,
        measure_candidates: list,
        builder_results: list,
        runner_results: list,
    ) -> None:
        raise NotImplementedError

    @staticmethod
    def create(kind: str = "default") -> list["MeasureCallback"]:
        """TVM's default list: AddToDatabase, RemoveBuildArtifact, UpdateCostModel."""
        if kind != "default":
            raise ValueError(f"Unknown kind of MeasureCallback list: {kind}")
        # the built-in callbacks derive from this class: they are imported when asked for
        from tir_mlir.meta_schedule.measure_callback.add_to_database import (
            AddToDatabase,
        )
        from tir_mlir.meta_schedule.measure_callback.remove_build_artifact import (
            RemoveBuildArtifact,
        )
        from tir_mlir.meta_schedule.measure_callback.update_cost_model import (
            UpdateCostModel,
        )

        return [AddToDatabase(), RemoveBuildArtifact(), UpdateCostModel()]

    def __str__(self) -> str:
        return f"meta_schedule.{type(self).__name__}"


class PyMeasureCallback(MeasureCallback):
    """The class a user's callback derives from (with TVM's `@derived_object`)."""

    _py_interface = True


def normalize(callbacks) -> list[MeasureCallback]:
    """TVM's CallbackListType: "default", one callback, or a list of them."""
    if callbacks is None or callbacks == "default":
        return MeasureCallback.create("default")
    if isinstance(callbacks, MeasureCallback):
        return [callbacks]
    out = list(callbacks)
    for cb in out:
        if not isinstance(cb, MeasureCallback):
            raise TypeError(
                f"a measure callback must be a MeasureCallback (or a "
                f"@derived_object PyMeasureCallback), got {type(cb).__name__}"
            )
    return out
