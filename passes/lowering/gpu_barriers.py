"""Stage `gpu-insert-barriers` (affine level, after `gpu-map-threads`; TVM's ThreadSync): a
`gpu.barrier` wherever one thread may touch memory another thread of the block wrote, or
overwrite what another still reads, since the last barrier:

    A_sh[ty, tx] = A[..]               A_sh[ty, tx] = A[..]
    for k: .. A_sh[ty, k] ..     =>    gpu.barrier
                                       for k: .. A_sh[ty, k] ..

Walking each kernel in program order with the accesses seen since the last barrier, a conflict
(same buffer, one of them a write, shared or global memory) puts a barrier before the op that
meets it; in a loop, accesses at the end of the body that conflict with those at its start
(the next iteration) put one at the end of the body. Two accesses at the same index expression
that reads every thread id of the block are the same thread's and never conflict. Barriers go
only where every thread arrives: an `if` (a thread guard, a block predicate) is one unit whose
accesses count as a whole; a conflict inside one thread's guarded code needs none.
"""

from mlir import ir
from mlir.dialects import gpu

from tir_mlir.ir.affine_exprs import dims_of
from tir_mlir.passes.lowering.common import ancestors, functions, walk
from tir_mlir.passes.lowering.gpu_scopes import address_space
from tir_mlir.passes.lowering.gpu_wmma import wmma_op

LOOPS = ("affine.for", "scf.for")
IFS = ("affine.if", "scf.if")


class GpuInsertBarriers:
    name = "gpu-insert-barriers"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for launch in [o for o in walk(f) if o.name == "gpu.launch"]:
                body = launch.regions[0].blocks[0]
                sizes = _block_sizes(launch)
                ids = [a for a, n in zip(list(body.arguments)[3:6], sizes) if n > 1]
                # a tensor-core op is one warp's (the 32 threads along x when there are 32)
                warp_ids = ids[1:] if sizes[0] == 32 else None
                _Sync(ids, warp_ids).sequence(body, [])


def _block_sizes(launch):
    view = launch.opview
    return [
        ir.IntegerAttr(v.owner.attributes["value"]).value
        for v in (view.blockSizeX, view.blockSizeY, view.blockSizeZ)
    ]


class _Access:
    def __init__(self, op, ids):
        is_store = op.name == "memref.store"
        self.buf = op.operands[1 if is_store else 0]
        self.write = is_store
        idx = list(op.operands)[2 if is_store else 1 :]
        seen = set()
        self.key = tuple(_key(v, seen) for v in idx)
        self.own = all(any(t == i for t in seen) for i in ids)  # indexes by every thread id

    def conflicts(self, other) -> bool:
        if self.buf != other.buf or not (self.write or other.write):
            return False
        return not (self.own and other.own and self.key == other.key)


def _key(value, seen):
    """A structural key of an index value: equal keys, equal values in the same thread."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        seen.add(value)
        return value
    op = owner.operation
    if op.name == "arith.constant":
        return ("c", str(op.attributes["value"]))
    if op.name == "affine.apply":
        m = ir.AffineMapAttr(op.attributes["map"]).value
        return _expr_key(
            m.results[0],
            [
                _key(v, seen) if k in dims_of(m.results[0]) else None
                for k, v in enumerate(op.operands)
            ],
        )
    if op.name.startswith("arith."):
        attrs = tuple(sorted((n, str(op.attributes[n])) for n in op.attributes))
        return (op.name, attrs, tuple(_key(v, seen) for v in op.operands))
    return value


def _expr_key(expr, operands):
    """An affine expression with its dims replaced by their operands' keys."""
    e = expr.maybe_downcast()
    if isinstance(e, ir.AffineDimExpr):
        return operands[e.position]
    if isinstance(e, ir.AffineConstantExpr):
        return ("c", e.value)
    if isinstance(e, ir.AffineBinaryExpr):
        return (type(e).__name__, _expr_key(e.lhs, operands), _expr_key(e.rhs, operands))
    return ("?", str(e))


class _Sync:
    def __init__(self, ids, warp_ids=None):
        self.ids, self.warp_ids = ids, warp_ids

    def accesses(self, op):
        """The shared/global accesses of `op` and everything in it."""
        out = []
        for o in [op, *walk(op)]:
            if o.name in ("memref.load", "memref.store"):
                warp_op = self.warp_ids is not None and any(wmma_op(p) for p in ancestors(o))
                a = _Access(o, self.warp_ids if warp_op else self.ids)
                if address_space(a.buf.type) in ("workgroup", ""):
                    out.append(a)
        return out

    def sequence(self, block, pending):
        """Place barriers in `block` given the accesses since the last barrier; returns those
        after its last op."""
        for op in [o.operation for o in block.operations]:
            if op.name == "gpu.barrier":
                pending = []
            elif op.name in LOOPS and not wmma_op(op):  # a tensor-core tile: one warp op
                pending = self._loop(op, pending)
            else:
                mine = self.accesses(op)
                if _conflict(pending, mine):
                    _barrier_before(op)
                    pending = []
                pending = pending + mine
        return pending

    def _loop(self, op, pending):
        body = op.regions[0].blocks[0]
        head = self._head(body)
        if _conflict(pending, head):
            _barrier_before(op)
            pending = []
        out = self.sequence(body, pending)
        if _conflict(out, head):  # the next iteration's first accesses
            _barrier_before(list(body.operations)[-1].operation)
            out = []
        return out

    def _head(self, block):
        """The accesses of `block` before its first barrier."""
        head = []
        for op in [o.operation for o in block.operations]:
            if op.name == "gpu.barrier" or any(o.name == "gpu.barrier" for o in walk(op)):
                if op.name in LOOPS and not wmma_op(op):
                    head += self._head(op.regions[0].blocks[0])
                return head
            head += self.accesses(op)
        return head


def _conflict(before, after) -> bool:
    return any(a.conflicts(b) for a in before for b in after)


def _barrier_before(op):
    with ir.InsertionPoint(op):
        gpu.BarrierOp(loc=op.location)
