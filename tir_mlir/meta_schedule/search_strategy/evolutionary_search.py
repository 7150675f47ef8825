"""EvolutionarySearch: TVM's cost-model-guided genetic search.

Each round: a population of `population_size` candidates is made of the best measured
traces (init_measured_ratio of it) and fresh random samples of the sketches; it evolves for
`genetic_num_iters` generations, parents drawn in proportion to the cost model's predicted
score and mutated with probability `genetic_mutate_prob` (a mutator drawn by its
probability); every candidate seen is scored and the best unmeasured ones are kept. The
round measures (1 - eps_greedy) of its budget from those best predicted and eps_greedy from
the random samples. A program already measured (same trace) is never measured again.
Given a database that already holds records of the task (a resumed tuning), its best records
join the measured ones from the start.
"""
import heapq
from typing import List, Optional

from tir_mlir.meta_schedule.search_strategy.search_strategy import (MeasureCandidate,
                                                                    SearchStrategy)


class EvolutionarySearch(SearchStrategy):
    def __init__(self, population_size: int = 512, init_measured_ratio: float = 0.2,
                 init_min_unmeasured: int = 50, max_fail_count: int = 5,
                 genetic_num_iters: int = 4, genetic_mutate_prob: float = 0.85,
                 genetic_max_fail_count: int = 10, eps_greedy: float = 0.05):
        super().__init__()
        self.population_size = population_size
        self.init_measured_ratio = init_measured_ratio
        self.init_min_unmeasured = init_min_unmeasured
        self.max_fail_count = max_fail_count
        self.genetic_num_iters = genetic_num_iters
        self.genetic_mutate_prob = genetic_mutate_prob
        self.genetic_max_fail_count = genetic_max_fail_count
        self.eps_greedy = eps_greedy

    def pre_tuning(self, *args, **kwargs) -> None:
        super().pre_tuning(*args, **kwargs)
        self.measured = {}        # trace key -> (trace, seconds)
        self._kept = {}           # trace key -> schedule, for the best measured (no replay)
        self._seed_from_database()

    def _seed_from_database(self) -> None:
        """Resuming: the best records the database already holds for this program and target
        (TVM's get_top_k, as many as the population's measured share) count as measured, so
        they seed every round's population and are never measured again."""
        if self.database is None or self.context is None or \
                not self.database.has_workload(self.mod):
            return
        from tir_mlir.meta_schedule.target_key import canonical_target
        workload = self.database.commit_workload(self.mod)
        top = self.database.get_top_k(workload,
                                      int(self.population_size * self.init_measured_ratio),
                                      canonical_target(str(self.context.target)))
        for record in top:
            sch = self.replay(record.trace)
            if sch is not None:
                self.measured[_key(sch)] = (sch.trace, record.mean_sec)
                self._kept[_key(sch)] = sch
        self._keep_best()

    # --- one round ------------------------------------------------------------------------
    def generate_measure_candidates(self) -> Optional[List[MeasureCandidate]]:
        n = self._budget()
        if n == 0:
            return None
        best = self._best_measured(int(self.population_size * self.init_measured_ratio))
        randoms = self._random_samples(max(self.population_size - len(best),
                                           self.init_min_unmeasured))
        if not best and not randoms:
            return None
        top = self._evolve(best + randoms, n)
        n_rand = min(len(randoms), int(round(n * self.eps_greedy)))
        picked, keys = [], set()
        for sch in top[:n - n_rand] + self.rng.sample(randoms, len(randoms)):
            k = _key(sch)
            if k in keys or k in self.measured:
                continue
            keys.add(k)
            picked.append(sch)
            if len(picked) == n:
                break
        return [MeasureCandidate(s) for s in picked] or None

    def notify_runner_results(self, candidates, results) -> None:
        super().notify_runner_results(candidates, results)
        for c, r in zip(candidates, results):
            secs = r.run_secs if r.error_msg is None and r.run_secs else None
            cost = sum(secs) / len(secs) if secs else float("inf")
            self.measured[_key(c.sch)] = (c.sch.trace, cost)
            self._kept[_key(c.sch)] = c.sch
        self._keep_best()

    def _keep_best(self) -> None:
        """Keep the schedules of the measured programs that seed the next population (TVM
        replays them each round; the program of a trace replayed again is the same), and
        drop the others' (their modules are large)."""
        best = {k for k, _ in self._ranked(int(self.population_size *
                                                self.init_measured_ratio))}
        self._kept = {k: s for k, s in self._kept.items() if k in best}

    # --- pieces ------------------------------------------------------------------------------
    def _ranked(self, k: int) -> list:
        """(key, (trace, seconds)) of the k fastest measured programs."""
        return sorted(((key, v) for key, v in self.measured.items() if v[1] != float("inf")),
                      key=lambda kv: kv[1][1])[:k]

    def _best_measured(self, k: int) -> list:
        out = []
        for key, (trace, _) in self._ranked(k):
            sch = self._kept.get(key)
            if sch is not None:
                # the seed a replay would have drawn: the random stream, and so the search,
                # stay what they were when these were replayed
                self.rng.randrange(1, 2 ** 31)
            else:
                sch = self.replay(trace)
            if sch is not None:
                out.append(sch)
        return out

    def _random_samples(self, k: int) -> list:
        out, fails = [], 0
        while len(out) < k and fails < self.max_fail_count * max(1, k):
            sch = self.sample(self.rng.choice(self.design_spaces))
            if sch is None:
                fails += 1
            else:
                out.append(sch)
        return out

    def _scores(self, population, cache: dict) -> List[float]:
        """Predicted scores of (key, schedule) pairs; `cache` (key -> score, one round: the
        model does not change within it) spares re-extracting the features of parents kept
        unmutated and of children equal to a program already scored."""
        todo = {k: s for k, s in population if k not in cache}
        if todo:
            if self.cost_model is None:
                new = [self.rng.random() for _ in todo]
            else:
                cands = [MeasureCandidate(s) for s in todo.values()]
                new = [float(x) for x in self.cost_model.predict(self.context, cands)]
            cache.update(zip(todo, new))
        return [cache[k] for k, _ in population]

    def _evolve(self, population: list, n: int) -> list:
        """The best predicted unmeasured candidates seen while evolving, best first."""
        heap, seen = [], set()          # min-heap of (score, tiebreak, sch) of size <= 2n
        cache, replayed = {}, {}
        population = [(_key(s), s) for s in population]

        def offer(k, sch, score):
            if k in seen or k in self.measured:
                return
            seen.add(k)
            item = (score, len(seen), sch)
            if len(heap) < 2 * n:
                heapq.heappush(heap, item)
            elif score > heap[0][0]:
                heapq.heapreplace(heap, item)

        mutators = list(self.mutator_probs)
        weights = [self.mutator_probs[m] for m in mutators]
        for gen in range(self.genetic_num_iters + 1):
            scores = self._scores(population, cache)
            for (k, sch), s in zip(population, scores):
                offer(k, sch, s)
            if gen == self.genetic_num_iters or not mutators:
                break
            total = sum(max(s, 0.0) for s in scores)
            probs = [max(s, 0.0) / total for s in scores] if total > 0 else None
            nxt, fails = [], 0
            while len(nxt) < len(population) and fails < self.genetic_max_fail_count * \
                    len(population):
                parent = self.rng.choices(population, weights=probs)[0]
                if self.rng.random() > self.genetic_mutate_prob:
                    nxt.append(parent)
                    continue
                mutator = self.rng.choices(mutators, weights=weights)[0]
                trace = mutator.apply(parent[1].trace, self.rng)
                child = None if trace is None else self._replay_once(trace, replayed)
                if child is None:
                    fails += 1
                    continue
                nxt.append(child)
            population = nxt or population
        return [sch for _, _, sch in sorted(heap, key=lambda x: -x[0])]

    def _replay_once(self, trace, replayed: dict):
        """(key, schedule) of a mutated trace, None when it fails; `replayed` remembers the
        round's replays: parents drawn often mutate into the same child, and a trace whose
        decisions are all given replays to the same program every time."""
        text = str(trace.without_postproc())
        if text not in replayed:
            sch = self.replay(trace)
            # every decision given: the replayed trace prints as the one replayed (its key)
            replayed[text] = None if sch is None else (text, sch)
        return replayed[text]


def _key(sch) -> str:
    """Equal pre-postprocessing traces give equal programs (postprocessors are
    deterministic)."""
    return str(sch.trace.without_postproc())
