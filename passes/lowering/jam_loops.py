"""Stage `jam-carried-loops` (CPU, scf level): sibling loops that carry values and write no
memory run as one loop (loop fusion of the copies `scalar-replace` leaves).

    %r0 = scf.for %k iter_args(%c = %a0) {        %r0, %r1 = scf.for %k iter_args(%c = %a0,
      FMA(A[0, k], B[k], %c) }                 =>                                %d = %a1) {
    %r1 = scf.for %k iter_args(%d = %a1) {           FMA(A[0, k], B[k], %c)
      FMA(A[1, k], B[k], %d) }                       FMA(A[1, k], B[k], %d) }

`scalar-replace` unrolls the tiles around a reduction loop that already carries an accumulator
into one copy of that loop per tile element, one after the other: each copy is a chain of
dependent FMAs, bound by the FMA latency, while the core runs several chains side by side in
the same time (a tuner's 4x4 tile of 4-lane accumulators over 64 k:
benchmarks/README.md, "session 9, stage figures"). Jammed, the chains interleave.

A run of `scf.for` siblings is jammed when every loop has results, the same constant bounds and
step, and nothing that writes memory inside (so no iteration of one can see another's effects),
and neither the ops between them (which touch no memory) nor the loops, inside or out, use an
earlier loop's results: the jammed loop takes the last one's place.
"""

from mlir import ir
from mlir.dialects import scf

from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.common import functions, move_body, scf_bounds

# Ops with no memory effect that may sit between jammed loops.
PURE_PREFIXES = ("arith.", "math.", "index.")
PURE_OPS = {
    "vector.broadcast",
    "vector.splat",
    "vector.extract",
    "vector.insert",
    "vector.shuffle",
    "vector.bitcast",
    "vector.shape_cast",
    "vector.fma",
    "vector.from_elements",
    "vector.step",
    "vector.reduction",
    "ub.poison",
}
# Ops that only read memory (or compute) inside a jammed loop.
READS = {
    "memref.load",
    "vector.load",
    "vector.maskedload",
    "vector.transfer_read",
    "vector.gather",
    "scf.for",
    "scf.if",
    "scf.yield",
    "memref.dim",
}


class JamCarriedLoops:
    name = "jam-carried-loops"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            # Inner blocks first: a jam erases the loops it fuses, with their bodies (blocks
            # listed here), so each body must be done before the block that holds its loop.
            blocks = [b for o in _post_order(f) for r in o.regions for b in r.blocks]
            for block in blocks:
                for run in _runs(block):
                    _jam(run)


def _post_order(f) -> list:
    """The ops of `f` and `f` itself, each after the ops nested in it."""
    out = []

    def visit(o):
        out.append(o)
        return ir.WalkResult.ADVANCE

    f.walk(visit, ir.WalkOrder.POST_ORDER)
    return out


def _pure(op) -> bool:
    return not len(op.regions) and (op.name.startswith(PURE_PREFIXES) or op.name in PURE_OPS)


def _reads_only(loop) -> bool:
    return all(o.name in READS or _pure(o) for o in walk_all(loop))


def _runs(block):
    """Lists of at least two jammable sibling loops of `block`."""
    runs, run, between = [], [], []
    for op in block.operations:
        op = op.operation
        if (
            op.name == "scf.for"
            and len(op.results)
            and scf_bounds(op) is not None
            and _reads_only(op)
        ):
            earlier = {r for l in run for r in l.results}
            if (
                run
                and scf_bounds(op) == scf_bounds(run[0])
                and not any(v in earlier for o in between + [op] + walk_all(op) for v in o.operands)
            ):
                run.append(op)
                between = []
                continue
            if len(run) > 1:
                runs.append(run)
            run, between = [op], []
        elif run and _pure(op):
            between.append(op)
        else:
            if len(run) > 1:
                runs.append(run)
            run, between = [], []
    if len(run) > 1:
        runs.append(run)
    return runs


def _jam(run):
    last = run[-1]
    lo, hi, step = list(run[0].operands)[:3]
    inits = [v for loop in run for v in list(loop.operands)[3:]]
    with ir.InsertionPoint(last), last.location:
        fused = scf.ForOp(lo, hi, step, inits)
    for a in run[0].attributes:
        if a.name != "operandSegmentSizes":
            fused.operation.attributes[a.name] = a.attr
    iv, args = fused.induction_variable, list(fused.inner_iter_args)
    with ir.InsertionPoint(fused.body), last.location:
        end = scf.YieldOp([])  # a place to move the bodies before; replaced below
    yielded, k = [], 0
    for loop in run:
        body = loop.regions[0].blocks[0]
        n = len(loop.results)
        body.arguments[0].replace_all_uses_with(iv)
        for old, new in zip(list(body.arguments)[1:], args[k : k + n]):
            old.replace_all_uses_with(new)
        yielded += list(list(body.operations)[-1].operation.operands)
        move_body(body, end.operation)
        k += n
    with ir.InsertionPoint(end.operation), last.location:
        scf.YieldOp(yielded)
    end.operation.erase()
    k = 0
    for loop in run:
        for i, r in enumerate(loop.results):
            r.replace_all_uses_with(fused.results[k + i])
        k += len(loop.results)
        loop.erase()
