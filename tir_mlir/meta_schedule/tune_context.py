"""TuneContext: one tuning task (a module, its target, its space generator and search
strategy, and the task's random seed), TVM's class of the same name."""

import random
from typing import Optional

from tir_mlir.meta_schedule.target import Target
from tir_mlir.module import IRModule


class TuneContext:
    def __init__(
        self,
        mod: Optional[IRModule] = None,
        target="llvm",
        space_generator=None,
        search_strategy=None,
        task_name: str = "main",
        rand_state: Optional[int] = None,
        num_threads: Optional[int] = None,
        logger=None,
    ):
        self.mod = mod
        self.target = Target(target)
        self.task_name = task_name
        self.rand_state = (
            random.randrange(1, 2**31) if rand_state is None or rand_state < 0 else rand_state
        )
        self.num_threads = num_threads or self.target.num_cores
        self.logger = logger
        self.space_generator = _space(space_generator)
        self.search_strategy = _strategy(search_strategy)
        self.space_generator.initialize_with_tune_context(self)
        self.search_strategy.initialize_with_tune_context(self)

    def generate_design_space(self):
        return self.space_generator.generate_design_space(self.mod)


def _space(space):
    """A SpaceGenerator from TVM's accepted forms: None / "post-order-apply", a schedule
    function (ScheduleFn), or a SpaceGenerator."""
    from tir_mlir.meta_schedule.space_generator import PostOrderApply, ScheduleFn

    if space is None or space == "post-order-apply":
        return PostOrderApply()
    if hasattr(space, "generate_design_space"):
        return space
    if callable(space):
        return ScheduleFn(space)
    raise ValueError(f"unknown space generator {space!r}")


def _strategy(strategy):
    from tir_mlir.meta_schedule import search_strategy as ss

    named = {
        "evolutionary": ss.EvolutionarySearch,
        "replay-trace": ss.ReplayTrace,
        "replay-func": ss.ReplayFunc,
    }
    if strategy is None:
        return ss.EvolutionarySearch()
    if isinstance(strategy, str):
        if strategy not in named:
            raise ValueError(
                f"unknown search strategy {strategy!r}: expected one of {', '.join(named)}"
            )
        return named[strategy]()
    return strategy
