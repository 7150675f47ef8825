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
and neither the ops between them nor the loops, inside or out, use an earlier loop's results:
the jammed loop takes the last one's place, and a run is cut where its carried values would
no longer fit in the target's vector registers (less scalar-replace's FREE_REGISTERS): 64
unrolled rows of 16-lane accumulators jammed as one spilled at every step (2.4-3x slower than
cut into runs of 30, 30 and 4). The ops between touch no memory, or, between
innermost loops, are stores to a buffer told apart from all others (an allocation or a
`noalias` argument) that no later loop of the run reads: those move after the jammed loop, in
their order. A load between that
reads back what the store just before it wrote is that store's value. So the copies of an
unrolled column loop around a dot product (k innermost, no decompose_reduction: each copy
stores 0, reads it back as its init, and stores its result after it) jam too:

    C[j] = 0                                     C[j] = 0
    %r0 = scf.for %k iter_args(C[j]) {..}        %r:2 = scf.for %k iter_args(C[j], 0) {..}
    C[j] = %r0                            =>     C[j] = %r#0
    C[j+1] = 0                                   C[j+1] = 0
    %r1 = scf.for %k iter_args(C[j+1]) {..}      C[j+1] = %r#1
    C[j+1] = %r1
"""

from typing import Optional

from mlir import ir
from mlir.dialects import scf

from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.buffer_roots import noalias_args, root
from tir_mlir.passes.lowering.common import functions, move_body, scalar_bits, scf_bounds
from tir_mlir.passes.lowering.memory_ops import LOADS, STORES, no_effects
from tir_mlir.passes.lowering.scalar_replace import ScalarReplace, same_index

# Ops with no memory effect of their own that may sit inside a jammed loop.
CONTROL = {"scf.for", "scf.if", "scf.yield", "memref.dim"}


class JamCarriedLoops:
    name = "jam-carried-loops"

    def __init__(self, registers: Optional[ScalarReplace] = None):
        self.registers = registers or ScalarReplace()  # its register file and budget

    @classmethod
    def for_target(cls, target):
        return cls(ScalarReplace.for_target(target))

    def __call__(self, module: ir.Module):
        for f in functions(module):
            # Inner blocks first: a jam erases the loops it fuses, with their bodies (blocks
            # listed here), so each body must be done before the block that holds its loop.
            blocks = [b for o in _post_order(f) for r in o.regions for b in r.blocks]
            noalias = noalias_args(f)
            for block in blocks:
                self._jam_block(block, noalias)

    def _jam_block(self, block, noalias):
        """Jams the runs of `block`, then the runs of each jammed loop's body: the copies of
        an outer loop, jammed, hold their inner loops one after the other, siblings that jam
        in turn, so the chains of the innermost loops interleave."""
        for run, stores, forwards in _runs(block, noalias, self.registers):
            fused = _jam(run, stores, forwards)
            if not _innermost(fused) and _float_chains(fused):
                self._jam_block(fused.regions[0].blocks[0], noalias)


def _post_order(f) -> list:
    """The ops of `f` and `f` itself, each after the ops nested in it."""
    out = []

    def visit(o):
        out.append(o)
        return ir.WalkResult.ADVANCE

    f.walk(visit, ir.WalkOrder.POST_ORDER)
    return out


def _reads_only(loop) -> bool:
    return all(o.name in LOADS or o.name in CONTROL or no_effects(o) for o in walk_all(loop))


def _runs(block, noalias, registers: ScalarReplace):
    """The plan: lists of at least two jammable sibling loops of `block` whose carried values
    fit in `registers`, each with the stores found between its loops (moved after the jammed
    loop) and the loads between them that read back what such a store wrote ((loaded value,
    stored value): the load is replaced)."""
    runs, run, between, stores, forwards, pending = [], [], [], [], [], {}

    def close():
        if len(run) > 1:
            runs.append((run, stores, forwards))

    def value(v):
        return pending.get(v, v)

    for op in list(block.operations):
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
                and not any(
                    value(v) in earlier
                    for o in _kept(between) + [op] + walk_all(op)
                    for v in o.operands
                )
                and not _reads_stored(op, stores + _pending(between), noalias)
                and (
                    _innermost(op)
                    or (_float_chains(op) and _nests_alike(run + [op]))
                    or not stores + _pending(between)
                )
                and _fit(run + [op], registers)
            ):
                run.append(op)
                stores += _pending(between)
                forwards += list(pending.items())
                between, pending = [], {}
                continue
            close()
            run, between, stores, forwards, pending = [op], [], [], [], {}
        elif run and (no_effects(op) or (_sinkable_store(op, noalias) and _jams_down(run[-1]))):
            between.append(op)
        elif run and (stored := _stored(op, between)) is not None:
            pending[op.results[0]] = stored
        else:
            close()
            run, between, stores, forwards, pending = [], [], [], [], {}
    close()
    return runs


def _fit(loops, registers: ScalarReplace) -> bool:
    """Whether the values `loops` carry fit in the registers a loop's carried values may take.
    Integer and float scalars count by their bits: LLVM's SLP vectorizer packs the jammed
    copies' scalar chains into vectors (64 float column sums of a dot product ran in 4 zmm
    registers; cut into runs of 30 they ran 1.6-2x slower)."""
    types = [r.type for loop in loops for r in loop.results]
    packed = [t for t in types if isinstance(t, (ir.IntegerType, ir.FloatType))]
    others = [t for t in types if not isinstance(t, (ir.IntegerType, ir.FloatType))]
    bits = sum(scalar_bits(t) for t in packed)
    regs = registers.register_count(others) + -(-bits // registers.register_bits)
    return regs <= registers.budget


def _innermost(loop) -> bool:
    """Whether `loop` holds no loop: only innermost loops jam across stores. Copies of an
    outer loop (a `k0` around each column's `k1`) jammed so keep their inner loops apart,
    one after the other in the jammed body, where LLVM vectorized each alone
    (2004163578/0182 matmul256_int8: 4.6x slower)."""
    return not any(o.name == "scf.for" for o in walk_all(loop) if o != loop)


def _nest(loop) -> Optional[list]:
    """The constant bounds of `loop` and of the loops nested alone in it, down to an innermost
    loop; None where a bound is not constant, or a body above the innermost holds more than one
    loop or an op with memory effects."""
    bounds = []
    while True:
        bounds.append(scf_bounds(loop))
        if bounds[-1] is None:
            return None
        body = [o.operation for o in loop.regions[0].blocks[0].operations]
        inner = [o for o in body if o.name == "scf.for"]
        if not inner:
            return bounds
        others = [o for o in body if o.name not in ("scf.for", "scf.yield")]
        if len(inner) > 1 or not all(no_effects(o) for o in others):
            return None
        loop = inner[0]


def _float_chains(loop) -> bool:
    """Whether every value `loop` carries is a float or a vector of floats: a chain LLVM's
    loop vectorizer does not reorder (no `reassoc`), so each copy alone runs at the latency of
    its adds. An integer reduction LLVM vectorizes along its own loop (2004163578/0182
    matmul256_int8's k_1: its 8 column loops jammed ran 1.6x slower)."""
    types = [r.type for r in loop.results]
    return all(
        isinstance(t.element_type if isinstance(t, ir.VectorType) else t, ir.FloatType)
        for t in types
    )


def _jams_down(loop) -> bool:
    """Whether `loop` is an innermost loop or a nest of single loops carrying floats: such
    copies jam across the stores between them, level by level down to the innermost loops."""
    return _innermost(loop) or (_float_chains(loop) and _nest(loop) is not None)


def _nests_alike(loops) -> bool:
    """Whether `loops` are nests of single loops with the same bounds at every depth: jammed,
    their inner loops are jammable siblings all the way down."""
    nests = [_nest(loop) for loop in loops]
    return nests[0] is not None and all(n == nests[0] for n in nests)


def _pending(between) -> list:
    return [o for o in between if o.name in STORES]


def _kept(between) -> list:
    return [o for o in between if o.name not in STORES]


def _sinkable_store(op, noalias) -> bool:
    """Whether `op` is a store between sibling loops that may move after them: it writes a
    buffer told apart from every other (an allocation or a `noalias` argument)."""
    if op.name not in STORES:
        return False
    (buffer, shared), _ = root(op.operands[STORES[op.name]], noalias)
    return buffer is not None and not shared


def _reads_stored(loop, stores, noalias) -> bool:
    """Whether `loop` reads a buffer one of `stores` writes (then they stay before it)."""
    if not stores:
        return False
    written = [root(s.operands[STORES[s.name]], noalias)[0][0] for s in stores]
    for o in walk_all(loop):
        if o.name in LOADS:
            (buffer, shared), _ = root(o.operands[LOADS[o.name]], noalias)
            if buffer is None or shared or buffer in written:
                return True
    return False


def _stored(op, between):
    """The value a store among `between` has just written, when `op` loads it back (same
    buffer, same index values, only ops without effects after the store): the init of the next
    loop's accumulator, written and read back between two jammable loops. None otherwise."""
    if op.name != "memref.load":
        return None
    for prior in reversed(between):
        if prior.name == "memref.store":
            value, buffer, *index = list(prior.operands)
            same = buffer == op.operands[0] and same_index(index, list(op.operands)[1:])
            return value if same else None
        if not no_effects(prior):
            return None
    return None


def _jam(run, stores=(), forwards=()):
    for loaded, value in forwards:
        loaded.replace_all_uses_with(value)
        loaded.owner.erase()
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
    after = fused.operation
    for store in stores:
        store.move_after(after)
        after = store
    return fused.operation
