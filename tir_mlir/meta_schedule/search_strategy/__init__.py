"""Search strategies: how candidates to measure are chosen from the design space."""

from tir_mlir.meta_schedule.search_strategy.evolutionary_search import EvolutionarySearch
from tir_mlir.meta_schedule.search_strategy.replay_func import ReplayFunc
from tir_mlir.meta_schedule.search_strategy.replay_trace import ReplayTrace
from tir_mlir.meta_schedule.search_strategy.search_strategy import (
    MeasureCandidate,
    PySearchStrategy,
    SearchStrategy,
)

__all__ = [
    "EvolutionarySearch",
    "ReplayFunc",
    "ReplayTrace",
    "MeasureCandidate",
    "PySearchStrategy",
    "SearchStrategy",
]
