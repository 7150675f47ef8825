"""Read/write regions of a `tir.block`, inferred from its loads and stores.

`T.reads`/`T.writes` are not stored in the IR (design.md); this recomputes them the way TVM's
block access region detector does, for the printer and for schedule legality checks.

    regions = block_regions(block_op)
    regions.reads / regions.writes: list of BufferRegion, in order of first access
    BufferRegion.buffer  the memref value
    BufferRegion.ranges  one (min, extent) per buffer dimension: `min` an ir.AffineExpr,
                         `extent` an int (an ir.AffineExpr over the same dims where it
                         depends on a symbolic size: `A[vi, 0:m]`); dims 0..n-1 of `min` are
                         the block's iter vars (its body arguments, in order), dims n.. are
                         the values in `free` (loop vars, symbolic sizes)
    BufferRegion.free    values from outside the block used in indices (e.g. loop vars read
                         directly by a block without iter vars)

Rules, as in TVM: accesses are visited in TVM's order (statement by statement; a store's value
before its indices; a load before the loads in its indices); the init region is visited before
the body; loops inside the block are relaxed over their ranges (`A[vi, k]` under
`for k in range(128)` gives `A[vi, 0:128]`); nested blocks contribute their own regions with
their bindings substituted; accesses to one buffer are merged per dimension (a union that
cannot be expressed, or an index that is not affine such as a data-dependent one, widens to the
whole dimension); buffers allocated inside the block and undeclared constants (TVM's
`T.Buffer(..., data=K)`, unless listed in the written T.reads) are left out; a block with an init does
not list its written buffers as reads.

    BufferRegion.points  per dimension, the index value of a point access whose expression
                         does not involve an inner loop (TVM keeps such an index verbatim, so
                         the printer prints that expression), else None. Every access of the
                         buffer must have the same expression tree there.
"""

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from mlir import ir

from tir_mlir.ir.affine_exprs import const_of, dims_of, expr_bounds
from tir_mlir.analysis.shapes import buffer_shape
from tir_mlir.analysis.symbolic import SymExpr, is_symbol, substitute
from tir_mlir.ir import region_overrides as overrides
from tir_mlir.ir.same_value import same_value
from tir_mlir.dialect.buffers import buffer_name
from tir_mlir.dialect.ops import (
    EXTERN,
    Block,
    Loop,
    body_ops,
    extern_args,
    extern_callee,
    is_undeclared_const,
)
from tir_mlir.errors import TIRError


@dataclass
class BufferRegion:
    buffer: ir.Value
    ranges: List[Tuple[ir.AffineExpr, int]]
    free: List[ir.Value] = field(default_factory=list)
    points: List[Optional[ir.Value]] = field(default_factory=list)
    explicit: bool = False  # set by annotate_buffer_access (region_overrides.py)


@dataclass
class Regions:
    reads: List[BufferRegion]
    writes: List[BufferRegion]


def _c(v: int) -> ir.AffineExpr:
    return ir.AffineConstantExpr.get(v)


class _Space:
    """Affine dims of one analysis: iter vars first, then loop vars and outside values."""

    def __init__(self, iter_vars):
        self.values = list(iter_vars)
        self.n_iter = len(self.values)
        self.index = {v: k for k, v in enumerate(self.values)}
        self.ranges = {}  # dim of a loop inside the block -> (min, extent)
        self.inner = set()  # values defined inside the block (not free)

    def dim(self, v) -> ir.AffineDimExpr:
        if v not in self.index:
            self.index[v] = len(self.values)
            self.values.append(v)
        return ir.AffineDimExpr.get(self.index[v])

    def simplify(self, e):
        return ir.AffineExpr.simplify_affine_expr(e, len(self.values), 0)

    def of(self, x) -> ir.AffineExpr:
        """An int or a SymExpr (a symbolic loop bound or size) in this space: its symbols
        are outside values, so dims."""
        if isinstance(x, SymExpr):
            return substitute(x.expr, [], [self.dim(v) for v in x.symbols])
        return _c(x)

    def to_affine(self, v) -> Optional[ir.AffineExpr]:
        """The index value as an affine expression, None when it is not affine."""
        if v in self.index or isinstance(v, ir.BlockArgument):
            return self.dim(v)
        op = v.owner.operation
        name, args = op.name, list(op.operands)
        if name == "arith.constant":
            return (
                _c(ir.IntegerAttr(op.attributes["value"]).value)
                if isinstance(op.attributes["value"], ir.IntegerAttr)
                else None
            )
        if name in ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.trunci"):
            return self.to_affine(args[0])
        if name == "affine.apply":
            m = ir.AffineMapAttr(op.attributes["map"]).value
            ops = [self.to_affine(a) for a in args]
            if any(o is None for o in ops) or m.n_symbols:
                return None
            inner = ir.AffineMap.get(len(self.values), 0, ops)
            return self.simplify(m.results[0].compose(inner))
        sub = [self.to_affine(a) for a in args]
        if len(sub) != 2:
            return None
        a, b = sub
        if a is None or b is None:
            return None
        if name == "arith.addi":
            return a + b
        if name == "arith.subi":
            return self.simplify(a + b * -1)
        cb = const_of(b)
        if name == "arith.muli" and (const_of(a) is not None or cb is not None):
            return a * b if cb is not None else b * a
        callee = ir.StringAttr(op.attributes["callee"]).value if name == "tir.call" else None
        if cb is not None and cb > 0:
            if name == "arith.floordivsi" or callee == "floordiv":
                return ir.AffineExpr.get_floor_div(a, b)
            if callee == "floormod":
                return ir.AffineExpr.get_mod(a, b)
        return None

    def uses_ranges(self, e) -> bool:
        return any(p in self.ranges for p in dims_of(e))

    def bounds(self, e):
        """(lo, hi) of e over the ranges of inner loops (inclusive), or None."""
        e = e.maybe_downcast()
        if not self.uses_ranges(e):
            return e, e
        if isinstance(e, ir.AffineDimExpr):
            lo, ext = self.ranges[e.position]
            return self.of(lo), self.of(lo + ext - 1)
        if isinstance(e, ir.AffineAddExpr):
            a, b = self.bounds(e.lhs), self.bounds(e.rhs)
            return (a[0] + b[0], a[1] + b[1]) if a and b else None
        c = const_of(e.rhs)
        if c is None:
            return None
        inner = self.bounds(e.lhs)
        if inner is None:
            return None
        lo, hi = inner
        if isinstance(e, ir.AffineMulExpr):
            return (lo * c, hi * c) if c >= 0 else (hi * c, lo * c)
        if isinstance(e, ir.AffineFloorDivExpr) and c > 0:
            return ir.AffineExpr.get_floor_div(lo, e.rhs), ir.AffineExpr.get_floor_div(hi, e.rhs)
        if isinstance(e, ir.AffineModExpr) and c > 0:
            return _c(0), _c(c - 1)
        return None


class _Detector:
    def __init__(self, block: Block):
        self.space = _Space(block.iter_vars)
        self.reads, self.writes = [], []  # [buffer, [range or None], [point or None]]
        self.local = set()
        self.matched = {}  # T.match_buffer view -> (source buffer, its region)

    def visit(self, ops):
        """Statements in order; expression ops are visited from the statement using them."""
        for op in ops:
            if _is_statement(op):
                self.statement(op)

    def statement(self, op):
        name = op.name
        if name in ("memref.alloc", "memref.alloca"):
            self.local.add(op.results[0])
        elif name == "memref.subview" and "tir.match_buffer" in op.attributes:
            # accesses through a T.match_buffer of this block are the whole matched region
            sizes = list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
            offsets = [self.space.to_affine(v) for v in list(op.operands)[1:]]
            self.matched[op.results[0]] = (
                op.operands[0],
                [
                    None if e is None else (self.space.simplify(e), n)
                    for e, n in zip(offsets, sizes)
                ],
            )
        elif name in ("memref.store", "vector.store"):
            self.access(
                self.writes,
                op.operands[1],
                list(op.operands)[2:],
                _lanes(op.operands[0]) if name == "vector.store" else 1,
            )
            for v in op.operands:
                self.expr(v)
        elif "tir.let_name" in op.attributes:
            self.expr_op(op)
        elif Loop.is_loop(op):
            loop = Loop(op)
            d = self.space.dim(loop.iv)
            self.space.ranges[d.position] = self.loop_range(loop)
            self.visit(body_ops(loop.body))
        elif Block.is_block(op):
            self.nested(Block(op))
        else:
            self.expr_op(op)

    def loop_range(self, loop: Loop):
        """(min, extent) of a loop var; for bounds on outer loops inside the block
        (`range(i + 1)`), the widest over their ranges."""
        if loop.constant_bounds:
            return loop.min, loop.extent
        ends = []
        for m, operands in (loop.lower_bound, loop.upper_bound):
            dims = []
            for v in operands:
                r = self.space.ranges.get(self.space.index.get(v))
                dims.append(None if r is None else (r[0], r[0] + r[1] - 1))
            ends.append(expr_bounds(m.results[0], dims))
        if ends[0] is None or ends[1] is None:
            raise TIRError(f"loop {loop.name!r}: its bounds depend on values outside the block")
        return ends[0][0], max(0, ends[1][1] - ends[0][0])

    def expr(self, v: ir.Value):
        """Visit the expression tree of v (pre-order, like TVM's ExprVisitor)."""
        if isinstance(v, ir.BlockArgument):
            return
        op = v.owner.operation
        if "tir.let_name" in op.attributes:
            return  # a LetStmt: visited as its own statement
        self.expr_op(op)

    def expr_op(self, op):
        if op.name == EXTERN:
            return self.pointer(op)
        if op.name in ("memref.load", "vector.load"):
            self.access(
                self.reads,
                op.operands[0],
                list(op.operands)[1:],
                _lanes(op.results[0]) if op.name == "vector.load" else 1,
            )
        for v in op.operands:
            self.expr(v)
        for region in op.regions:
            for blk in region.blocks:
                self.visit([o.operation for o in blk.operations])

    def pointer(self, op):
        """A buffer pointer handed to a C function (frontend/extern_calls.py): with
        T.tvm_access_ptr the elements it spans, read and/or written by its mask; any other
        pointer (`B.data`, `T.address_of`) reads and writes the whole buffer."""
        callee, args = extern_callee(op), extern_args(op)
        span = _access_span(args) if callee == "tvm_access_ptr" else None
        if span is not None:
            buf, indices, extent, mask = span
            ranges = _span_ranges(self, ir.MemRefType(buf.type).shape, indices, extent)
            for bit, table in ((1, self.reads), (2, self.writes)):
                if mask & bit:
                    self.merge(table, buf, ranges, [None] * len(ranges))
            for v in indices:
                self.expr(v)
            return
        for v in args:
            if isinstance(v.type, ir.MemRefType):
                whole = [None] * len(ir.MemRefType(v.type).shape)
                self.merge(self.reads, v, whole, list(whole))
                self.merge(self.writes, v, whole, list(whole))
            else:
                self.expr(v)

    def relax(self, e: ir.AffineExpr, ext: int):
        b = self.space.bounds(e)
        if b is None:
            return None
        lo, hi = (self.space.simplify(x) for x in b)
        span = self.space.simplify(hi + lo * -1)
        width = const_of(span)
        if width is None:  # over a loop of symbolic extent: `0:m`
            return (lo, self.space.simplify(span + ext)) if _symbolic(span, self.space) else None
        return lo, width + ext

    def access(self, table, buf, indices, lanes=1):
        """An access of A[indices]; a vector access covers `lanes` along the last index."""
        ranges = []
        for k, i in enumerate(indices):
            e = self.space.to_affine(i)
            ext = lanes if k == len(indices) - 1 else 1
            ranges.append(None if e is None else self.relax(self.space.simplify(e), ext))
        inner = {self.space.values[d] for d in self.space.ranges}
        points = [None if _uses(i, inner) or _opaque(i) else i for i in indices]
        if lanes > 1:
            points[-1] = None
        self.merge(table, buf, ranges, points)

    def nested(self, child: Block):
        sub = block_regions(child.op)
        dims = [self.space.to_affine(d) for d in child.dims]
        for table, regions in ((self.reads, sub.reads), (self.writes, sub.writes)):
            for r in regions:
                free = [self.space.to_affine(v) for v in r.free]
                known = [x for x in dims + free if x is not None]
                if len(known) != len(dims) + len(free):
                    self.merge(table, r.buffer, [None] * len(r.ranges), [None] * len(r.ranges))
                    continue
                syms = [self.space.dim(v) for v in child.symbols]
                outer = known[: len(dims)]
                iters = [substitute(b, outer, syms) for b in child.bindings.results]
                subst = ir.AffineMap.get(len(self.space.values), 0, iters + known[len(dims) :])
                self.merge(
                    table,
                    r.buffer,
                    [self.relax(self.space.simplify(m.compose(subst)), e) for m, e in r.ranges],
                    [None] * len(r.ranges),
                )

    def merge(self, table, buf, ranges, points):
        while buf in self.matched:
            buf, ranges = self.matched[buf]
            points = [None] * len(ranges)
        for entry in table:
            if entry[0] == buf:
                entry[1] = [_union(a, b, self.space) for a, b in zip(entry[1], ranges)]
                entry[2] = [
                    a if a is not None and b is not None and _same_tree(a, b, self.space) else None
                    for a, b in zip(entry[2], points)
                ]
                return
        table.append([buf, ranges, points])

    def result(self, table, drop=()):
        out = []
        for buf, ranges, points in table:
            if buf in self.local or buf in drop:
                continue
            shape = ir.MemRefType(buf.type).shape
            if not ir.MemRefType(buf.type).has_static_shape:
                shape = [
                    self.space.of(d) if isinstance(d, SymExpr) else d for d in buffer_shape(buf)
                ]
            full = [r if r is not None else (_c(0), shape[k]) for k, r in enumerate(ranges)]
            out.append((buf, full, points))
        return out


def _access_span(args):
    """(buffer, start indices, extent, mask) of `T.tvm_access_ptr(t, B.data, <offset of
    B[idx]>, extent, mask)` with constant extent and mask, else None."""
    data, offset, extent, mask = (a.owner for a in args)
    if any(isinstance(o, ir.Block) for o in (data, offset)):
        return None
    if extern_callee(data) != "buffer_data" or extern_callee(offset) != "elem_offset":
        return None
    buf = extern_args(data)[0]
    off_args = extern_args(offset)
    ext, m = const_value(args[2]), const_value(args[3])
    if off_args[0] != buf or ext is None or m is None:
        return None
    return buf, off_args[1:], ext, m


def _span_ranges(det, shape, indices, extent):
    """Per-dimension ranges of `extent` consecutive elements from B[indices] (row major):
    a run within the last dimension, or whole rows of the trailing dims; None (the whole
    dimension) where the span is not such a box."""
    rank = len(shape)
    starts = [det.space.to_affine(i) for i in indices]
    inner = 1
    for k in range(rank - 1, -1, -1):
        trailing = starts[k + 1 :]
        if (
            extent <= inner * shape[k]
            and extent % inner == 0
            and all(s is not None and const_of(det.space.simplify(s)) == 0 for s in trailing)
        ):
            ranges = [
                None if s is None else det.relax(det.space.simplify(s), 1) for s in starts[:k]
            ]
            start = starts[k]
            ranges.append(
                None if start is None else det.relax(det.space.simplify(start), extent // inner)
            )
            return ranges + [(_c(0), d) for d in shape[k + 1 :]]
        inner *= shape[k]
    return [None] * rank


def const_value(v: ir.Value):
    o = v.owner
    if isinstance(o, ir.Block) or o.name != "arith.constant":
        return None
    return ir.IntegerAttr(o.attributes["value"]).value


def _lanes(v: ir.Value) -> int:
    return ir.VectorType(v.type).shape[0]


def _is_statement(op) -> bool:
    return (
        len(op.results) == 0
        or "tir.let_name" in op.attributes
        or op.name in ("memref.alloc", "memref.alloca", "memref.subview")
    )


def _uses(v: ir.Value, values) -> bool:
    """Whether the expression tree of v reads any of `values`."""
    if v in values:
        return True
    if isinstance(v, ir.BlockArgument):
        return False
    op = v.owner.operation
    return any(_uses(x, values) for x in op.operands) or any(
        _uses(x, values)
        for r in op.regions
        for b in r.blocks
        for o in b.operations
        for x in o.operands
    )


def _opaque(v: ir.Value) -> bool:
    """Whether v's tree holds a call TVM's interval evaluator widens to everything."""
    if isinstance(v, ir.BlockArgument):
        return False
    op = v.owner.operation
    if "tir.let_name" in op.attributes:
        return False
    if op.name == "tir.call":
        if ir.StringAttr(op.attributes["callee"]).value not in ("floordiv", "floormod"):
            return True
    elif op.name.startswith("math.") or op.name in ("scf.if", "arith.select"):
        return True
    return any(_opaque(x) for x in op.operands)


def _same_tree(a: ir.Value, b: ir.Value, space) -> bool:
    """Structural equality of two index expression trees (init iter vars = body iter vars)."""

    def same_iter_var(x: ir.Value, y: ir.Value) -> bool:
        ix, iy = space.index.get(x), space.index.get(y)
        return ix is not None and ix == iy and ix < space.n_iter

    return same_value(a, b, ops=None, same_argument=same_iter_var, depth=None)


def _union(a, b, space):
    if a is None or b is None:
        return None
    (lo1, e1), (lo2, e2) = a, b
    d = const_of(space.simplify(lo2 + lo1 * -1))
    if d is None:
        return None
    if not isinstance(e1, int) or not isinstance(e2, int):  # symbolic extents
        return a if d == 0 and str(e1) == str(e2) else None
    lo = lo1 if d >= 0 else lo2
    return lo, max(e1, d + e2) if d >= 0 else max(e1 - d, e2)


def index_affine(v: ir.Value):
    """(AffineExpr, the values its dims stand for) of an index value, None if not affine."""
    space = _Space([])
    e = space.to_affine(v)
    return None if e is None else (e, space.values)


def block_regions(block_op) -> Regions:
    """Inferred read and write regions of a tir.block (see the module docstring)."""
    with block_op.context:
        return _block_regions(Block(block_op))


def _block_regions(block: Block) -> Regions:
    det = _Detector(block)
    if block.init is not None:
        # The init's arguments are its own copy of the iter vars: same dims.
        for k, a in enumerate(block.init.arguments):
            det.space.index[a] = k
        det.visit(body_ops(block.init))
    det.visit(body_ops(block.body))
    writes = det.result(det.writes)
    # (a buffer hidden from T.writes, such as one a call is handed a pointer to, is not
    # listed as written, so it stays a read)
    hidden_writes = overrides.hidden(block.op, "write")
    drop = (
        {b for b, _, _ in writes if buffer_name(b) not in hidden_writes}
        if block.init is not None
        else ()
    )
    # an undeclared constant (`T.Buffer(..., data=T.allocate_const(...))`) is no region, as
    # in TVM, unless the block's written T.reads listed it
    listed = overrides.explicit(block.op, "read")
    unlisted = {
        b for b, _, _ in det.reads if is_undeclared_const(b) and buffer_name(b, "") not in listed
    }
    reads = det.result(det.reads, set(drop) | unlisted)
    final_writes = _override(_finish(writes, det.space), block, "write")
    final_reads = _override(_finish(reads, det.space), block, "read")
    if not drop and overrides.writes_first(block.op):
        first = [r for w in final_writes for r in final_reads if r.buffer == w.buffer]
        final_reads = first + [r for r in final_reads if all(r is not f for f in first)]
    if drop and overrides.accumulator_reads(block.op):
        loaded = {b for b, _, _ in det.reads}
        acc = [w for w in final_writes if w.buffer in loaded]
        positions = overrides.accumulator_reads(block.op)
        if len(acc) == len(positions):  # the written T.reads listed the accumulators
            for pos, w in sorted(zip(positions, acc), key=lambda x: x[0]):
                final_reads.insert(min(pos, len(final_reads)), w)
    for kind, regions in (("read", final_reads), ("write", final_writes)):
        order = overrides.order(block.op, kind)
        if order:
            rank = {n: k for k, n in enumerate(order)}
            regions.sort(key=lambda r: rank.get(buffer_name(r.buffer, ""), len(order)))
    return Regions(final_reads, final_writes)


def _override(regions: List[BufferRegion], block: Block, kind: str) -> List[BufferRegion]:
    """Regions set by hand (annotate_buffer_access, unsafe_hide_buffer_access) replace or
    drop the inferred ones."""
    explicit, hidden = overrides.explicit(block.op, kind), overrides.hidden(block.op, kind)
    if not explicit and not hidden:
        return regions
    out = []
    for r in regions:
        name = buffer_name(r.buffer, "")
        if name in hidden:
            continue
        ranges = explicit.get(name)
        if ranges is not None and len(ranges) == len(r.ranges):
            r = BufferRegion(r.buffer, ranges, [], [None] * len(ranges), explicit=True)
        out.append(r)
    return out


def _finish(entries, space) -> list:
    """Renumber dims: iter vars stay 0..n-1, outside values follow in order of use."""
    free = []
    for _, ranges, _ in entries:
        for e, ext in ranges:
            _collect_free(e, space, free)
            if not isinstance(ext, int):
                _collect_free(ext, space, free)
    new = [ir.AffineDimExpr.get(k) for k in range(space.n_iter)]
    pos = {d: space.n_iter + k for k, d in enumerate(free)}
    new += [ir.AffineDimExpr.get(pos.get(d, 0)) for d in range(space.n_iter, len(space.values))]
    m = ir.AffineMap.get(len(space.values), 0, new)
    values = [space.values[d] for d in free]
    return [
        BufferRegion(
            buf,
            [(e.compose(m), ext if isinstance(ext, int) else ext.compose(m)) for e, ext in ranges],
            values,
            points,
        )
        for buf, ranges, points in entries
    ]


def _symbolic(e, space) -> bool:
    """Whether e uses only outside values that are symbols of the function (sizes)."""
    from_dims = dims_of(e)
    return bool(from_dims) and all(
        d >= space.n_iter and d not in space.ranges and is_symbol(space.values[d])
        for d in from_dims
    )


def _collect_free(e, space, out):
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineDimExpr):
        if e.position >= space.n_iter and e.position not in out:
            out.append(e.position)
    elif isinstance(e, ir.AffineBinaryExpr):
        _collect_free(e.lhs, space, out)
        _collect_free(e.rhs, space, out)
