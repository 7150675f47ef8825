"""Which ops become a reduction's `T.init()` instead of a block of their own.

An elementwise producer (a `linalg.fill`, a bias `linalg.broadcast`, a parallel generic that
does not read its init) whose only use is the init of a reduction is computed by that
reduction's `T.init()` (a producer that reads no tensor, a fill, by the `T.init()` of each of
the reductions it is the init of: torch-mlir shares one zero fill between all the convolutions
of a shape, which otherwise is a block and a copy per convolution), when the reduction writes every element of it once per output element
(its output indexed by exactly its parallel dimensions, constants only in unit dimensions):
TensorIR's reduction block, which the schedule primitives (vectorize, rfactor, compute_at's
domain) require. On memrefs only a `linalg.fill` whose memref's next user is such a
reduction: another producer's inputs may change before the use.
"""

from mlir import ir

from tir_mlir.frontend.linalg_import.linalg_ops import (
    has_uses,
    indexing_maps,
    iterator_types,
    n_inputs,
)


def find_folds(ops, kinds: dict) -> tuple:
    """(folded, folded_ops): producer result (on memrefs: (consumer, memref)) -> the producer
    op; the set of producer ops, which get no block."""
    folded, folded_ops = {}, set()
    for op in ops:
        if op.name != "linalg.generic":
            continue
        if op.results:
            uses = list(op.results[0].uses)
            if (
                _elementwise_producer(op)
                and (len(uses) == 1 or (uses and not _reads_tensors(op)))
                and all(_init_foldable(u.owner.operation, u.operand_number) for u in uses)
            ):
                folded[op.results[0]] = op
                folded_ops.add(op)
        elif kinds.get(op) == "fill":
            # on memrefs only a fill: another producer's inputs may change before the use
            consumer = _next_user(ops, op, op.operands[1])
            for u in op.operands[1].uses if consumer is not None else ():
                if u.owner.operation == consumer and _init_foldable(consumer, u.operand_number):
                    folded[(consumer, op.operands[1])] = op
                    folded_ops.add(op)
    return folded, folded_ops


def _elementwise_producer(op) -> bool:
    """An all-parallel generic with one result that does not read its init and writes every
    element once (its output indexed by a permutation of its dimensions)."""
    if len(op.results) != 1 or "R" in iterator_types(op):
        return False
    body = op.regions[0].blocks[0]
    if has_uses(body.arguments[len(op.operands) - 1]):
        return False
    out = indexing_maps(op)[-1]
    dims = [e.maybe_downcast() for e in out.results]
    return all(isinstance(e, ir.AffineDimExpr) for e in dims) and sorted(
        e.position for e in dims
    ) == list(range(out.n_dims))


def _reads_tensors(op) -> bool:
    """Whether the body of `op` reads one of its tensor inputs (whose buffer a later op may
    write in place: only the first use could then be recomputed from it)."""
    body = op.regions[0].blocks[0]
    return any(
        isinstance(x.type, ir.ShapedType) and has_uses(body.arguments[j])
        for j, x in enumerate(list(op.operands)[: n_inputs(op)])
    )


def writes_all(op, operand_number: int) -> bool:
    """Whether the op writes every element of output `operand_number`: its indexing map is
    distinct dimensions (whose extents are the output's sizes), or 0 in a unit dimension."""
    m = indexing_maps(op)[operand_number]
    shape = ir.ShapedType(op.operands[operand_number].type).shape
    dims = []
    for e, size in zip(m.results, shape):
        e = e.maybe_downcast()
        if isinstance(e, ir.AffineDimExpr):
            dims.append(e.position)
        elif not (isinstance(e, ir.AffineConstantExpr) and size == 1):
            return False
    return len(set(dims)) == len(dims)


def _next_user(ops, op, v):
    """The first op after `op` in `ops` that uses `v`."""
    users = {u.owner.operation for u in v.uses}
    after = False
    for o in ops:
        if o == op:
            after = True
        elif after and o in users:
            return o
    return None


def _init_foldable(op, operand_number: int) -> bool:
    """Whether operand `operand_number` of `op` is an init a T.init can write: `op` is a
    reduction that reads it, indexed by exactly the parallel dimensions (and constants in
    unit dimensions), so the T.init runs once for each of its elements."""
    if op.name != "linalg.generic":
        return False
    if operand_number < n_inputs(op):
        return False
    iters = iterator_types(op)
    if "R" not in iters:
        return False
    if not has_uses(op.regions[0].blocks[0].arguments[operand_number]):
        return False
    if not writes_all(op, operand_number):
        return False  # the elements it never writes keep the init's values
    dims = [
        e.maybe_downcast().position
        for e in indexing_maps(op)[operand_number].results
        if isinstance(e.maybe_downcast(), ir.AffineDimExpr)
    ]
    return sorted(dims) == [d for d, t in enumerate(iters) if t == "S"]
