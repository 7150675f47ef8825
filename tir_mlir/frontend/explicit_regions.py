"""T.reads / T.writes entries that a block's `explicit_read_region` / `explicit_write_region`
annotation (TVM's annotate_buffer_access) marks as set by hand: kept as written
(tir_mlir/ir/region_overrides.py), where every other region is re-inferred from the accesses.

An entry whose indices are not affine in the iter vars, or whose extents are not positive
constants, falls back to the inferred region.

Three kinds of written entries are kept without the annotation, where inference cannot know
better than the writer (TVM keeps every written entry): an entry over a whole buffer (it covers
any access, whatever a primitive does to the block), every entry of a block that hands a
buffer pointer (`B.data`) to a call, which inference takes as reading and writing all of the
buffer: there the lists are the writer's (a buffer left out of T.reads is hidden from them),
and an entry over an undeclared constant (`T.Buffer(..., data=K)`), which inference leaves out.
"""

from mlir import ir

from tir_mlir.ir import region_overrides as overrides
from tir_mlir.errors import TIRError
from tir_mlir.frontend import ast as A
from tir_mlir.frontend.affine import AffineBuilder, NotAffine
from tir_mlir.frontend.intrinsics import callee
from tir_mlir.dialect.buffers import buffer_name
from tir_mlir.dialect.ops import body_ops, extern_callee, is_undeclared_const

_KEYS = {"read": "explicit_read_region", "write": "explicit_write_region"}


def record(env, blk, region_calls, annotations):
    """Store the marked entries of `region_calls` (the T.reads / T.writes calls, already
    checked) on block `blk`; `env` holds the iter vars."""
    _record_written(env, blk, region_calls)
    if not annotations:
        return
    for kind, key in _KEYS.items():
        marked = annotations.get(key)
        if not isinstance(marked, ir.ArrayAttr):
            continue
        items = [
            r
            for c in region_calls
            if callee(c) == kind + "s"
            for a in c.args
            for r in (a.items if isinstance(a, (A.List_, A.Tuple_)) else [a])
        ]
        for k in ir.ArrayAttr(marked):
            k = ir.IntegerAttr(k).value if isinstance(k, ir.IntegerAttr) else -1
            if 0 <= k < len(items) and isinstance(items[k], A.Subscript):
                ranges = _ranges(env, blk, items[k])
                if ranges is not None:
                    overrides.set_explicit(
                        blk.op, kind, items[k].value.id, len(blk.iter_names), ranges
                    )


def record_order(blk, region_calls):
    """T.reads / T.writes written in another order than inference finds keep the writer's
    order (as TVM keeps the written lists)."""
    written = {k: [_name(r) for r in _items(region_calls, k)] for k in _KEYS}
    if all(len(w) < 2 for w in written.values()):
        return  # (one entry has no order)
    from tir_mlir.ir.regions import block_regions

    try:
        inferred = block_regions(blk.op)
    except (RecursionError, TIRError):  # (the parse or the printer reports it)
        return
    for kind, found in (("read", inferred.reads), ("write", inferred.writes)):
        names = [buffer_name(r.buffer, "") for r in found]
        order = [n for n in written[kind] if n in names]
        if len(set(order)) == len(order) and order != names and sorted(order) == sorted(names):
            overrides.set_order(blk.op, kind, order)


def _name(region):
    node = region.value if isinstance(region, A.Subscript) else region
    return node.id if isinstance(node, A.Name) else None


def _ranges(env, blk, region):
    idx = region.indices
    if len(idx) == 1 and isinstance(idx[0], A.Tuple_):
        idx = idx[0].items
    ab = AffineBuilder(env)
    n = len(blk.iter_names)
    out = []
    try:
        for i in idx:
            lo_node, hi_node = (i.lo, i.hi) if isinstance(i, A.Slice) else (i, None)
            if lo_node is None or isinstance(i, A.Slice) and (hi_node is None or i.step):
                return None
            lo = ab.expr(lo_node)[0]
            hi = ab.expr(hi_node)[0] if hi_node is not None else lo + 1
            out.append((lo, hi))
    except NotAffine:
        return None
    args = list(blk.iter_vars)
    if any(not any(d == a for a in args) for d in ab.dims):
        return None
    to_iters = ir.AffineMap.get(
        n, 0, [ir.AffineDimExpr.get(next(k for k, a in enumerate(args) if a == d)) for d in ab.dims]
    )
    result = []
    for lo, hi in out:
        lo, hi = (
            ir.AffineExpr.simplify_affine_expr(e.compose(to_iters) if ab.dims else e, n, 0)
            for e in (lo, hi)
        )
        ext = ir.AffineExpr.simplify_affine_expr(hi - lo, n, 0).maybe_downcast()
        if not isinstance(ext, ir.AffineConstantExpr) or ext.value <= 0:
            return None
        result.append((lo, ext.value))
    return result


def _items(region_calls, kind):
    return [
        r
        for c in region_calls
        if callee(c) == kind + "s"
        for a in c.args
        for r in (a.items if isinstance(a, (A.List_, A.Tuple_)) else [a])
    ]


def _hands_pointer(blk) -> bool:
    """Whether the block's own statements (not nested blocks') pass a `B.data` to a call."""

    def any_in(ops):
        for op in ops:
            if op.name == "tir.block":
                continue
            if extern_callee(op) == "buffer_data":
                return True
            if any(
                any_in([o.operation for o in b.operations]) for r in op.regions for b in r.blocks
            ):
                return True
        return False

    return any_in(body_ops(blk.body))


def _record_written(env, blk, region_calls):
    if not region_calls:
        return
    if blk.init is not None:
        _record_accumulators(env, blk, region_calls)
    opaque = _hands_pointer(blk)
    for kind in _KEYS:
        items = [
            r
            for r in _items(region_calls, kind)
            if isinstance(r, A.Subscript) and isinstance(r.value, A.Name)
        ]
        for r in items:
            buf = env.get(r.value.id)
            ranges = _ranges(env, blk, r)
            if ranges is None or not hasattr(buf, "shape"):
                continue
            whole = all(
                isinstance(lo.maybe_downcast(), ir.AffineConstantExpr)
                and lo.maybe_downcast().value == 0
                and ext == d
                for (lo, ext), d in zip(ranges, buf.shape)
            )
            if opaque or whole or is_undeclared_const(buf.value):
                overrides.set_explicit(blk.op, kind, r.value.id, len(blk.iter_names), ranges)
        if opaque:
            named = {r.value.id for r in items}
            overrides.add_hidden(blk.op, kind, [n for n in _accessed(blk) if n not in named])


def _accessed(blk) -> list:
    from tir_mlir.ir.regions import block_regions

    regions = block_regions(blk.op)
    return sorted({buffer_name(r.buffer, "") for r in regions.reads + regions.writes})


def _record_accumulators(env, blk, region_calls):
    """Where the written T.reads list a buffer the block stores to (its accumulator)."""
    from tir_mlir.ir.regions import block_regions

    written = {buffer_name(r.buffer) for r in block_regions(blk.op).writes}
    positions = [
        k
        for k, r in enumerate(_items(region_calls, "read"))
        if isinstance(r, A.Subscript) and isinstance(r.value, A.Name) and r.value.id in written
    ]
    if positions:
        overrides.set_accumulator_reads(blk.op, positions)
