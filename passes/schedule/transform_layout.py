"""transform_layout: change a buffer's layout by an index map, rewriting every access.

transform_layout(C, ("write", 0), lambda i, j: (i // 4, j, i % 4)) on a (16, 16) buffer C::

    C: (16, 16)                            C: (4, 16, 4)
    C[vi, vj] = ...                 ->     C[vi // 4, vj, vi % 4] = ...

`buffer` is ("read" | "write", index) into the block's T.reads / T.writes, or a buffer name.
The map is evaluated on symbolic indices (`+ - *` by constants, `//` and `%` by positive
constants); the new shape is the range of each result over the old shape. A function parameter
changes the function's signature, like TVM. A map may name the function's sizes (`lambda x, y:
x * n + y`, `n` a free name of its text or `Size("n")`, TVM's shape var through the adapter):
each is an affine symbol, a size times an index a semi-affine result, the new shape bounded
over the buffer's box (`n * 32`) and the indices emitted as arith ops over the size.
Legality: the buffer exists; the map takes one argument per dim; every result ranges from 0;
the new shape has as many elements as the old one (a bijective permutation / tiling), or more
with `assume_injective_transform` (TVM's implicit padding: never accessed), or more with a
`pad_value`: the writer then fills the padding (layout_padding.py).
"""

from typing import Callable, List, Tuple, Union, cast

from mlir import ir
from mlir.dialects import memref

from tir_mlir.analysis.shapes import (
    MATCH_SHAPE,
    buffer_shape,
    is_dynamic,
    memref_type,
    size_operands,
)
from tir_mlir.analysis.symbolic import SymExpr, show, substitute, used_symbols
from tir_mlir.dialect.ops import Block
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import index as ix
from tir_mlir.passes.schedule import layout_padding as _padding
from tir_mlir.schedule import lambda_exprs as symbolic
from tir_mlir.analysis.expr_tree import clone_tree, erase_dead
from tir_mlir.analysis.buffer_util import (
    accesses,
    block_reads,
    block_writes,
    buffer_name,
    emit_index,
    func_of,
    is_func_arg,
)
from tir_mlir.passes.schedule.cache_read_write import pick_buffer
from tir_mlir.analysis.structure import comes_before, erase
from tir_mlir.suggest import did_you_mean


def find_buffer(block: Block, buffer) -> ir.Value:
    if isinstance(buffer, str):
        bufs = block_reads(block) + block_writes(block)
        sources = list(map(_source, bufs))
        found = [s for s in sources if buffer_name(s) == buffer]
        if not found:
            names = [buffer_name(s) for s in sources]
            raise ScheduleError(
                f"transform_layout: block {block.name!r} does not access a "
                f"buffer named {buffer!r}{did_you_mean(buffer, names)}; it "
                f"accesses {', '.join(dict.fromkeys(names)) or 'none'}"
            )
        return found[0]
    kind, i = buffer
    if kind not in ("read", "write"):
        raise ScheduleError(
            f"transform_layout: buffer must be ('read'|'write', index) or a name, got {buffer!r}"
        )
    bufs = block_reads(block) if kind == "read" else block_writes(block)
    return _source(pick_buffer(block, bufs, i, "transform_layout", kind))


def _source(buf: ir.Value) -> ir.Value:
    """The buffer a T.match_buffer view (TVM's T.reads/T.writes name it) is a view of."""
    while not isinstance(buf.owner, ir.Block) and buf.owner.name == "memref.subview":
        buf = buf.owner.operands[0]
    return buf


def mtype_shape(mtype: ir.MemRefType) -> list:
    return [None if ir.ShapedType.is_dynamic_size(d) else d for d in mtype.shape]


def _same_dims(a, b) -> bool:
    """Whether the non-unit dimensions of `a` and `b` are the same, in some order."""
    rest = [d for d in b if not (isinstance(d, int) and d == 1)]
    for d in a:
        if isinstance(d, int) and d == 1:
            continue
        k = next((k for k, e in enumerate(rest) if e == d), None)
        if k is None:
            return False
        rest.pop(k)
    return not rest


def _restate_shape(func: ir.Operation, buf: ir.Value, new_shape):
    """The parameter's `tir.match_shape` states its new shape (docs/symbolic.md); a static
    new shape needs none."""
    old = next(
        (
            o.operation
            for o in func.regions[0].blocks[0].operations
            if o.operation.name == MATCH_SHAPE and o.operation.operands[0] == buf
        ),
        None,
    )
    symbols: list = []
    exprs = [
        d.embed(symbols) if isinstance(d, SymExpr) else ir.AffineConstantExpr.get(d)
        for d in new_shape
    ]
    if is_dynamic(new_shape):
        amap = ir.AffineMap.get(0, len(symbols), exprs)
        ip = (
            ir.InsertionPoint(old)
            if old is not None
            else ir.InsertionPoint(list(func.regions[0].blocks[0].operations)[0])
        )
        ir.Operation.create(
            MATCH_SHAPE,
            operands=[buf] + symbols,
            attributes={"shape": ir.AffineMapAttr.get(amap)},
            ip=ip,
            loc=old.location if old is not None else func.location,
        )
    if old is not None:
        erase(old)


def transform_layout(
    block: Block,
    buffer: Union[Tuple[str, int], str],
    index_map: Callable,
    pad_value=None,
    injective: bool = False,
):
    buf = find_buffer(block, buffer)
    shape = buffer_shape(buf)  # ints, and SymExprs for dimensions like `n`
    exprs = symbolic.exprs(index_map, len(shape))
    sizes = symbolic.size_values()  # symbol k of the map: the function's size sizes[k]
    # simplification sees a symbolic dimension as an open range; the new shape is computed
    # from the exact one (`(n, 16)` under `lambda i, j: (j, i)` is `(16, n)`)
    ranges = {k: (0, ix.upper(n) - 1) for k, n in enumerate(shape)}
    exact: ix.SymRanges = {k: (0, n - 1) for k, n in enumerate(shape)}
    new_shape = []
    for e in exprs:
        lo, hi = (
            _size_bounds(e, shape, sizes)
            if used_symbols(e)
            else ix.bounds(
                ix.from_affine(e.maybe_downcast(), [ix.var(k) for k in range(len(shape))], ranges),
                exact,
            )
        )
        if lo != 0:
            raise ScheduleError(
                f"transform_layout: result {e} of the index map starts at {show(lo)}, not 0"
            )
        new_shape.append(hi + 1)
    old_n, new_n = 1, 1
    for a in shape:
        old_n = a * old_n
    for b in new_shape:
        new_n = b * new_n
    symbolic_shape = is_dynamic(shape) or is_dynamic(new_shape)
    if symbolic_shape and old_n != new_n and _same_dims(shape, new_shape):
        new_n = old_n  # a permutation (MLIR keeps `(h - 2) * (w - 2)` as is)
    if symbolic_shape and (pad_value is not None or injective) and old_n != new_n:
        raise ScheduleError(
            "transform_layout: padding a buffer of symbolic shape is not "
            "supported (its padded size depends on the sizes)"
        )
    if (
        len(new_shape) == len(shape)
        and all(a == b for a, b in zip(new_shape, shape))
        and all(e.maybe_downcast() == ir.AffineExpr.get_dim(k) for k, e in enumerate(exprs))
    ):
        return  # the identity (axis separators only): nothing to do
    if any(u.owner.name == "memref.subview" for u in buf.uses):
        raise ScheduleError(
            f"transform_layout: buffer {buffer_name(buf)!r} is accessed through "
            f"T.match_buffer views; only their axis separators can change"
        )
    if old_n != new_n and pad_value is not None:
        with block.op.location:
            _padding.pad_producer(  # (constant shapes: a symbolic one was refused above)
                buf,
                exprs,
                cast(List[int], shape),
                new_shape,
                pad_value,
                lambda: _apply(buf, exprs, new_shape),
            )
        return
    grows = isinstance(old_n, int) and isinstance(new_n, int) and new_n > old_n
    if old_n != new_n and (symbolic_shape or not (injective and grows)):
        raise ScheduleError(
            f"transform_layout: the index map sends shape "
            f"({', '.join(show(a) for a in shape)}) to "
            f"({', '.join(show(b) for b in new_shape)}), which is not a "
            f"bijection"
        )
    with block.op.location:
        _apply(buf, exprs, new_shape, sizes)


def _size_bounds(e: ir.AffineExpr, shape, sizes) -> tuple:
    """(lo, hi) of a map result that names sizes (symbol k: sizes[k], never negative) over
    the buffer's box: sums, constant multiples, a size times a non-negative part
    (`y * n`: semi-affine), and // or % by a constant of a non-negative part."""
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineConstantExpr):
        return e.value, e.value
    if isinstance(e, ir.AffineDimExpr):
        return 0, shape[e.position] - 1
    if isinstance(e, ir.AffineSymbolExpr):
        n = SymExpr.symbol(sizes[e.position])
        return n, n
    assert isinstance(e, ir.AffineBinaryExpr), e
    a = _size_bounds(e.lhs, shape, sizes)
    b = _size_bounds(e.rhs, shape, sizes)
    if isinstance(e, ir.AffineAddExpr):
        return a[0] + b[0], a[1] + b[1]
    if isinstance(e, ir.AffineMulExpr):
        for (lo, hi), (klo, khi) in ((a, b), (b, a)):
            if isinstance(klo, int) and klo == khi:  # a constant factor
                return (lo * klo, hi * klo) if klo >= 0 else (hi * klo, lo * klo)
            if klo == khi and isinstance(lo, int) and lo >= 0:  # a size times a part
                return lo * klo, hi * klo
    c = b[0] if isinstance(b[0], int) and b[0] == b[1] and b[0] > 0 else None
    if c is not None and isinstance(a[0], int) and a[0] >= 0:
        if isinstance(e, ir.AffineFloorDivExpr):
            return a[0] // c, a[1] // c
        if isinstance(e, ir.AffineModExpr):
            return 0, c - 1
    raise ScheduleError(f"transform_layout: cannot bound the index map's result {e}")


def _sizes_as_dims(e: ir.AffineExpr, ndims: int, units=()) -> ir.AffineExpr:
    """e with symbol k as dim ndims + k (the sizes follow the indices among the leaves), and
    the indices in `units` (always 0) as 0, simplified (`v0 * n * 32 + v1 * n` is `v1 * n`
    for a unit v0, as TVM simplifies over the iter vars' ranges)."""
    n = max(used_symbols(e), default=-1) + 1
    if not n:
        return e
    dims = [
        ir.AffineExpr.get_constant(0) if k in units else ir.AffineExpr.get_dim(k)
        for k in range(ndims)
    ]
    syms = [ir.AffineExpr.get_symbol(k) for k in range(n)]
    e = ir.AffineExpr.simplify_affine_expr(substitute(e, dims, syms), ndims, n)
    plain = [ir.AffineExpr.get_dim(k) for k in range(ndims)]
    return substitute(e, plain, [ir.AffineExpr.get_dim(ndims + k) for k in range(n)])


def _unit_indices(values) -> set:
    """Positions of the index values that are always 0: a block's iter var of domain [0, 1)."""
    out = set()
    for k, v in enumerate(values):
        owner = v.owner
        if isinstance(owner, ir.Block) and Block.is_block(owner.owner):
            blk = Block(owner.owner)
            args = list(blk.body.arguments) + (list(blk.init.arguments) if blk.init else [])
            pos = next((j for j, a in enumerate(args) if a == v), None)
            if pos is not None and blk.domains[pos % len(blk.iter_names)] == (0, 1):
                out.add(k)
    return out


def _apply(buf: ir.Value, exprs, new_shape, sizes=()):
    owner = buf.owner
    func = func_of(owner.owner if isinstance(owner, ir.Block) else owner)  # (a parameter's)
    mtype = ir.MemRefType(buf.type)
    new_type = memref_type(new_shape, mtype.element_type)
    uses = [(o, k) for o, k, v in accesses(func) if v == buf]
    if is_func_arg(buf):
        buf.set_type(new_type)
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        inputs = [a.type for a in func.regions[0].blocks[0].arguments]
        func.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(inputs, ftype.results)
        )
        if is_dynamic(new_shape) or is_dynamic(mtype_shape(mtype)):
            _restate_shape(func, buf, new_shape)
        new_buf = buf
    else:
        old = buf.owner
        sizes, after = size_operands(func, new_shape) if is_dynamic(new_shape) else ([], None)
        with ir.InsertionPoint(old), old.location:
            alloc = memref.AllocOp(new_type, sizes, [])
        if after is not None and not comes_before(after, alloc.operation):
            alloc.operation.move_after(after)
        for name in old.attributes:
            alloc.attributes[name] = old.attributes[name]
        new_buf = alloc.result
    for o, kind in uses:
        pos = 1 if kind == "load" else 2
        ops = list(o.operands)
        with ir.InsertionPoint(o), o.location:
            leaves = [lambda v=v: clone_tree(v, o, {}) for v in ops[pos:]]
            units = _unit_indices(ops[pos:]) if sizes else []
            idx = [
                emit_index(_sizes_as_dims(e, len(leaves), units), leaves + list(sizes))
                for e in exprs
            ]
            new = (
                memref.LoadOp(new_buf, idx)
                if kind == "load"
                else memref.StoreOp(ops[0], new_buf, idx)
            )
        if kind == "load":
            o.result.replace_all_uses_with(new.result)
        erase(o)
        for v in ops[pos:]:
            erase_dead(v)
    if not is_func_arg(buf):
        erase(buf.owner)
    # the new indices simplified by the iter vars' ranges, as TVM's
    # (`(vi_o * 16 + vi_i) // 16` is `vi_o` for vi_i < 16)
    from tir_mlir.passes.schedule.decompose_padding import _resimplify

    owners = []
    for o, _, v in accesses(func):
        b = o.parent
        while b is not None and not Block.is_block(b):
            b = b.parent
        if v == new_buf and b is not None and all(b != x for x in owners):
            owners.append(b)
    for b in owners:
        blk = Block(b.operation if hasattr(b, "operation") else b)
        _resimplify(blk, list(blk.iter_vars) + (list(blk.init.arguments) if blk.init else []))
    return new_buf
