"""PostOrderApply: apply every schedule rule to every block, consumers before producers.

Rule by rule (as TVM: the first rule over all blocks, then the second, ...), the blocks of
the original program are visited from the last to the first (so a consumer is scheduled,
e.g. tiled, before its producers are inlined into it or computed at its loops); blocks a
rule creates (caches) are not visited. Each rule maps one schedule to a
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
        sch = Schedule(mod, seed=self._rng.randrange(1, 2**31))
        # the blocks of the original program (then the root), each as one handle got up front
        # as TVM's BlockCollector does (the rules' outputs are copies of sch, which know the
        # handles made before the copy); visited from the last block to the first
        visits = []
        for func in list(mod.functions):
            names = [*sch.get_block_names(func), "root"]
            blocks = {n: sch.get_block(n, func) for n in names}
            visits += [(func, n, blocks[n]) for n in [*reversed(names[:-1]), "root"]]
        states = [sch]
        for rule in self.sch_rules:  # each rule over every block, then the next rule (TVM's)
            for func, name, block in visits:
                if name == "root" and not getattr(rule, "visits_root", False):
                    continue
                states = [out for s in states for out in self._apply(rule, s, name, func, block)]
        return states

    def _apply(self, rule, s, name: str, func: str, block) -> List[Schedule]:
        if name != "root" and name not in s.get_block_names(func):
            return [s]  # inlined by an earlier rule
        if self.f_block_filter is not None and not self.f_block_filter(s.get(block)):
            return [s]
        if not isinstance(rule, ApplyCustomRule) and has_custom_rule(s, block):
            return [s]
        return _checked(rule(s, block), rule)


def _checked(result, rule) -> List[Schedule]:
    if not isinstance(result, (list, tuple)) or not all(isinstance(s, Schedule) for s in result):
        raise ScheduleError(
            f"schedule rule {rule!r} must return a list of Schedules, got {result!r}"
        )
    return list(result)
