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
from typing import List, Optional

from tir_mlir.meta_schedule.search_strategy.replay_jobs import fresh_decisions, replay, schedule_key
from tir_mlir.schedule.schedule import Schedule
from tir_mlir.schedule.trace import Trace


class MeasureCandidate:
    """A program to measure: its schedule `sch` and `args_info` (TVM's class). A candidate
    replayed by a search worker arrives as its trace (JSON), key and cost-model `features`;
    its schedule is replayed here when `sch` is first asked for (to build it)."""

    def __init__(
        self,
        sch: Optional[Schedule] = None,
        args_info: Optional[list] = None,
        *,
        trace_json: Optional[str] = None,
        key: Optional[str] = None,
        features=None,
        replay=None,
    ):
        self._sch, self.args_info = sch, args_info
        self.trace_json, self.features, self._replay = trace_json, features, replay
        self._key = key

    @property
    def key(self) -> str:
        """`schedule_key` of the candidate's schedule."""
        if self._key is None:
            self._key = schedule_key(self.sch)
        return self._key

    @property
    def sch(self) -> Schedule:
        if self._sch is None:
            assert self._replay is not None, "a candidate without its schedule needs a replay"
            sch = self._replay(Trace.from_json(self._trace_json()), 1)
            if not isinstance(sch, Schedule):
                raise RuntimeError(
                    f"a candidate's trace replayed in a search worker but not here ({sch})"
                )
            self._sch = sch
        return self._sch

    @property
    def trace(self) -> Trace:
        return self._sch.trace if self._sch is not None else Trace.from_json(self._trace_json())

    def _trace_json(self) -> str:
        assert self.trace_json is not None, "a candidate has its schedule or its trace"
        return self.trace_json

    def without_schedule(self) -> "MeasureCandidate":
        """The candidate without its (large) schedule, replayed again if asked for."""
        if self.trace_json is None:
            return self
        return MeasureCandidate(
            None,
            self.args_info,
            trace_json=self.trace_json,
            key=self._key,
            features=self.features,
            replay=self._replay,
        )


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

    def pre_tuning(
        self,
        max_trials: int,
        num_trials_per_iter: int,
        design_spaces: List,
        database=None,
        cost_model=None,
    ) -> None:
        self.max_trials = max_trials
        self.num_trials_per_iter = num_trials_per_iter
        self.design_spaces = [s.trace if isinstance(s, Schedule) else s for s in design_spaces]
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
        sch = replay(self.mod, self.postprocs, trace, self.rng.randrange(1, 2**31))
        if isinstance(sch, str):
            self.failures[sch] += 1
            return None
        return sch

    def sample(self, trace: Trace) -> Optional[Schedule]:
        """A random candidate of the sketch `trace`."""
        return self.replay(fresh_decisions(trace))


class PySearchStrategy(SearchStrategy):
    """The class a TVM user's search strategy derives from (with `@derived_object`): it
    overrides `pre_tuning`, `generate_measure_candidates`, `notify_runner_results`,
    `post_tuning` and optionally `_initialize_with_tune_context` (TVM's protocol)."""

    _py_interface = True

    def initialize_with_tune_context(self, context) -> None:
        super().initialize_with_tune_context(context)
        self._initialize_with_tune_context(context)

    def _initialize_with_tune_context(self, context) -> None:
        pass
