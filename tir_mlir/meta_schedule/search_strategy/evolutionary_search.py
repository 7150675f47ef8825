"""EvolutionarySearch: TVM's cost-model-guided genetic search.

Each round: a population of `population_size` candidates is made of the best measured
traces (init_measured_ratio of it) and fresh random samples of the sketches; it evolves for
`genetic_num_iters` generations, parents drawn in proportion to the cost model's predicted
score and mutated with probability `genetic_mutate_prob` (a mutator drawn by its
probability); every candidate seen is scored and the best unmeasured ones are kept. The
round measures (1 - eps_greedy) of its budget from those best predicted and eps_greedy from
the random samples. A program already measured (same trace) is never measured again.
While the model cannot rank yet (untrained, a RandomModel), evolving by its random scores
picks from random samples and their mutants of up to `genetic_num_iters` generations: a round
then measures that directly, random walks of 0 to genetic_num_iters mutations from random
samples, without the thousands of replays of the population. (Not plain samples: the mutants
spread the first measurements, the model's training data, wider; tuning conv2d from plain
samples ended 1.7x slower.)
Given a database that already holds records of the task (a resumed tuning), its best records
join the measured ones from the start, and so does the unscheduled program the task
scheduler measured as trial 0 (counted as measured, never in the population: its empty trace
has no decision to mutate). Where the database has no such record (a GPU task), the first
round measures the program as given itself (the empty trace and the postprocessors): the
result is never slower than the input.

On a CPU target the random samples and the mutants fit the target's register budget
(register_budget.py: no multi-level tile whose accumulators must spill; a sample over it is
drawn again, a mutant over it dropped); `register_budget=False` turns that off. There the first
round also measures `packing_share` of its candidates from packing points of the sketches
(`RegisterBudget.packs`: a register tile that fills half the budget or more and accumulates
over the whole reduction, the other decisions drawn at random): such tiles are one draw in
about 200 random draws, so a first round of random walks measures one or none, and a cost model
trained on other tiles does not propose them (the 1024 matmul's 8 x 32 tile over all of `k`,
the BLAS form, was never measured by a 256-trial tune).
The replays (sampling, mutation, postprocessing, feature extraction) run in
`context.num_threads` worker processes (replay_jobs.py); the candidates come back as traces
and features, and only those picked for measurement are replayed here.
"""

import heapq
import json
from typing import List, Optional

from tir_mlir.meta_schedule.cost_model.cost_model import costs
from tir_mlir.meta_schedule.search_strategy.replay_jobs import Replayer
from tir_mlir.meta_schedule.search_strategy.search_strategy import MeasureCandidate, SearchStrategy
from tir_mlir.meta_schedule.target_key import canonical_target
from tir_mlir.meta_schedule.unscheduled import (
    has_decisions,
    is_unscheduled,
    unscheduled_record,
)
from tir_mlir.meta_schedule.register_budget import RegisterBudget
from tir_mlir.schedule.trace import Trace


class EvolutionarySearch(SearchStrategy):
    def __init__(
        self,
        population_size: int = 512,
        init_measured_ratio: float = 0.2,
        init_min_unmeasured: int = 50,
        max_fail_count: int = 5,
        genetic_num_iters: int = 4,
        genetic_mutate_prob: float = 0.85,
        genetic_max_fail_count: int = 10,
        eps_greedy: float = 0.05,
        register_budget: bool = True,
        packing_share: float = 0.125,
    ):
        super().__init__()
        self.population_size = population_size
        self.init_measured_ratio = init_measured_ratio
        self.init_min_unmeasured = init_min_unmeasured
        self.max_fail_count = max_fail_count
        self.genetic_num_iters = genetic_num_iters
        self.genetic_mutate_prob = genetic_mutate_prob
        self.genetic_max_fail_count = genetic_max_fail_count
        self.eps_greedy = eps_greedy
        self.register_budget = register_budget
        self.packing_share = packing_share

    def pre_tuning(self, *args, **kwargs) -> None:
        super().pre_tuning(*args, **kwargs)
        self.measured = {}  # key -> (candidate without its schedule, seconds)
        workers = getattr(self.context, "num_threads", None) or 1
        self._mutators = list(self.mutator_probs)
        self._mutator_weights = [self.mutator_probs[m] for m in self._mutators]
        self._replayer = Replayer(
            self.mod,
            self.design_spaces,
            self.postprocs,
            self._mutators,
            getattr(self.cost_model, "extractor", None),
            workers,
            self._register_budget(),
        )
        self._tried_unscheduled = False
        self._mutable_keys = {}  # key -> whether its trace has decisions to mutate
        self._seed_from_database()

    def _register_budget(self) -> Optional[RegisterBudget]:
        """What the random samples and the mutants must fit (register_budget.py): the
        target's, unless turned off."""
        if not self.register_budget or self.context is None or self.context.target is None:
            return None
        return RegisterBudget.of_target(self.context.target)

    def _seed_from_database(self) -> None:
        """Resuming: the best records the database already holds for this program and target
        (TVM's get_top_k, as many as the population's measured share) count as measured, so
        they seed every round's population and are never measured again."""
        if (
            self.database is None
            or self.context is None
            or not self.database.has_workload(self.mod)
        ):
            return
        workload = self.database.commit_workload(self.mod)
        target = canonical_target(str(self.context.target))
        top = self.database.get_top_k(
            workload, int(self.population_size * self.init_measured_ratio), target
        )
        # the unscheduled program (the task scheduler's trial 0) is measured too, best or not
        unscheduled = unscheduled_record(self.database, workload, target)
        if (
            unscheduled is not None
            and unscheduled.is_valid
            and not any(is_unscheduled(r.trace) for r in top)
        ):
            top.append(unscheduled)
        jobs = [("replay", json.dumps(r.trace.as_json()), self._seed()) for r in top]
        for record, cand in zip(top, self._run(jobs)):
            if cand is not None:
                self.measured[cand.key] = (cand, record.mean_sec)

    # --- one round ------------------------------------------------------------------------
    def generate_measure_candidates(self) -> Optional[List[MeasureCandidate]]:
        n = self._budget()
        if n == 0:
            return None
        first = self._unscheduled()
        if first is not None:
            n -= 1
        picked = self._round(n) if n > 0 else None
        if first is None:
            return picked
        return [first] + [c for c in picked or [] if c.key != first.key]

    def _round(self, n: int) -> Optional[List[MeasureCandidate]]:
        if not getattr(self.cost_model, "can_rank", lambda: True)():
            packing = self._packing_points(int(round(n * self.packing_share)))
            return self._pick(packing, self._random_walks(n + max(8, n // 4)), n)
        best = self._best_measured(int(self.population_size * self.init_measured_ratio))
        randoms = self._random_samples(
            max(self.population_size - len(best), self.init_min_unmeasured)
        )
        if not best and not randoms:
            return None
        return self._pick(self._evolve(best + randoms, n), randoms, n)

    def _unscheduled(self) -> Optional[MeasureCandidate]:
        """The first round's extra candidate: the program as given (the empty trace, then the
        postprocessors), unless already measured (the task scheduler's trial 0 of a CPU task,
        or a resumed tuning) or refused by a postprocessor (an unbound GPU kernel). The design space need not contain it (TVM's
        spaces do not), yet it can be the fastest program (an elementwise function the
        lowering already vectorizes); measuring it once means the tuner never returns
        anything slower than its input."""
        if self._tried_unscheduled:
            return None
        self._tried_unscheduled = True
        (cand,) = self._run([("replay", json.dumps(Trace([]).as_json()), self._seed())])
        if cand is None or cand.key in self.measured:
            return None
        return cand

    def _pick(self, top: list, randoms: list, n: int) -> Optional[List[MeasureCandidate]]:
        """n unmeasured candidates: the best predicted, and eps_greedy of n random ones."""
        n_rand = min(len(randoms), int(round(n * self.eps_greedy)))
        picked, keys = [], set()
        for c in top[: n - n_rand] + self.rng.sample(randoms, len(randoms)):
            if c.key in keys or c.key in self.measured:
                continue
            keys.add(c.key)
            picked.append(c)
            if len(picked) == n:
                break
        return picked or None

    def notify_runner_results(self, candidates, results) -> None:
        super().notify_runner_results(candidates, results)
        for c, cost in zip(candidates, costs(results)):
            self.measured[c.key] = (c.without_schedule(), cost)

    # --- pieces ------------------------------------------------------------------------------
    def _seed(self) -> int:
        return self.rng.randrange(1, 2**31)

    def _mutation(self, parent) -> tuple:
        """The job of a mutator, drawn by its probability, applied to `parent`."""
        m = self.rng.choices(range(len(self._mutators)), weights=self._mutator_weights)[0]
        return ("mutate", parent.trace_json, m, self._seed())

    def _run(self, jobs: list) -> list:
        """Run replay jobs: a candidate (trace, key, features; its schedule replayed here on
        demand) or None (counted in `failures`) per job."""
        out = []
        for res in self._replayer.run(jobs):
            if res[0] == "ok":
                _, key, trace_json, features = res
                out.append(
                    MeasureCandidate(
                        trace_json=trace_json,
                        key=key,
                        features=features,
                        replay=self._replayer.local.replay,
                    )
                )
            else:
                if res[1] is not None:
                    self.failures[res[1]] += 1
                out.append(None)
        return out

    def _best_measured(self, k: int) -> list:
        """The k fastest measured candidates a mutator can derive others from: not a trace
        without decisions (the unscheduled program's), which would only take a place of the
        population."""
        ranked = sorted(
            (v for v in self.measured.values() if v[1] != float("inf")), key=lambda v: v[1]
        )
        return [c for c, _ in ranked if self._mutable(c)][:k]

    def _mutable(self, c) -> bool:
        if c.key not in self._mutable_keys:
            self._mutable_keys[c.key] = has_decisions(c.trace)
        return self._mutable_keys[c.key]

    def _random_samples(self, k: int) -> list:
        out, fails = [], 0
        while len(out) < k and fails < self.max_fail_count * max(1, k):
            jobs = [
                ("sample", self.rng.randrange(len(self.design_spaces)), self._seed())
                for _ in range(k - len(out))
            ]
            for c in self._run(jobs):
                if c is None:
                    fails += 1
                else:
                    out.append(c)
        return out

    def _packing_points(self, k: int) -> list:
        """Up to k random packing points of the sketches (register_budget.py: a register tile
        filling the budget over the whole reduction), fewer where the draws find none; none
        without a register budget (a GPU target, or turned off)."""
        if self._replayer.local.budget is None or k <= 0:
            return []
        jobs = [
            ("pack", self.rng.randrange(len(self.design_spaces)), self._seed()) for _ in range(k)
        ]
        return [c for c in self._run(jobs) if c is not None]

    def _random_walks(self, k: int) -> list:
        """k random samples, each mutated in up to genetic_num_iters steps (how many drawn at
        random; each step mutates with genetic_mutate_prob; a failed mutation is a step
        without one)."""
        walks = self._random_samples(k)
        steps = [self.rng.randrange(self.genetic_num_iters + 1) for _ in walks]
        for step in range(self.genetic_num_iters if self._mutators else 0):
            moving = [
                i
                for i, s in enumerate(steps)
                if s > step and self.rng.random() <= self.genetic_mutate_prob
            ]
            jobs = [self._mutation(walks[i]) for i in moving]
            for i, child in zip(moving, self._run(jobs)):
                if child is not None:
                    walks[i] = child
        return walks

    def _scores(self, population, cache: dict) -> List[float]:
        """Predicted scores of candidates; `cache` (key -> score, one round: the model does
        not change within it) spares scoring parents kept unmutated and children equal to a
        program already scored."""
        todo = {}
        for c in population:
            if c.key not in cache:
                todo.setdefault(c.key, c)
        if todo:
            if self.cost_model is None:
                new = [self.rng.random() for _ in todo]
            else:
                new = [float(x) for x in self.cost_model.predict(self.context, list(todo.values()))]
            cache.update(zip(todo, new))
        return [cache[c.key] for c in population]

    def _evolve(self, population: list, n: int) -> list:
        """The best predicted unmeasured candidates seen while evolving, best first."""
        heap, seen, cache = [], set(), {}  # min-heap of (score, tiebreak, c) of size <= 2n

        def offer(c, score):
            if c.key in seen or c.key in self.measured:
                return
            seen.add(c.key)
            item = (score, len(seen), c)
            if len(heap) < 2 * n:
                heapq.heappush(heap, item)
            elif score > heap[0][0]:
                heapq.heapreplace(heap, item)

        for gen in range(self.genetic_num_iters + 1):
            scores = self._scores(population, cache)
            for c, s in zip(population, scores):
                offer(c, s)
            if gen == self.genetic_num_iters or not self._mutators:
                break
            total = sum(max(s, 0.0) for s in scores)
            probs = [max(s, 0.0) / total for s in scores] if total > 0 else None
            nxt, fails = [], 0
            while len(nxt) < len(population) and fails < self.genetic_max_fail_count * len(
                population
            ):
                # a batch of slots: a parent kept as it is, or a mutation job for the workers
                slots = []
                for _ in range(len(population) - len(nxt)):
                    parent = self.rng.choices(population, weights=probs)[0]
                    slots.append(
                        parent
                        if self.rng.random() > self.genetic_mutate_prob
                        else self._mutation(parent)
                    )
                children = iter(self._run([s for s in slots if isinstance(s, tuple)]))
                for s in slots:
                    child = next(children) if isinstance(s, tuple) else s
                    if child is None:
                        fails += 1
                    else:
                        nxt.append(child)
            population = nxt or population
        return [c for _, _, c in sorted(heap, key=lambda x: -x[0])]
