"""Stage `speculate-loads` (CPU, scf level): a guarded load of a scalar (`T.if_then_else(c,
A[i], pad)`, a padded window's read) inside a loop that carries values becomes an unconditional
load at indices clamped into the buffer and a select:

    %v = scf.if %c -> (f32) {              %i' = arith.minsi(arith.maxsi(%i, 0), n - 1)
      %a = memref.load %A[%i]        =>    %a = memref.load %A[%i']
      scf.yield %a                         %v = arith.select %c, %a, %pad
    } else { scf.yield %pad }

Why: the branch of each such load splits the loop body into one block per load. The carried
accumulators' updates each depend only on the previous one, and LLVM's machine sinking moves
every update into the last block, where its chain ends: all the loads of the body then run
first and their values wait in registers (a 12-channel x 2-row x 4-output conv tile over a
padded input loaded 24 values per step, spilled them, and ran all 96 FMAs at the end at half
TVM's speed, whose body stores each update and keeps them in place). Without the branches the
body is one block that LLVM schedules as a whole.

Only a body with at least as many guarded loads as the FMA units keep chains in flight
(cpu_model's `fma_chains` of a scalar) is rewritten: there, holding every update to the body's
end leaves the FMA units idle for a whole pipeline's worth of work per step. A body of one or
two guarded loads (a 4-column tile over a window: two reads per step) loses little to the
branches, which predict well away from the border, and pays the clamps on every step (measured
up to 1.2x slower when rewritten).

An index is clamped only where its range, from the constant bounds of the loops it is built of,
is not inside its dimension (the padded row `h + kh - 1` from -1; the channel of a window is not
clamped). The load then reads some element of the buffer whatever `c` is, and the select keeps
the pad where `c` is false, as before.
"""

from mlir import ir
from mlir.dialects import arith

from tir_mlir.passes.lowering.common import functions, walk
from tir_mlir.passes.lowering.cpu_model import DEFAULT_FMA_CHAINS, cpu_model

# Ops that may compute the load's indices inside the guarded block.
_INDEX_OPS = {"arith.addi", "arith.subi", "arith.muli", "arith.constant", "arith.index_cast"}


class SpeculateLoads:
    name = "speculate-loads"

    def __init__(self, chains: int = DEFAULT_FMA_CHAINS):
        self.chains = chains

    @classmethod
    def for_target(cls, target):
        return cls(cpu_model(target).fma_chains(32))

    def __call__(self, module: ir.Module):
        for f in functions(module):
            bodies = {}
            for op in [o for o in walk(f) if _guarded_load(o) is not None]:
                bodies.setdefault(op.operation.block, []).append(op)
            for ifs in bodies.values():
                if len(ifs) >= self.chains:
                    for op in ifs:
                        _speculate(op, _guarded_load(op))


def _guarded_load(op):
    """The `memref.load` of an `scf.if` that yields it or a value from outside, directly in
    the body of a loop with iter_args; None for any other op."""
    if op.name != "scf.if" or len(op.results) != 1 or len(op.regions[1].blocks) == 0:
        return None
    if op.parent.name != "scf.for" or not len(op.parent.results):
        return None
    then_ops = list(op.regions[0].blocks[0].operations)
    else_ops = list(op.regions[1].blocks[0].operations)
    pad = else_ops[-1].operands[0]
    if any(o.name != "arith.constant" for o in else_ops[:-1]):
        return None
    if not _defined_outside(pad, op) and pad.owner.name != "arith.constant":
        return None
    loads = [o for o in then_ops if o.name == "memref.load"]
    if len(loads) != 1 or any(o.name not in _INDEX_OPS for o in then_ops[:-1] if o != loads[0]):
        return None
    load = loads[0]
    yielded = then_ops[-1].operands[0]
    if isinstance(yielded.owner, ir.Block) or yielded.owner.operation != load.operation:
        return None
    mtype = ir.MemRefType(load.operands[0].type)
    if not mtype.has_static_shape or any(d == 0 for d in mtype.shape):
        return None
    return load


def _defined_outside(value, op) -> bool:
    owner = value.owner
    p = owner.owner if isinstance(owner, ir.Block) else owner.operation
    while p is not None and p.name != "func.func":
        if p == op:
            return False
        p = p.parent
    return True


def _speculate(if_op, load):
    """Move the then-block's ops before `if_op`, clamp the load's indices, select."""
    mtype = ir.MemRefType(load.operands[0].type)
    else_ops = list(if_op.regions[1].blocks[0].operations)
    pad = else_ops[-1].operands[0]
    for o in [*list(if_op.regions[0].blocks[0].operations)[:-1], *else_ops[:-1]]:
        o.move_before(if_op)
    with ir.InsertionPoint(load), load.location:
        for k, (index, size) in enumerate(zip(list(load.operands)[1:], mtype.shape)):
            lo, hi = _range(index)
            clamped = index
            if lo is None or lo < 0:
                clamped = arith.maxsi(clamped, arith.constant(ir.IndexType.get(), 0))
            if hi is None or hi > size - 1:
                clamped = arith.minsi(clamped, arith.constant(ir.IndexType.get(), size - 1))
            load.operands[1 + k] = clamped
    with ir.InsertionPoint(if_op), if_op.location:
        picked = arith.select(if_op.operands[0], load.results[0], pad)
    if_op.results[0].replace_all_uses_with(picked)
    if_op.erase()


def _range(value):
    """(lo, hi) of an index built of constants and constant-bound `scf.for`/`scf.parallel`
    IVs by additions, subtractions and products; (None, None) when not known."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        loop = owner.owner
        if loop.name not in ("scf.for", "scf.parallel") or value.arg_number >= _n_ivs(loop):
            return None, None
        n = _n_ivs(loop)
        k = value.arg_number
        lb, ub, step = (_constant(loop.operands[k + i * n]) for i in range(3))
        if lb is None or ub is None or step is None or ub <= lb:
            return None, None
        return lb, lb + (ub - 1 - lb) // step * step
    name = owner.name
    if name == "arith.constant":
        c = _constant(value)
        return c, c
    if name not in ("arith.addi", "arith.subi", "arith.muli"):
        return None, None
    (a, b), (c, d) = _range(owner.operands[0]), _range(owner.operands[1])
    if None in (a, b, c, d):
        return None, None
    if name == "arith.addi":
        return a + c, b + d
    if name == "arith.subi":
        return a - d, b - c
    products = [a * c, a * d, b * c, b * d]
    return min(products), max(products)


def _n_ivs(loop) -> int:
    return 1 if loop.name == "scf.for" else len(loop.regions[0].blocks[0].arguments)


def _constant(value):
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None
