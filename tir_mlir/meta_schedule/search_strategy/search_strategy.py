"""The search strategy interface and what all strategies share: turning a sketch trace into
a measurable candidate (replay with fresh or given decisions, then the postprocessors).

Protocol (TVM's): pre_tuning(max_trials, num_trials_per_iter, design_spaces, database,
cost_model); generate_measure_candidates() -> list of MeasureCandidate, None when done;
notify_runner_results(candidates, results); post_tuning().
A candidate that fails to replay or is rejected by a postprocessor is dropped and counted
in `self.failures` (per exception type): sampling never stops the tuning.
"""
import collections
import random
from dataclasses import dataclass
from typing import List, Optional

from tir_mlir.schedule.schedule import Schedule
from tir_mlir.schedule.trace import SAMPLING_INSTRUCTIONS, Instruction, Trace


@dataclass
class MeasureCandidate:
    sch: Schedule
    args_info: Optional[list] = None


def fresh_decisions(trace: Trace) -> Trace:
    """The trace with every decision cleared: replaying it samples anew."""
    return Trace([Instruction(i.name, {**i.args, "decision": None}, i.outputs)
                  if i.name in SAMPLING_INSTRUCTIONS else i
                  for i in trace.without_postproc().insts])


class SearchStrategy:
    def __init__(self):
        self.context = None
        self.failures = collections.Counter()
        self.rng = random.Random()

    def initialize_with_tune_context(self, context) -> None:
        self.context = context
        self.rng = random.Random(context.rand_state)
        self.mod = context.mod
        space = context.space_generator
        self.postprocs = list(getattr(space, "postprocs", None) or [])
        self.mutator_probs = dict(getattr(space, "mutator_probs", None) or {})

    def pre_tuning(self, max_trials: int, num_trials_per_iter: int, design_spaces: List,
                   database=None, cost_model=None) -> None:
        self.max_trials = max_trials
        self.num_trials_per_iter = num_trials_per_iter
        self.design_spaces = [s.trace if isinstance(s, Schedule) else s
                              for s in design_spaces]
        self.database = database
        self.cost_model = cost_model
        self.trials = 0

    def post_tuning(self) -> None:
        pass

    def generate_measure_candidates(self) -> Optional[List[MeasureCandidate]]:
        raise NotImplementedError

    def notify_runner_results(self, candidates, results) -> None:
        self.trials += len(candidates)

    def _budget(self) -> int:
        return max(0, min(self.num_trials_per_iter, self.max_trials - self.trials))

    def replay(self, trace: Trace) -> Optional[Schedule]:
        """Replay `trace` (fast, trusted) on the task's module and run the postprocessors;
        None (counted) when any step or postprocessor fails."""
        sch = Schedule(self.mod, seed=self.rng.randrange(1, 2 ** 31))
        try:
            trace.apply_to_schedule(sch, remove_postproc=True, trusted=True)
            sch.enter_postproc()
            for p in self.postprocs:
                if not p.apply(sch):
                    self.failures[type(p).__name__] += 1
                    return None
        except Exception as e:   # noqa: BLE001 - any failure rejects just this candidate
            self.failures[type(e).__name__] += 1
            return None
        return sch

    def sample(self, trace: Trace) -> Optional[Schedule]:
        """A random candidate of the sketch `trace`."""
        return self.replay(fresh_decisions(trace))
