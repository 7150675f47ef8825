"""Parallel loops too small to pay for a fork/join run serially: an outermost `scf.parallel`
whose iterations do fewer than MIN_PARALLEL_WORK ops in all (loop trip counts times the ops of
their bodies, statically) becomes nested `scf.for`s. Waking a team of OpenMP threads costs
microseconds, more than a small kernel's whole run."""
from mlir import ir
from mlir.dialects import scf

from tir_mlir.passes.lowering.common import ancestors, move_body, walk

MIN_PARALLEL_WORK = 1 << 15


def serialize_small_parallel_loops(module: ir.Module):
    for op in [o for o in walk(module.operation) if o.name == "scf.parallel"]:
        if any(p.name == "scf.parallel" for p in ancestors(op)):
            continue
        if not len(op.results) and _work(op) < MIN_PARALLEL_WORK:
            _to_for(op)


def _constant(value):
    owner = value.owner
    if isinstance(owner, ir.OpView) and owner.operation.name == "arith.constant":
        return ir.IntegerAttr(owner.operation.attributes["value"]).value
    return None


def _trips(op):
    """Trip count of each dimension of an scf.for/scf.parallel (None: not a constant)."""
    n = (len(op.operands) - len(op.results)) // 3 if op.name == "scf.parallel" else 1
    ops = list(op.operands)
    bounds = [(_constant(ops[d]), _constant(ops[n + d]), _constant(ops[2 * n + d]))
              for d in range(n)]
    return [None if None in b else max(0, -(-(b[1] - b[0]) // b[2])) for b in bounds]


def _work(op) -> float:
    """Ops executed by `op` (inf when a loop bound is not a constant)."""
    per_region = [sum(_work(o.operation) for b in r.blocks for o in b.operations)
                  for r in op.regions]
    inner = max(per_region, default=0) if op.name == "scf.if" else sum(per_region)
    if op.name in ("scf.for", "scf.parallel"):
        for t in _trips(op):
            inner *= float("inf") if t is None else t
    return inner + 1


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
