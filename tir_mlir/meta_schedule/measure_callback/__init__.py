"""Measure callbacks: what happens to each measured batch (stored, artifacts removed, the cost
model trained)."""

from tir_mlir.meta_schedule.measure_callback.add_to_database import AddToDatabase
from tir_mlir.meta_schedule.measure_callback.measure_callback import (
    MeasureCallback,
    PyMeasureCallback,
)
from tir_mlir.meta_schedule.measure_callback.remove_build_artifact import (
    RemoveBuildArtifact,
)
from tir_mlir.meta_schedule.measure_callback.update_cost_model import UpdateCostModel

__all__ = [
    "AddToDatabase",
    "MeasureCallback",
    "PyMeasureCallback",
    "RemoveBuildArtifact",
    "UpdateCostModel",
]
