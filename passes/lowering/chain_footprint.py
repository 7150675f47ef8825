"""Whether the loads that feed one accumulator chain stay in a cache level (its sets and ways).

`affine-to-scf` keeps an accumulator's add apart from its multiply (mul + add, not an FMA)
where the loop waits on the chain: an add's latency is shorter than an FMA's on most cores.
That only holds while the added terms come from the caches near the core: L1, or L2, whose hits
the core overlaps with the chain. A chain whose loads miss L2 (a long column of B, rows a page
apart, in a few L2 sets) waits on memory instead, and the FMA's fewer micro-ops let more of
those loads overlap.

The chain runs over the loops around the update that its address does not depend on (the
reduction loops, however a schedule split and reordered them). The lines its loads touch over
one run of those loops are what the next accumulator reuses; they stay in a cache when none of
its sets has to hold more of them than it has ways. Each buffer is taken to start on a cache line and
at set 0: a buffer's own stride, not its base, decides how its rows share sets.
"""

import math
from typing import Optional

from mlir import ir

from tir_mlir.analysis.linear import Linear, linear, value_linear
from tir_mlir.dialect.ops import Loop
from tir_mlir.ir.affine_exprs import dims_of
from tir_mlir.ir.ir_walk import ancestors
from tir_mlir.ir.same_value import same_value

# Chain iterations enumerated at most; a longer chain over varying rows counts as missing.
MAX_POINTS = 1 << 15


def chain_loops(store) -> list:
    """The loops around `store`, innermost first, that carry the stored value's chain: serial
    or unrolled `affine.for`s whose IV the store's address does not depend on, outside the
    innermost loops it does depend on (a tile of accumulators, each element its own chain),
    up to the loop whose every iteration starts the chain again: one that writes the address
    outside the chain's loops (a cache-write accumulator's init, `acc[0] = 0` before the
    reduction loops, with an address no loop changes)."""
    address = list(store.operands)[2:]
    out = []
    for op in ancestors(store):
        if op.name != "affine.for" or Loop(op).kind not in ("serial", "unroll"):
            break
        if any(depends_on(v, Loop(op).iv) for v in address):
            if out:
                break
            continue
        if out and _writes_outside(op, out[-1], store):
            break
        out.append(op)
    return out


def _writes_outside(loop, inner, store) -> bool:
    """Whether `loop` stores to `store`'s address (buffer and indices) other than inside
    `inner`."""

    def visit(op) -> bool:
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    child = child.operation
                    if child == inner:
                        continue
                    if child.name in ("memref.store", "vector.store") and _same_address(
                        child, store
                    ):
                        return True
                    if len(child.regions) and visit(child):
                        return True
        return False

    return visit(loop)


def _same_address(a, b) -> bool:
    """Whether two stores write the same buffer at the same indices (each flattened block
    computes its own indices: the same address in other SSA values)."""
    x, y = list(a.operands)[1:], list(b.operands)[1:]
    return len(x) == len(y) and all(same_value(u, v) for u, v in zip(x, y))


def misses_cache(update, loops, cache) -> Optional[bool]:
    """Whether the loads feeding `update` (through arith ops) over the iterations of `loops`
    touch more lines of one set of `cache` = (sets, ways, line bytes) than it has ways. None
    when a load's address is not a known linear form (the caller keeps its old rule)."""
    sets, ways, line = cache
    ivs = {}
    for op in loops:
        lp = Loop(op)
        low, extent = (lp.min, lp.extent) if lp.constant_bounds else (None, None)
        if not isinstance(low, int) or not isinstance(extent, int):  # a symbolic extent
            return None
        ivs[lp.iv] = range(low, low + extent, lp.step)
    loads = []
    for load in feeding_loads(update):
        form = _byte_offset(load, ivs)
        if form is None:
            return None
        loads.append(form)
    varying = [iv for iv in ivs if any(form.terms.get(iv) for form in loads)]
    if math.prod(len(ivs[iv]) for iv in varying) > MAX_POINTS:
        return True
    per_set: dict = {}
    for n, form in enumerate(loads):
        lines = {0}
        for iv in varying:
            c = form.terms.get(iv, 0)
            lines = {x + c * v for x in lines for v in ivs[iv]} if c else lines
        for x in {x // line for x in lines}:
            per_set[x % sets] = per_set.get(x % sets, 0) + 1
    return max(per_set.values(), default=0) > ways


def feeding_loads(update) -> list:
    """The memref/vector loads the added term of `update` is computed from (through arith
    ops), not the accumulator's own load."""
    seen, todo, out = [], [v.owner for v in update.operands], []
    while todo:
        op = todo.pop()
        if not isinstance(op, ir.OpView) or any(op.operation == s for s in seen):
            continue
        seen.append(op.operation)
        name = op.operation.name
        if name in ("memref.load", "vector.load"):
            out.append(op.operation)
        elif name.startswith("arith."):
            todo.extend(v.owner for v in op.operation.operands)
    return out


def _byte_offset(load, ivs) -> Optional[Linear]:
    """The load's offset in bytes from its buffer's start as a linear form over the chain's
    IVs (any other value: its contribution is fixed over the chain, dropped)."""
    memref = ir.MemRefType(load.operands[0].type)
    shape = list(memref.shape)
    if not memref.has_static_shape or not _identity_layout(memref.layout, len(shape)):
        return None
    strides = [math.prod(shape[d + 1 :]) for d in range(len(shape))]
    bits = ir.FloatType(memref.element_type).width if _is_float(memref.element_type) else 0
    if not bits:
        bits = ir.IntegerType(memref.element_type).width
    total = Linear()
    for index, stride in zip(list(load.operands)[1:], strides):
        form = _index_form(index, ivs)
        if form is None:
            return None
        total = total + form.scale(stride * bits // 8)
    return total


def _identity_layout(layout, rank: int) -> bool:
    return isinstance(layout, ir.AffineMapAttr) and layout.value == ir.AffineMap.get_identity(rank)


def _is_float(t) -> bool:
    return isinstance(t, ir.FloatType)  # (element types come downcast: F32Type, ...)


def _index_form(value, ivs) -> Optional[Linear]:
    def leaf(v):
        if v in ivs:
            return Linear({v: 1})
        owner = v.owner
        if isinstance(owner, ir.OpView) and owner.operation.name == "affine.apply":
            m = ir.AffineMapAttr(owner.operation.attributes["map"]).value
            operands = list(owner.operation.operands)
            dims = [_index_form(x, ivs) for x in operands[: m.n_dims]]
            symbols = [_index_form(x, ivs) for x in operands[m.n_dims :]]
            return linear(m.results[0], dims, symbols, division=_fixed_division)
        # fixed over the chain unless computed from one of its IVs
        return None if any(depends_on(v, iv) for iv in ivs) else Linear()

    return value_linear(value, leaf)


def _fixed_division(kind, lhs: Linear, rhs: Linear) -> Optional[Linear]:
    """A floordiv/mod of values fixed over the chain is fixed too (a fused outer loop's
    `f floordiv 16` in a tile's row); one over the chain's IVs is not linear."""
    return Linear() if not lhs.terms and not rhs.terms else None


def depends_on(value, iv) -> bool:
    """Whether an index value is computed from `iv` (through arith and affine.apply ops)."""
    if value == iv:
        return True
    owner = value.owner
    if not isinstance(owner, ir.OpView):
        return False
    operands = list(owner.operation.operands)
    if owner.operation.name == "affine.apply":  # block bindings pass every loop IV as a dim
        m = ir.AffineMapAttr(owner.operation.attributes["map"]).value
        used = dims_of(m.results[0])
        operands = [v for p, v in enumerate(operands) if p in used or p >= m.n_dims]
    return any(depends_on(v, iv) for v in operands)
