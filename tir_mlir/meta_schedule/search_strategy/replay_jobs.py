"""The evolutionary search's replays, run in worker processes (or here, given one core or a
task that does not pickle): the search is CPU-bound Python, and the cores sit idle while it
runs between rounds of measurement.

A job is ("sample", sketch index, seed): a random candidate of a design-space sketch;
("pack", sketch index, seed): a random packing point of a sketch (its register tile fills the
register budget and accumulates the whole reduction: register_budget.py);
("mutate", parent trace JSON, mutator index, seed): a mutator applied to a parent and the
child replayed; or ("replay", trace JSON, seed). Its result is ("ok", key, trace JSON,
features) -- the key is the trace without its postprocessing part, printed (equal keys,
equal programs); features the cost model's vector, None when the model has no feature
extractor -- or ("fail", reason or None). A job's result depends on the job alone, so the
search takes the same path with any number of workers. Only text and numbers cross the
process boundary; a worker keeps the task (module, sketches, postprocessors, mutators,
extractor) for as long as the tuning runs.
"""

import atexit
import hashlib
import json
import logging
import math
import pickle
import random
from collections import OrderedDict
from typing import List, Optional

from tir_mlir.meta_schedule.register_budget import RegisterBudget
from tir_mlir.schedule.schedule import Schedule
from tir_mlir.schedule.trace import SAMPLING_INSTRUCTIONS, Instruction, Trace

log = logging.getLogger("tir_mlir.meta_schedule")
_JOBS_PER_CHUNK = 32  # a worker's share of a batch, in chunks: balances the load
_MUTATED_KEPT = 4096  # replays of mutated traces a task remembers (parents repeat)
# Draws of a sketch's decisions per random sample until its tiles fit the register budget
# (a sample is within it a third of the time or more on the conv2d and matmul sketches).
SAMPLE_DRAWS = 32
REGISTER_BUDGET = "RegisterBudget"  # the rejection of a candidate whose tile must spill
# Draws of a sketch's decisions until one fills the registers (register_budget.py: about one
# in seven of the 1024 matmul's sketches does).
PACKING_DRAWS = 100
NO_PACKING_POINT = "NoPackingPoint"


def fresh_decisions(trace: Trace) -> Trace:
    """The trace with every decision cleared: replaying it samples anew."""
    return Trace(
        [
            Instruction(i.name, {**i.args, "decision": None}, i.outputs)
            if i.name in SAMPLING_INSTRUCTIONS
            else i
            for i in trace.without_postproc().insts
        ]
    )


def schedule_key(sch) -> str:
    """The trace without its postprocessing part, printed: equal keys, equal programs (the
    postprocessors are deterministic)."""
    return str(sch.trace.without_postproc())


def replay(mod, postprocs, trace: Trace, seed: int, budget: Optional[RegisterBudget] = None):
    """The postprocessed Schedule of `trace` on `mod`, or the name of what rejected it
    (REGISTER_BUDGET: a tile over `budget`, checked before the postprocessors run).
    Trusted replay: the traces come from the search's own sketches and mutators."""
    sch = Schedule(mod, seed=seed)
    try:
        trace.apply_to_schedule(sch, remove_postproc=True, trusted=True)
        if budget is not None and not budget.admits(sch):
            return REGISTER_BUDGET
        with sch.trusted_mode():  # postprocessors check before they rewrite
            sch.enter_postproc()
            for p in postprocs:
                if not p.apply(sch):
                    return type(p).__name__
    except Exception as e:  # noqa: BLE001 - any failure rejects just this candidate
        return type(e).__name__
    return sch


def _applied(mod, trace: Trace, seed: int):
    """The Schedule of `trace` on `mod` (its undecided samples drawn from `seed`) without
    postprocessors, or None when it does not replay."""
    sch = Schedule(mod, seed=seed)
    try:
        trace.apply_to_schedule(sch, remove_postproc=True, trusted=True)
    except Exception:  # noqa: BLE001 - a draw that does not replay is drawn again
        return None
    return sch


class ReplayTask:
    """What replaying a task's candidates needs; `run(job)` gives the job's result."""

    def __init__(
        self,
        mod,
        sketches: List[Trace],
        postprocs,
        mutators,
        extractor,
        budget: Optional[RegisterBudget] = None,
    ):
        self.mod, self.sketches = mod, sketches
        self.postprocs, self.mutators, self.extractor = postprocs, mutators, extractor
        self.budget = budget
        self._mutated = OrderedDict()

    def replay(self, trace: Trace, seed: int, budget: Optional[RegisterBudget] = None):
        return replay(self.mod, self.postprocs, trace, seed, budget)

    def sample(self, sketch: int, seed: int):
        """A random candidate of a sketch within the register budget: its decisions drawn
        again (seeds drawn from `seed`) while a tile is over it, up to SAMPLE_DRAWS times."""
        rng, trace = random.Random(seed), fresh_decisions(self.sketches[sketch])
        sch = self.replay(trace, seed, self.budget)
        for _ in range(SAMPLE_DRAWS - 1):
            if not (isinstance(sch, str) and sch == REGISTER_BUDGET):
                break
            sch = self.replay(trace, rng.randrange(1, 2**31 - 1), self.budget)
        return sch

    def packing_point(self, sketch: int, seed: int):
        """A random candidate of a sketch that is a packing point of the register budget
        (`RegisterBudget.packs`), or NO_PACKING_POINT (none found, no budget, or no tiled
        block with constant extents in the sketch). Decisions
        are drawn (seeds drawn from `seed`) until a draw fills the registers
        (`RegisterBudget.fills`), up to PACKING_DRAWS times; then each tile whose innermost
        level may be its whole loop becomes that where the register tiles stay as they are
        (a reduction loop's, `_whole_reductions`)."""
        if self.budget is None:
            return NO_PACKING_POINT
        rng, trace = random.Random(seed), fresh_decisions(self.sketches[sketch])
        for _ in range(PACKING_DRAWS):
            sch = _applied(self.mod, trace, rng.randrange(1, 2**31 - 1))
            if sch is not None and not self.budget.tiles(sch):
                break  # no tiled block (with constant extents): no draw has one
            if sch is not None and self.budget.fills(sch):
                sch = self._whole_reductions(sch)
                if self.budget.packs(sch):
                    return self.replay(sch.trace, seed)
        return NO_PACKING_POINT

    def _whole_reductions(self, sch):
        """`sch` with every sampled tile whose innermost level may be the whole loop (its
        max_innermost_factor) made that, one at a time, where the block's register tiles
        stay the same (so not a spatial tile of the register tile: a reduction's)."""
        budget = self.budget
        assert budget is not None
        tiles = budget.tiles(sch)
        trace = sch.trace.without_postproc()
        for k in range(len(trace.insts)):
            inst = trace.insts[k]
            if inst.name != "sample_perfect_tile":
                continue
            decision = inst.args["decision"]
            extent = math.prod(decision)
            if decision[-1] == extent or inst.args["max_innermost_factor"] < extent:
                continue
            whole = trace.with_decision(inst, [1] * (len(decision) - 1) + [extent])
            tried = _applied(self.mod, whole, 1)
            if tried is not None and budget.tiles(tried) == tiles:
                sch, trace = tried, whole
        return sch

    def run(self, job) -> tuple:
        kind = job[0]
        if kind == "sample":
            return self._result(self.sample(job[1], job[2]))
        if kind == "pack":
            return self._result(self.packing_point(job[1], job[2]))
        if kind == "replay":
            return self._result(self.replay(Trace.from_json(job[1]), job[2]))
        _, parent, m, seed = job
        trace = self.mutators[m].apply(Trace.from_json(parent), random.Random(seed))
        if trace is None:
            return ("fail", None)
        # every decision given: the program is the trace's, whatever the seed
        text = str(trace)
        if text not in self._mutated:
            self._mutated[text] = self._result(self.replay(trace, seed, self.budget), key=text)
            if len(self._mutated) > _MUTATED_KEPT:
                self._mutated.popitem(last=False)
        return self._mutated[text]

    def _result(self, sch, key: Optional[str] = None) -> tuple:
        if isinstance(sch, str):
            return ("fail", sch)
        features = None
        if self.extractor is not None:
            from tir_mlir.meta_schedule.search_strategy.search_strategy import MeasureCandidate

            features = self.extractor.program_vectors(None, [MeasureCandidate(sch)])[0]
        return ("ok", key or schedule_key(sch), json.dumps(sch.trace.as_json()), features)


_TASKS: "OrderedDict[str, ReplayTask]" = OrderedDict()  # in a worker: token -> task


def run_jobs(token: str, blob: bytes, jobs: list) -> list:
    """Runs in a worker: the results of `jobs` of the pickled task `blob`."""
    task = _TASKS.get(token)
    if task is None:
        task = _TASKS[token] = ReplayTask(*pickle.loads(blob))
        while len(_TASKS) > 4:
            _TASKS.popitem(last=False)
    return [task.run(job) for job in jobs]


class Replayer:
    """Runs jobs for one task in `workers` processes when the task pickles (a custom
    postprocessor or mutator holding a lambda does not), else in this process."""

    def __init__(
        self,
        mod,
        sketches,
        postprocs,
        mutators,
        extractor,
        workers: int,
        budget: Optional[RegisterBudget] = None,
    ):
        self.local = ReplayTask(mod, sketches, postprocs, mutators, extractor, budget)
        self.workers, self.blob = workers, None
        if workers > 1:
            try:
                self.blob = pickle.dumps((mod, sketches, postprocs, mutators, extractor, budget))
                self.token = hashlib.sha1(self.blob).hexdigest()
            except Exception as e:  # noqa: BLE001 - whatever does not pickle
                log.info(
                    "search replays run in the tuning process: the task does not pickle (%s: %s)",
                    type(e).__name__,
                    e,
                )

    def run(self, jobs: list) -> list:
        from tir_mlir.meta_schedule.process_pool import TaskError

        if self.blob is None or len(jobs) < 2:
            return [self.local.run(job) for job in jobs]
        size = max(1, min(_JOBS_PER_CHUNK, -(-len(jobs) // self.workers)))
        chunks = [jobs[i : i + size] for i in range(0, len(jobs), size)]
        pool = _pool(self.workers)
        futures = [
            pool.submit(
                "tir_mlir.meta_schedule.search_strategy.replay_jobs:run_jobs",
                (self.token, self.blob, chunk),
            )
            for chunk in chunks
        ]
        out = []
        for future, chunk in zip(futures, chunks):
            try:
                out += future.result()
            except TaskError as e:  # a crashed worker loses its chunk, nothing more
                log.warning("a search worker failed: %s", e.message)
                out += [("fail", "SearchWorkerCrash")] * len(chunk)
        return out


_POOLS = {}


def _pool(workers: int):
    """One pool of search workers per process (tasks share it; each keeps its task)."""
    if workers not in _POOLS:
        from tir_mlir.meta_schedule.process_pool import ProcessPool

        _POOLS[workers] = ProcessPool(workers, max_tasks=100000)
        atexit.register(_POOLS[workers].shutdown, True)
    return _POOLS[workers]
