"""rolling_buffer: keep only a sliding window of an intermediate buffer along one dimension,
and skip recomputing what the window already holds (TVM 0.21's output):

    B = alloc((18,))                                B = alloc((6,))
    for i_0 in range(4):                            for i_0 in range(4):
        for ax0 in range(6):                            for ax0 in range(6):
            block B: vi = i_0 * 4 + ax0       ->            block B: vi = T.axis.opaque(18, i_0 * 4 + ax0)
                B[vi] = ...                                     T.where(i_0 < 1 or 2 <= ax0)
        for i_1, k in T.grid(4, 3):                             B[vi % 6] = ...
            block C: ... B[vi + vk]                     for i_1, k in T.grid(4, 3):
                                                            block C: ... B[(vi + vk) % 6]

Per buffer dimension, the producer's write index is `stride * w + inner`, w a loop around the
lowest common ancestor loop of the producer and its consumers, inner over the loops below it
spanning `extent` values; the dimension overlaps when stride < extent. The dimension whose
loop w is outermost is rolled: its size becomes `extent` and every access indexes it modulo
`extent`; each overlapping dimension's loop skips, after its first iteration, the first
`extent - stride` values (T.where, `first_iteration_or.py`). Iter vars bound through the rolled
loop become opaque, in the producer and the consumers.

Legality (TVM's): `block` is not an output block; the buffer is an allocation written only by
it and read by at least one other block; the lowest common ancestor of these blocks is a loop;
one dimension overlaps.
Added (TVM gives wrong numbers otherwise): all accesses in the producer use the same indices,
affine in its iter vars; every loop that gets a T.where is serial; and every consumer reads,
along the rolled dimension, only inside the window the producer fills in the same iteration.
"""

from typing import List, Optional, Tuple

from mlir import ir
from mlir.dialects import memref

from tir_mlir.ir import first_iteration_or
from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import structure as analysis
from tir_mlir.analysis.buffer_util import (
    NotAffine,
    accesses,
    block_binding_exprs,
    block_writes,
    buffer_name,
    emit_index,
    func_of,
    is_func_arg,
    substitute,
    to_affine,
)
from tir_mlir.analysis.linear import linear
from tir_mlir.passes.schedule.cache_read_write import pick_buffer

WHO = "rolling_buffer"


class _Dim:
    """One buffer dimension of the producer's write: index = stride * w + const + inner."""

    def __init__(self, d, w, stride, const, inner, lo, extent):
        self.d, self.w, self.stride, self.const = d, w, stride, const
        self.inner, self.lo, self.extent = inner, lo, extent  # inner: {leaf: coeff}

    @property
    def overlap(self) -> int:
        return self.extent - self.stride


def _constant_bounds(lp: Loop) -> Tuple[int, int]:
    """A loop's (min, extent): the window and its predicate are sized from constant bounds."""
    lo, extent = lp.min, lp.extent
    if not isinstance(lo, int) or not isinstance(extent, int):
        raise ScheduleError(
            f"{WHO}: loop {lp.name!r} has symbolic bounds: a rolling window needs constant ones"
        )
    return lo, extent


def _index_exprs(block: Block, op, leaves: list) -> Optional[list]:
    """The access indices of `op` in `block` as affine exprs over loop-var leaves."""
    binds = block_binding_exprs(block, leaves)
    n = len(block.iter_names)
    args = list(block.iter_vars) + (list(block.init.arguments) if block.init else [])
    out = []
    for v in list(op.operands)[1 if op.name == "memref.load" else 2 :]:
        inner: list = []
        try:
            e = to_affine(v, inner)
        except NotAffine:
            return None
        subs = []
        for lf in inner:
            k = next((k % n for k, a in enumerate(args) if a == lf), None)
            if k is None:
                return None
            subs.append(binds[k])
        out.append(substitute(e, subs) if subs else e)
    return out


def check(block: Block, index: int):
    buf = pick_buffer(block, block_writes(block), index, WHO, "write")
    if any(is_func_arg(b) for b in block_writes(block)):
        raise ScheduleError(
            f"{WHO}: block {block.name!r} is an output block (it writes a function parameter)"
        )
    if is_func_arg(buf) or buf.owner.name != "memref.alloc":
        raise ScheduleError(
            f"{WHO}: buffer {buffer_name(buf)!r} is not an intermediate "
            f"buffer defined by T.alloc_buffer"
        )
    func = func_of(block.op)
    writers, readers = [], []
    for b in analysis.walk(func):
        if not analysis.is_block(b) or b == block.op:
            continue
        kinds = {k for _, k, v in accesses(b) if v == buf}
        if "store" in kinds:
            writers.append(b)
        elif "load" in kinds and not any(analysis.is_block(o) for o in analysis.walk(b)):
            readers.append(b)
    if writers:
        raise ScheduleError(
            f"{WHO}: buffer {buffer_name(buf)!r} has other writers than block {block.name!r}"
        )
    if not readers:
        raise ScheduleError(f"{WHO}: buffer {buffer_name(buf)!r} has no consumer block")
    chains = [analysis.enclosing_loops(b) for b in [block.op] + readers]
    common = [lp for lp in chains[0] if all(any(lp == x for x in c) for c in chains[1:])]
    if not common:
        raise ScheduleError(
            f"{WHO}: the lowest common ancestor of block {block.name!r} and "
            f"the consumers of {buffer_name(buf)!r} is not a loop"
        )
    outer = common  # loops around the LCA, LCA included
    dims = _dims(block, buf, outer)
    overlapping = [x for x in dims if x is not None and x.overlap > 0]
    if not overlapping:
        raise ScheduleError(
            f"{WHO}: no dimension of buffer {buffer_name(buf)!r} has a "
            f"positive bound overlap under the loops of block {block.name!r}"
        )
    roll = min(
        overlapping, key=lambda x: next(k for k, lp in enumerate(outer) if Loop(lp).iv == x.w)
    )
    for x in overlapping:
        lp = Loop(next(lp for lp in outer if Loop(lp).iv == x.w))
        _constant_bounds(lp)
        if lp.kind != "serial":
            raise ScheduleError(
                f"{WHO}: loop {lp.name!r} is {lp.kind}, not serial (a rolling "
                f"buffer reuses what its previous iteration computed)"
            )
    for r in readers:
        _check_consumer(Block(r), buf, roll)
    return buf, readers, dims, roll, overlapping


def _dims(block: Block, buf, outer) -> List[Optional[_Dim]]:
    ops = [o for o, _, v in accesses(block.op) if v == buf]
    leaves: list = []
    found = None
    for op in ops:
        es = _index_exprs(block, op, leaves)
        if es is None:
            raise ScheduleError(
                f"{WHO}: the indices of buffer {buffer_name(buf)!r} in block "
                f"{block.name!r} are not affine in its loop variables"
            )
        if found is not None and [str(e) for e in es] != [str(e) for e in found]:
            raise ScheduleError(
                f"{WHO}: block {block.name!r} accesses buffer "
                f"{buffer_name(buf)!r} with different indices"
            )
        found = es
    outer_ivs = [Loop(lp).iv for lp in outer]
    inner_loops = {
        Loop(lp).iv: Loop(lp)
        for lp in analysis.enclosing_loops(block.op)
        if not any(lp == o for o in outer)
    }
    assert found is not None  # the block writes the buffer: it has an access
    out = []
    for d, e in enumerate(found):
        lin = linear(e)
        if lin is None:
            out.append(None)
            continue
        coeffs, const = lin.terms, lin.const
        ws = [(leaves[p], c) for p, c in coeffs.items() if any(leaves[p] == o for o in outer_ivs)]
        inner = {
            leaves[p]: c for p, c in coeffs.items() if not any(leaves[p] == o for o in outer_ivs)
        }
        if len(ws) != 1 or ws[0][1] <= 0 or any(v not in inner_loops for v in inner):
            out.append(None)
            continue
        lo = hi = 0
        for v, c in inner.items():
            lp_min, lp_extent = _constant_bounds(inner_loops[v])
            a, b = c * lp_min, c * (lp_min + lp_extent - 1)
            lo, hi = lo + min(a, b), hi + max(a, b)
        out.append(_Dim(d, ws[0][0], ws[0][1], const, inner, lo, hi - lo + 1))
    return out


def _check_consumer(block: Block, buf, roll: _Dim):
    """Along the rolled dimension the consumer reads stride * w + c within the window."""
    for op in [o for o, _, v in accesses(block.op) if v == buf]:
        leaves: list = []
        es = _index_exprs(block, op, leaves)
        lin = linear(es[roll.d]) if es is not None else None
        ok = lin is not None
        if lin is not None:
            coeffs, const = lin.terms, lin.const
            w = [c for p, c in coeffs.items() if leaves[p] == roll.w]
            loops = {Loop(lp).iv: Loop(lp) for lp in analysis.enclosing_loops(block.op)}
            lp_w = loops.get(roll.w)
            rest = [(leaves[p], c) for p, c in coeffs.items() if leaves[p] != roll.w]
            ok = (
                w == [roll.stride]
                and lp_w is not None
                and all(v in loops and analysis.is_ancestor(lp_w.op, loops[v].op) for v, _ in rest)
            )
            if ok:
                lo = hi = const
                for v, c in rest:
                    lp_min, lp_extent = _constant_bounds(loops[v])
                    a, b = c * lp_min, c * (lp_min + lp_extent - 1)
                    lo, hi = lo + min(a, b), hi + max(a, b)
                start = roll.const + roll.lo
                ok = start <= lo and hi <= start + roll.extent - 1
        if not ok:
            raise ScheduleError(
                f"{WHO}: block {block.name!r} reads buffer "
                f"{buffer_name(buf)!r} outside the window the producer "
                f"fills in the same iteration (dimension {roll.d})"
            )


# --- rewrite ----------------------------------------------------------------------------------
def rolling_buffer(block: Block, index: int):
    buf, readers, dims, roll, overlapping = check(block, index)
    _add_predicate(block, overlapping)
    for b in [block] + [Block(r) for r in readers]:
        _make_opaque(b, roll.w)
    old = buf.owner
    mtype = ir.MemRefType(buf.type)
    shape = list(mtype.shape)
    shape[roll.d] = roll.extent
    with ir.InsertionPoint(old), old.location:
        alloc = memref.AllocOp(ir.MemRefType.get(shape, mtype.element_type), [], [])
    for name in old.attributes:
        alloc.attributes[name] = old.attributes[name]
    func = func_of(block.op)
    for op, kind, v in accesses(func):
        if v != buf:
            continue
        pos = (1 if kind == "load" else 2) + roll.d
        with ir.InsertionPoint(op), op.location:
            wrapped = emit_index(
                ir.AffineExpr.get_mod(ir.AffineExpr.get_dim(0), roll.extent), [op.operands[pos]]
            )
        op.operands[pos] = wrapped
        op.operands[0 if kind == "load" else 1] = alloc.result
    analysis.erase(old)


def _add_predicate(block: Block, overlapping: List[_Dim]):
    """`w < m + 1 or overlap <= inner - lo` for each overlapping dimension."""
    dims = block.dims
    n = len(dims)
    cons, eqs = [], []
    if block.predicate is not None:
        cons = [c.expr for c in block.predicate.constraints]
        eqs = [c.is_eq for c in block.predicate.constraints]

    def dim(v):
        return ir.AffineExpr.get_dim(next(k for k, d in enumerate(dims) if d == v))

    for x in sorted(overlapping, key=lambda x: x.d):
        if not all(any(d == v for d in dims) for v in list(x.inner) + [x.w]):
            raise ScheduleError(f"{WHO}: block {block.name!r} is not bound to the loops it runs in")
        inner = ir.AffineExpr.get_constant(-x.lo)
        for v, c in x.inner.items():
            inner = inner + dim(v) * c
        ind = first_iteration_or.indicator(dim(x.w), *_constant_bounds(Loop(x.w.owner.owner)))
        cons.append(ir.AffineExpr.simplify_affine_expr(inner - ind * x.overlap, n, 0))
        eqs.append(False)
    block.set_attr("predicate", ir.IntegerSetAttr.get(ir.IntegerSet.get(n, 0, cons, eqs)))


def _make_opaque(block: Block, w):
    pos = [k for k, d in enumerate(block.dims) if d == w]
    types = block.iter_types
    for k, e in enumerate(block.bindings.results):
        if pos and analysis._mentions(e, pos):
            types[k] = "O"
    block.set_attr("iter_types", ir.ArrayAttr.get([ir.StringAttr.get(t) for t in types]))
