"""Cost models: predict which candidates are fast before measuring them."""

from tir_mlir.meta_schedule.cost_model.cost_model import CostModel, PyCostModel
from tir_mlir.meta_schedule.cost_model.random_model import RandomModel
from tir_mlir.meta_schedule.cost_model.xgb_model import XGBModel

__all__ = ["CostModel", "PyCostModel", "RandomModel", "XGBModel"]
