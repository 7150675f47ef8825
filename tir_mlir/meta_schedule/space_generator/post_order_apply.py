"""PostOrderApply: apply every schedule rule to every block, consumers before producers.

The blocks of the original program are visited from the last to the first (so a consumer
is scheduled, e.g. tiled, before its producers are inlined into it or computed at its
loops); blocks a rule creates (caches) are not visited. Each rule maps one schedule to a
list, so the design space is the product of the rules' branches. A block annotated
`schedule_rule` gets ApplyCustomRule only (TVM's rule: its registered function schedules it).
Last, each function's root block (`get_block("root")`) is visited, as in TVM, by the rules
that say they handle it (`visits_root`: ParallelizeVectorizeUnroll annotates it).
"""

import random
from typing import Callable, List, Optional

from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.schedule_rule.apply_custom_rule import ApplyCustomRule, has_custom_rule
from tir_mlir.meta_schedule.space_generator.space_generator import SpaceGenerator
from tir_mlir.schedule.schedule import Schedule


class PostOrderApply(SpaceGenerator):
    def __init__(
        self,
        f_block_filter: Optional[Callable] = None,
        sch_rules="from-target",
        postprocs="from-target",
        mutator_probs="from-target",
    ):
        super().__init__(sch_rules, postprocs, mutator_probs)
        self.f_block_filter = f_block_filter
        self._rng = random.Random()

    def initialize_with_tune_context(self, context) -> None:
        super().initialize_with_tune_context(context)
        self._rng = random.Random(context.rand_state)

    def generate_design_space(self, mod) -> List[Schedule]:
        states = [Schedule(mod, seed=self._rng.randrange(1, 2**31))]
        for func in list(mod.functions):
            for name in reversed(states[0].get_block_names(func)):
                states = [out for sch in states for out in self._apply_rules(sch, name, func)]
            states = [out for sch in states for out in self._apply_rules(sch, "root", func)]
        return states

    def _apply_rules(self, sch, name: str, func: str) -> List[Schedule]:
        rules = [r for r in self.sch_rules if name != "root" or getattr(r, "visits_root", False)]
        if not rules:
            return [sch]
        block = sch.get_block(name, func)  # one handle: the rules' outputs are copies of sch
        states = [sch]
        for rule in rules:
            nxt = []
            for s in states:
                if name != "root" and name not in s.get_block_names(func):
                    nxt.append(s)  # inlined by an earlier rule
                    continue
                if self.f_block_filter is not None and not self.f_block_filter(s.get(block)):
                    nxt.append(s)
                    continue
                if not isinstance(rule, ApplyCustomRule) and has_custom_rule(s, block):
                    nxt.append(s)
                    continue
                nxt += _checked(rule(s, block), rule)
            states = nxt
        return states


def _checked(result, rule) -> List[Schedule]:
    if not isinstance(result, (list, tuple)) or not all(isinstance(s, Schedule) for s in result):
        raise ScheduleError(
            f"schedule rule {rule!r} must return a list of Schedules, got {result!r}"
        )
    return list(result)
