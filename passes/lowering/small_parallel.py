"""Parallel loops too small to pay for a fork/join run serially: an outermost `scf.parallel`
whose iterations do fewer than MIN_PARALLEL_WORK ops in all (loop trip counts times the ops of
their bodies, statically) becomes nested `scf.for`s. Waking a team of OpenMP threads costs
microseconds, more than a small kernel's whole run."""

from mlir import ir
from mlir.dialects import scf

from tir_mlir.passes.lowering.common import move_body, scf_dims, trip_count

MIN_PARALLEL_WORK = 1 << 15


def serialize_small_parallel_loops(module: ir.Module):
    for op in list(_outermost_parallel_loops(module.operation)):
        if not len(op.results) and _work(op, MIN_PARALLEL_WORK) < MIN_PARALLEL_WORK:
            _to_for(op)


def _outermost_parallel_loops(op):
    for region in op.regions:
        for block in region.blocks:
            for o in block.operations:
                o = o.operation
                if o.name == "scf.parallel":
                    yield o
                elif len(o.regions):
                    yield from _outermost_parallel_loops(o)


def _work(op, limit) -> float:
    """Ops executed by `op` (inf when a loop bound is not a constant), counted only up to about
    `limit`: the walk stops once the count is known to exceed it."""
    trips = 1
    if op.name in ("scf.for", "scf.parallel"):
        for t in (trip_count(op, d) for d in range(scf_dims(op))):
            trips *= float("inf") if t is None else t
    if trips == 0:
        return 1
    inner_limit = limit / trips
    per_region = []
    for region in op.regions:
        total = 0
        for block in region.blocks:
            for o in block.operations:
                total += _work(o.operation, inner_limit - total)
                if total >= inner_limit:
                    return limit + 1
        per_region.append(total)
    inner = max(per_region, default=0) if op.name == "scf.if" else sum(per_region)
    return inner * trips + 1


def _to_for(op):
    """Replace a result-less scf.parallel by one scf.for per dimension, outermost first."""
    block = op.regions[0].blocks[0]
    n = len(block.arguments)
    ops = list(op.operands)
    before, ivs = op, []
    for d in range(n):
        with ir.InsertionPoint(before), op.location:
            loop = scf.ForOp(ops[d], ops[n + d], ops[2 * n + d])
            with ir.InsertionPoint(loop.body):
                before = scf.YieldOp([])
        ivs.append(loop.induction_variable)
    for arg, iv in zip(block.arguments, ivs):
        arg.replace_all_uses_with(iv)
    move_body(block, before)
    op.erase()
