"""MutateParallel: change the max parallel extent of a `meta_schedule.parallel` annotation
to one that gives another parallel plan (TVM's mutator of the same name and algorithm).

The trace is replayed on the task's module; for each child block of the annotated block
(the root, where ParallelizeVectorizeUnroll puts the annotation; a block annotated itself
counts as its own only child) the products of its outer spatial loop extents are the
limits at which the number of loops RewriteParallelVectorizeUnroll fuses changes. A plan is
that number for every block; the mutator picks a limit whose plan differs from the current
one. Without the task's module (a mutator used alone) it returns None.
"""

import bisect
from typing import Dict, List, Optional, Tuple

from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.mutator.mutator import Mutator, as_rng, insts_named
from tir_mlir.schedule.schedule import Schedule
from tir_mlir.schedule.trace import Instruction, Trace
from tir_mlir.schedule.views import RootBlockView


class MutateParallel(Mutator):
    def __init__(self, max_jobs_per_core: int = 16):
        self.max_jobs_per_core = max_jobs_per_core
        self.mod = None

    def initialize_with_tune_context(self, context) -> None:
        super().initialize_with_tune_context(context)
        self.mod = context.mod

    def apply(self, trace, rand_state=-1):
        rng = as_rng(rand_state)
        cands = [
            i
            for i in insts_named(trace, "annotate")
            if i.args["ann_key"] == "meta_schedule.parallel"
        ]
        if not cands or self.mod is None:
            return None
        inst = rng.choice(cands)
        current = inst.args["ann_val"]
        if not isinstance(current, int):
            return None
        cores = self.target.num_cores if self.target is not None else 1
        limit = cores * self.max_jobs_per_core
        insts = list(trace.without_postproc().insts)
        sch = Schedule(self.mod)
        try:
            Trace(list(insts)).apply_to_schedule(sch, trusted=True)
            prods = _loop_extent_prods(sch, _annotated_block(sch, insts, inst), limit)
        except ScheduleError:
            return None
        plans: Dict[Tuple[int, ...], int] = {}
        for p in prods:
            for lim in p:
                plan = _num_fused_loops(prods, lim)
                if lim <= limit and plan not in plans:
                    plans[plan] = lim
        plans.pop(_num_fused_loops(prods, current), None)
        if not plans:
            return None
        new = plans[sorted(plans)[rng.randrange(len(plans))]]
        k = next(n for n, x in enumerate(insts) if x is inst)
        insts[k] = Instruction(inst.name, {**inst.args, "ann_val": new}, inst.outputs)
        return Trace(insts)


def _annotated_block(sch, insts: List[Instruction], inst: Instruction):
    """The block the annotation names, found through the get_block that made its handle."""
    name = inst.args["block_or_loop"].name
    for i in insts:
        if i.name == "get_block" and any(o.name == name for o in i.output_list()):
            return sch.get_block(i.args["name"], i.args["func_name"])
    raise ScheduleError("the annotated block is not one get_block found")


def _loop_extent_prods(sch, scope, limit: int) -> List[List[int]]:
    """Per child block of `scope`: the running products of its loops' extents from the
    outermost, up to the first that reaches `limit`, and above the first loop that is not
    spatial or has no constant extent (TVM's AnalyzeParallel)."""
    view = sch.get(scope)
    children = sch.get_child_blocks(scope) if isinstance(view, RootBlockView) else [scope]
    results = []
    for block in children:
        extents: List[int] = []
        for lp in sch.get_loops(block):
            extent = _extent(sch, lp)
            if extent is None:
                break
            extents.append(extent)
        if not extents:
            continue
        prods, prod = [], 1
        for e in extents:
            prod *= e
            prods.append(prod)
            if prod >= limit:
                break
        results.append(prods)
    return results


def _extent(sch, loop) -> Optional[int]:
    if sch.get_loop_iter_type(loop) != "S":
        return None
    try:
        extent = sch.get(loop).extent
    except ScheduleError:
        return None
    return int(extent) if isinstance(extent, int) else None


def _num_fused_loops(prods: List[List[int]], limit: int) -> Tuple[int, ...]:
    """For each block, how many outer loops a parallel limit fuses (TVM's GetNumFusedLoops)."""
    plan = []
    for p in prods:
        i = bisect.bisect_right(p, limit)
        if i > 0 and p[i - 1] == limit:
            i -= 1
        if i != len(p):
            i += 1
        plan.append(i)
    return tuple(plan)
