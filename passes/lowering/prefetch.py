"""Stages `prefetch-targets` (tir level) and `prefetch` (affine level): TE's prefetch, from the
loop annotation `{"prefetch": [["A", 1]]}` that `sch.prefetch` records.

At the start of every iteration of the annotated loop, prefetch (read, locality 3, data cache)
the region of A the loop body reads `offset` iterations ahead, one `memref.prefetch` per cache
line of its innermost dimension, like TVM's InjectPrefetch + StorageFlatten:

    affine.for %k = 0 to 64 {prefetch [["A", 1]]}       affine.for %k = 0 to 64 {
      ... memref.load %A[%i, %k] ...               =>      %k1 = min(%k + 1, 63)   // clamped
                                                           memref.prefetch %A[%i, %k1], read, locality<3>, data
                                                           ... memref.load %A[%i, %k] ...

The region is the box of the loads of A in the loop body, loops inside relaxed over their
ranges and the loop's IV shifted by `offset` steps; an index that is not affine in loop IVs
(or two loads whose starts differ by more than a constant) widens to the whole dimension.
An index that can leave the buffer (the last `offset` iterations) is clamped into it, so every
prefetched address is valid. Buffer names are gone after tir-to-affine (allocations are
rebuilt), so `prefetch-targets` first tags the loads of each named buffer with
`tir_mlir.prefetch_buffer`; `prefetch` reads and removes the tags, after tir-to-affine has
peeled reduction inits (a prefetch in the loop body would stop that).
"""

from mlir import ir
from mlir.dialects import affine, arith, memref

from tir_mlir.ir.affine_exprs import dims_of
from tir_mlir.dialect.buffers import buffer_name
from tir_mlir.dialect.ops import Loop
from tir_mlir.passes.lowering.common import (
    ancestors,
    build_error,
    functions,
    group_in_order,
    index_const,
    iv_range,
    walk,
)
from tir_mlir.analysis.buffer_util import NotAffine, to_affine
from tir_mlir.analysis.linear import linear

KEY = "prefetch"
TAG = "tir_mlir.prefetch_buffer"
CACHE_LINE_BYTES = 64


def _requests(loop: Loop):
    """[(buffer name, offset)] of a loop's prefetch annotation."""
    anns = loop.annotations
    if KEY not in anns:
        return []
    try:
        return [
            (ir.StringAttr(e[0]).value, ir.IntegerAttr(e[1]).value)
            for e in map(ir.ArrayAttr, ir.ArrayAttr(anns[KEY]))
        ]
    except (ValueError, IndexError):
        raise build_error(loop.op, f'{KEY} annotation must be [["buffer", offset], ...]') from None


def _loads(loop_op):
    return [o for o in walk(loop_op) if o.name == "memref.load"]


class PrefetchTargets:
    name = "prefetch-targets"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for op in walk(f):
                if op.name != Loop.OP_NAME:
                    continue
                for name, offset in _requests(Loop(op)):
                    if offset < 1:
                        raise build_error(op, f"{KEY}: offset must be >= 1, got {offset}")
                    for load in _loads(op):
                        if buffer_name(load.operands[0]) == name:
                            load.attributes[TAG] = ir.StringAttr.get(name)


class Prefetch:
    name = "prefetch"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for op in [o for o in walk(f) if o.name == Loop.OP_NAME]:
                for name, offset in _requests(Loop(op)):
                    _inject(op, name, offset)
            for op in walk(f):
                if TAG in op.attributes:
                    del op.attributes[TAG]


def _inject(loop_op, name, offset):
    loop = Loop(loop_op)
    tagged = [
        load
        for load in _loads(loop_op)
        if TAG in load.attributes and ir.StringAttr(load.attributes[TAG]).value == name
    ]
    per_buffer = group_in_order(tagged, lambda load: load.operands[0])
    for buf, loads in per_buffer:
        if not isinstance(buf.owner, ir.Block) and _inside(buf.owner, loop_op):
            raise build_error(
                loop_op, f"{KEY}: buffer {name!r} is allocated inside loop {loop.name!r}"
            )
        leaves = []
        boxes = [_box(load, leaves, loop_op, offset * loop.step) for load in loads]
        box = [_union(dim_boxes) for dim_boxes in zip(*boxes)]
        _emit(loop_op, buf, box, leaves)


def _inside(op, loop_op) -> bool:
    return any(p == loop_op for p in ancestors(op))


def _box(load, leaves, loop_op, shift):
    """Per buffer dimension: (coeffs {leaf: c}, const, extent) with start = sum c * leaf +
    const over the IVs of the loop and the loops around it, or None for the whole dimension."""
    iv = Loop(loop_op).iv
    out = []
    for idx in list(load.operands)[1:]:
        try:
            form = linear(to_affine(idx, leaves))
        except NotAffine:
            form = None
        if form is None:
            out.append(None)
            continue
        coeffs, const, extent = {}, form.const, 1
        for pos, c in form.terms.items():
            leaf = leaves[pos]
            owner = leaf.owner.owner if isinstance(leaf.owner, ir.Block) else None
            span = None if owner is None or owner.name != Loop.OP_NAME else iv_range(owner)
            if owner is None or span is None:
                coeffs = None  # (a loop over a symbolic size: no window)
                break
            if leaf == iv:
                coeffs[pos] = c
                const += c * shift
            elif _inside(owner, loop_op):  # a loop in the body: relax over its range
                first, last = span
                const += min(c * first, c * last)
                extent += abs(c) * (last - first)
            else:
                coeffs[pos] = c
        out.append(None if coeffs is None else (coeffs, const, extent))
    return out


def _union(ranges):
    """One dimension's box of several loads: starts must differ by a constant."""
    if any(r is None for r in ranges) or any(r[0] != ranges[0][0] for r in ranges):
        return None
    lo = min(r[1] for r in ranges)
    hi = max(r[1] + r[2] for r in ranges)
    return ranges[0][0], lo, hi - lo


def _emit(loop_op, buf, box, leaves):
    """memref.prefetch ops for every cache line of `box`, at the start of the loop body."""
    mtype = ir.MemRefType(buf.type)
    shape = mtype.shape
    box = [(({}, 0, n) if b is None else b) for b, n in zip(box, shape)]
    elem_bytes = max(1, getattr(mtype.element_type, "width", 8) // 8)
    inner_stride = mtype.get_strides_and_offset()[0][-1] if len(shape) else 1
    line = max(1, CACHE_LINE_BYTES // (elem_bytes * inner_stride))
    loc = loop_op.location
    ip = ir.InsertionPoint.at_block_begin(Loop(loop_op).body)
    vars_ = list(leaves)
    starts = []
    for d, (coeffs, const, extent) in enumerate(box):
        step = line if d == len(box) - 1 else 1
        count = (extent - 1) // step + 1
        expr = ir.AffineExpr.get_constant(const)
        for pos, c in coeffs.items():
            expr = expr + ir.AffineExpr.get_dim(pos) * c
        if count > 1:
            new = affine.AffineForOp(0, count, loc=loc, ip=ip)
            with ir.InsertionPoint(new.body):
                affine.AffineYieldOp([], loc=loc)
            ip = ir.InsertionPoint.at_block_begin(new.body)
            expr = expr + ir.AffineExpr.get_dim(len(vars_)) * step
            vars_.append(new.induction_variable)
        lo, hi = _bounds(coeffs, const, leaves)
        starts.append((expr, lo, hi + (count - 1) * step, shape[d] if shape else 1))
    with ip, loc:
        indices = [_clamped(expr, vars_, lo, hi, n, loc) for expr, lo, hi, n in starts]
        memref.PrefetchOp(buf, indices, False, 3, True)


def _bounds(coeffs, const, leaves):
    """Least and greatest start over the ranges of the loops involved (IV shift included)."""
    lo = hi = const
    for pos, c in coeffs.items():
        span = iv_range(leaves[pos].owner.owner)
        assert span is not None, "_box keeps the loops of integer ranges only"
        first, last = span
        lo += min(c * first, c * last)
        hi += max(c * first, c * last)
    return lo, hi


def _clamped(expr, vars_, lo, hi, n, loc):
    """`expr` as an index, clamped into [0, n) where it can leave it."""
    if isinstance(expr.maybe_downcast(), ir.AffineConstantExpr):
        return index_const(min(max(expr.maybe_downcast().value, 0), n - 1), loc)
    used = sorted(dims_of(expr))
    remap = ir.AffineMap.get(
        len(vars_),
        0,
        [
            ir.AffineExpr.get_dim(used.index(p)) if p in used else ir.AffineExpr.get_constant(0)
            for p in range(len(vars_))
        ],
    )
    m = ir.AffineMap.get(len(used), 0, [expr.compose(remap)])
    v = affine.AffineApplyOp(m, [vars_[p] for p in used], loc=loc).result
    if lo < 0:
        v = arith.maxsi(v, index_const(0, loc), loc=loc)
    if hi > n - 1:
        v = arith.minsi(v, index_const(n - 1, loc), loc=loc)
    return v
