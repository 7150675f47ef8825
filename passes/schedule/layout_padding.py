"""transform_layout with a pad_value, where the map pads the buffer: its producer is rewritten
to run over the new shape and write the pad value in the padding (TVM 0.21's output):

    B = T.alloc_buffer((14,))                   B = T.alloc_buffer((4, 4))
    for i in range(14):                  ==>    for i, j in T.grid(4, 4):
        block: vi = remap("S", [i])                 block: vi, vj = remap("SS", [i, j])
            B[vi] = A[vi]                               B[vi, vj] = T.if_then_else(
                                                            vi == 3 and 2 <= vj, 0, A[vi * 4 + vj])
    transform_layout(block, "B", lambda i: [i // 4, i % 4], pad_value=0)

Supported (else refused): each old dimension maps to one result `d + a` or to a pair
`(d + a) // c`, `(d + a) % c`, other results constants; the usual form (one padded `d // c`,
`d % c` pair) tests TVM's `new[div] == q and r <= new[mod]`, the others whether an old index
leaves its range. The buffer's only writer is rewritten in place when it stores the buffer
at its spatial iter vars, one per dimension, each bound to its own loop, those loops the
outermost of the block's nest, each the only child of the one above; an opaque writer under
loops indexing the buffer directly has those loops rewritten in place (every store of the
buffer under them padded, the stored value computed only outside the padding); otherwise
(other effects, no loop) it is kept, its accesses mapped, and a block `buffer_<name>_padding`
after its nest writes the padding under TVM's `T.where` (the usual form only: a `T.where`
cannot say `or`). The pad value is a constant of the buffer's dtype or (int buffers) an
affine lambda of the new indices. TVM's assumption for an input (`T.assume`) is not written
here.
"""

from typing import List, NoReturn, Optional, Tuple

from mlir import ir
from mlir.dialects import arith, memref, scf

from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.dtypes import dtype_of, is_float, mlir_type
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import structure as analysis
from tir_mlir.schedule import lambda_exprs as symbolic
from tir_mlir.analysis.structure import erase, op_of
from tir_mlir.analysis.buffer_util import (
    accesses,
    buffer_name,
    emit_index,
    func_of,
    move_body,
    replace_uses,
)
from tir_mlir.analysis.linear import linear
from tir_mlir.analysis.expr_tree import erase_dead

WHO = "transform_layout"


def _refuse(why: str) -> NoReturn:
    raise ScheduleError(f"{WHO}: pad_value: {why} (TVM's other padded forms are not supported)")


def inverse(exprs: List[ir.AffineExpr], shape: List[int], new_shape: List[int]):
    """(old dim -> affine expr of the new dims, the padding test). Results: `d + a`,
    `(d + a) // c` with `(d + a) % c`, or constants. The padding test is TVM's usual form
    `("tile", div result, mod result, q, r)` (padding: `new[div] == q and r <= new[mod]`) for
    one padded `d // c, d % c` pair, else `("bounds", [(expr, lo, hi)])`: padding where an
    old index or a constant result leaves its range."""
    parts = {d: [] for d in range(len(shape))}
    consts = []
    for k, e in enumerate(exprs):
        e = e.maybe_downcast()
        if isinstance(e, ir.AffineConstantExpr):
            consts.append((k, e.value))
            continue
        kind, inner, c = "id", e, 1
        if isinstance(e, (ir.AffineFloorDivExpr, ir.AffineModExpr)):
            rhs = e.rhs.maybe_downcast()
            if isinstance(rhs, ir.AffineConstantExpr):
                kind = "div" if isinstance(e, ir.AffineFloorDivExpr) else "mod"
                inner, c = e.lhs, rhs.value
        lin = linear(inner)
        if lin is None or len(lin.terms) != 1 or list(lin.terms.values()) != [1]:
            _refuse(f"index map result {e} is not d + a, (d + a) // c, (d + a) % c or a constant")
        ((d, _),) = lin.terms.items()
        parts[d].append((kind, k, c, lin.const))
    inv, tiles, checks = [], [], []
    for d, ps in parts.items():
        kinds = sorted(p[0] for p in ps)
        if kinds == ["id"]:
            _, k, _, off = ps[0]
            e = ir.AffineExpr.get_dim(k) - off
        elif kinds == ["div", "mod"] and ps[0][2] == ps[1][2] and ps[0][3] == ps[1][3]:
            c, off = ps[0][2], ps[0][3]
            div = next(k for kind, k, _, _ in ps if kind == "div")
            mod = next(k for kind, k, _, _ in ps if kind == "mod")
            e = ir.AffineExpr.get_dim(div) * c + ir.AffineExpr.get_dim(mod) - off
            if off == 0 and shape[d] % c:
                tiles.append((div, mod, shape[d] // c, shape[d] % c))
        else:
            _refuse(f"dimension {d} is not mapped to d + a or to a (d + a) // c, (d + a) % c pair")
        inv.append(e)
        checks.append((e, 0, shape[d] - 1))
    checks += [(ir.AffineExpr.get_dim(k), v, v) for k, v in consts if new_shape[k] > 1]
    if (
        len(tiles) == 1
        and all(off == 0 for ps in parts.values() for *_, off in ps)
        and len(checks) == len(shape)
    ):
        n = sum(1 for d, ps in parts.items() if len(ps) == 2 and shape[d] % ps[0][2])
        if n == 1:
            return inv, ("tile",) + tiles[0]
    return inv, ("bounds", checks)


def _writer(buf: ir.Value) -> Block:
    func = func_of(buf.owner.owner if isinstance(buf.owner, ir.Block) else buf.owner)
    writers = [
        o
        for o in analysis.walk(func)
        if analysis.is_block(o)
        and not analysis.blocks_under(o)
        and any(k == "store" and v == buf for _, k, v in accesses(o))
    ]
    if len(writers) != 1:
        _refuse("the buffer has no single writer block (an input gets an assumption in TVM)")
    return Block(writers[0])


def pad_producer(buf: ir.Value, exprs, shape: List[int], new_shape: List[int], pad_value, apply):
    """Rewrite the writer of `buf` over `new_shape`; `apply` rewrites every access of the
    buffer by the map (transform_layout's) and returns the new buffer."""
    inv, padding = inverse(exprs, shape, new_shape)
    w = _writer(buf)
    m = len(shape)
    dtype = _dtype(buf)
    _check_pad(pad_value, dtype)
    ivs = list(w.iter_vars)
    loops = analysis.enclosing_loops(w.op)
    problem, order = _in_place_problem(w, buf, shape, loops)
    if problem is not None and _opaque_in_place(
        w, buf, shape, new_shape, inv, padding, pad_value, dtype, apply
    ):
        return
    if problem is not None:  # TVM's fallback: the padding written by a block after it
        if padding[0] != "tile":
            _refuse(problem + ", and TVM's padding block after it would need a T.where with `or`")
        return _pad_after(w, buf, new_shape, padding, pad_value, dtype, apply)
    assert order is not None  # (None only with a problem)
    binds = w.bindings.results
    new_buf = apply()

    # --- new loops over the new shape, the rest of the nest moved inside --------------------------
    loc, top = w.op.location, loops[0]
    ip, news = ir.InsertionPoint(top), []
    for k, n in enumerate(new_shape):
        lp = Loop.build(
            f"axis{k}", n, index_dtype=Loop(loops[0]).index_dtype, loc=loc, ip=ip
        )  # TVM's names for the padded nest
        news.append(lp)
        ip = ir.InsertionPoint(analysis.terminator(lp.body))
    move_body(Loop(loops[m - 1]).body, news[-1].body)
    rest = [n for n in range(len(ivs)) if n not in order]
    k_new = len(new_shape)
    names = [f"v_axis{k}" for k in range(k_new)]
    used = sorted({p for n in rest for p in _dims_of(binds[n])})
    if any(w.dims[p] == Loop(lp).iv for p in used for lp in loops[:m]):
        _refuse(f"block {w.name!r} binds another iter var to the buffer's loops")
    dims = [lp.iv for lp in news] + [w.dims[p] for p in used]
    to_new = ir.AffineMap.get(
        len(dims),
        0,
        [
            ir.AffineExpr.get_dim(k_new + used.index(p))
            if p in used
            else ir.AffineExpr.get_constant(0)
            for p in range(len(w.dims))
        ],
    )
    results = [ir.AffineExpr.get_dim(k) for k in range(k_new)] + [
        binds[n].compose(to_new) for n in rest
    ]
    new = Block.build(
        w.name,
        names + [w.iter_names[n] for n in rest],
        ["S"] * k_new + [w.iter_types[n] for n in rest],
        [(0, n) for n in new_shape] + [w.domains[n] for n in rest],
        ir.AffineMap.get(len(dims), 0, results),
        dims,
        annotations=w.annotations or None,
        has_init=w.init is not None,
        loc=loc,
        ip=ir.InsertionPoint(w.op),
    )
    analysis.move_sid(w.op, new.op)  # handles to the writer stay valid
    for old_region, new_region in zip(w.region_blocks, new.region_blocks):
        args = list(new_region.arguments)
        for d, n in enumerate(order):
            for use in list(old_region.arguments[n].uses):
                user = use.owner
                with ir.InsertionPoint(user), user.location:
                    user.operands[use.operand_number] = emit_index(inv[d], args[:k_new])
        for j, n in enumerate(rest):
            old_region.arguments[n].replace_all_uses_with(args[k_new + j])
        move_body(old_region, new_region)
        _pad_stores(new_region, new_buf, args[:k_new], padding, pad_value, dtype)
    erase(w.op)
    erase(top)
    from tir_mlir.passes.schedule.decompose_padding import _resimplify

    _resimplify(new, list(new.iter_vars) + (list(new.init.arguments) if new.init else []))


def _opaque_in_place(
    w: Block, buf, shape, new_shape, inv, padding, pad_value, dtype, apply
) -> bool:
    """An opaque writer (no iter vars) under loops that index the buffer directly
    (`for i: ... B[i] ...`): as TVM, those loops are rewritten in place over the new shape,
    the buffer accessed at the new loop vars, other uses of the old ones at the inverse, the
    stores padded by T.if_then_else. False (nothing changed) when the form does not fit."""
    m = len(shape)
    loops = analysis.enclosing_loops(w.op)
    if w.iter_vars or len(loops) < m:
        return False
    loops = [Loop(lp) for lp in loops[:m]]
    if any(lp.min != 0 or lp.extent != n for lp, n in zip(loops, shape)) or any(
        analysis.loop_children(a.op) != [b.op] for a, b in zip(loops, loops[1:])
    ):
        return False
    ivs = [lp.iv for lp in loops]
    for op, k, v in accesses(loops[0].op):
        if v == buf and list(op.operands)[1 if k == "load" else 2 :] != ivs:
            return False
    new_buf = apply()
    top, loc = loops[0].op, w.op.location
    ip, news = ir.InsertionPoint(top), []
    for k, n in enumerate(new_shape):
        lp = Loop.build(f"axis{k}", n, index_dtype=loops[0].index_dtype, loc=loc, ip=ip)
        news.append(lp)
        ip = ir.InsertionPoint(analysis.terminator(lp.body))
    move_body(loops[-1].body, news[-1].body)
    new_ivs = [lp.iv for lp in news]
    # the buffer at the new loop vars (the map of the inverse), then the rest at the inverse
    for op, k, v in accesses(news[0].op):
        if v == new_buf:
            pos = 1 if k == "load" else 2
            old_idx = list(op.operands)[pos:]
            for j, x in enumerate(new_ivs):
                op.operands[pos + j] = x
            for x in old_idx:
                erase_dead(x)
    for d, iv in enumerate(ivs):
        replace_uses(iv, lambda _u, e=inv[d]: emit_index(e, new_ivs))
    _pad_stores(news[-1].body, new_buf, new_ivs, padding, pad_value, dtype)
    erase(top)
    return True


def _in_place_problem(w: Block, buf, shape, loops) -> Tuple[Optional[str], Optional[List[int]]]:
    """(why the writer cannot be rewritten over the new shape in place, or None; the iter var
    of each buffer dimension)."""
    m, ivs = len(shape), list(w.iter_vars)
    own: List[list] = []
    for op, k, v in accesses(w.op):
        if v != buf:
            continue
        idx = list(op.operands)[1 if k == "load" else 2 :]
        pos = [next((n for n, a in enumerate(ivs) if a == x), None) for x in idx]
        if None in pos and w.init is not None:  # the init's own copy of the iter vars
            pos = [next((n for n, a in enumerate(w.init.arguments) if a == x), None) for x in idx]
        if None in pos or len(set(pos)) != m:
            return f"block {w.name!r} does not access the buffer at distinct iter vars", None
        own.append(pos)
    if len({tuple(p) for p in own}) != 1:
        return f"block {w.name!r} accesses the buffer at several indices", None
    if w.predicate is not None:
        return f"block {w.name!r} has a T.where", None
    if any(k == "store" and v != buf for _, k, v in accesses(w.op)):
        return f"block {w.name!r} writes other buffers too", None
    order = own[0]  # iter var of each buffer dimension
    binds = w.bindings.results
    for d, n in enumerate(order):
        e = binds[n].maybe_downcast()
        if (
            w.iter_types[n] != "S"
            or w.domains[n] != (0, shape[d])
            or not isinstance(e, ir.AffineDimExpr)
            or len(loops) <= d
            or w.dims[e.position] != Loop(loops[d]).iv
        ):
            return (
                f"block {w.name!r}: dimension {d} of the buffer is not its spatial iter "
                f"var bound to loop {d} of its nest"
            ), None
        if Loop(loops[d]).min != 0 or Loop(loops[d]).extent != shape[d]:
            return "the writer's loops do not run over the buffer", None
    for outer, inner in zip(loops[:m], loops[1:m]):
        if analysis.loop_children(outer) != [inner]:
            return "the writer's loops are not a perfect nest", None
    return None, order


def _pad_after(w: Block, buf, new_shape, padding, pad_value, dtype, apply):
    """TVM's form for a writer with other effects: the writer kept (its accesses mapped), the
    padding written by a block `buffer_<name>_padding` after its nest, over the new shape,
    `T.where(axis<div> == q and r <= axis<mod>)`."""
    name = buffer_name(buf)
    new_buf = apply()
    loops = analysis.enclosing_loops(w.op)
    top = loops[0] if loops else w.op
    loc, k_new = w.op.location, len(new_shape)
    ip, news = ir.InsertionPoint(top), []
    for k, n in enumerate(new_shape):
        lp = Loop.build(f"axis{k}", n, loc=loc, ip=ip)
        news.append(lp)
        ip = ir.InsertionPoint(analysis.terminator(lp.body))
    _, div, mod, q, r = padding
    d = ir.AffineExpr.get_dim
    pred = ir.IntegerSet.get(k_new, 0, [d(div) - q, d(mod) - r], [True, False])
    blk = Block.build(
        f"buffer_{name}_padding",
        [f"v_axis{k}" for k in range(k_new)],
        ["S"] * k_new,
        [(0, n) for n in new_shape],
        ir.AffineMap.get(k_new, 0, [d(k) for k in range(k_new)]),
        [lp.iv for lp in news],
        predicate=pred,
        loc=loc,
        ip=ip,
    )
    with ir.InsertionPoint(analysis.terminator(blk.body)), loc:
        args = list(blk.body.arguments)
        memref.StoreOp(_pad_const(pad_value, mlir_type(dtype), dtype, args), new_buf, args)
    news[0].op.move_after(top)


def _dims_of(e: ir.AffineExpr) -> set:
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineDimExpr):
        return {e.position}
    if isinstance(e, ir.AffineBinaryExpr):
        return _dims_of(e.lhs) | _dims_of(e.rhs)
    return set()


def _dtype(buf: ir.Value) -> str:
    return dtype_of(ir.MemRefType(buf.type).element_type)


def _check_pad(pad, dtype: str):
    if callable(pad) or isinstance(pad, str):
        if is_float(dtype):
            _refuse("a pad value lambda of a float buffer")
        return
    given = getattr(pad, "dtype", None)  # a typed constant (TVM's IntImm / FloatImm)
    value = getattr(pad, "value", pad)
    if given is not None and str(given) != dtype or isinstance(value, float) != is_float(dtype):
        raise ScheduleError(f"{WHO}: the pad value {pad!r} must have the buffer's dtype {dtype}")


def _pad_stores(region: ir.Block, buf: ir.Value, args, padding, pad, dtype):
    for op in [o for o in _ops(region) if o.name == "memref.store" and o.operands[1] == buf]:
        with ir.InsertionPoint(op), op.location:
            cond = _padding_cond(padding, args)
            t = mlir_type(dtype)
            sel = scf.IfOp(cond, [t], has_else=True)
            with ir.InsertionPoint(sel.then_block):
                scf.YieldOp([_pad_const(pad, t, dtype, args)])
            value = op.operands[0]
            else_block = sel.else_block
            assert else_block is not None  # built with has_else
            with ir.InsertionPoint(else_block):
                y = scf.YieldOp([value])
            op.operands[0] = sel.results[0]
            _sink(value, y.operation, op)


def _sink(value: ir.Value, before: ir.Operation, store: ir.Operation):
    """Move the expression computing `value` (its ops beside `store` that only it uses)
    before `before`: the stored value is computed in the else branch only, as T.if_then_else
    evaluates it (a load past the old shape in the padding never runs)."""
    block = ir.InsertionPoint(store).block
    tree, todo = [], [value]
    while todo:
        v = todo.pop()
        o = v.owner
        if (
            isinstance(o, ir.Block)
            or o.operation.parent != store.parent
            or "tir.let_name" in o.attributes
            or len(o.regions)
            or sum(1 for r in o.results for _ in r.uses) != 1
        ):
            continue
        tree.append(o.operation)
        todo += list(o.operands)
    order = [op_of(o) for o in block.operations]
    for o in sorted(tree, key=lambda o: order.index(op_of(o))):
        o.move_before(before)


def _padding_cond(padding, args) -> ir.Value:
    """Whether the new index `args` is padding (see inverse)."""
    index = ir.IndexType.get()
    if padding[0] == "tile":
        _, div, mod, q, r = padding
        return arith.andi(
            arith.cmpi(arith.CmpIPredicate.eq, args[div], arith.constant(index, q)),
            arith.cmpi(arith.CmpIPredicate.sle, arith.constant(index, r), args[mod]),
        )
    cond = None
    for e, lo, hi in padding[1]:
        for pred, bound in ((arith.CmpIPredicate.slt, lo), (arith.CmpIPredicate.sgt, hi)):
            c = arith.cmpi(pred, emit_index(e, args), arith.constant(index, bound))
            cond = c if cond is None else arith.ori(cond, c)
    assert cond is not None  # a "bounds" padding test has a check (else nothing pads)
    return cond


def _pad_const(pad, t, dtype: str, args) -> ir.Value:
    if callable(pad) or isinstance(pad, str):
        fn = symbolic.from_text(pad)
        (e,) = symbolic.exprs(fn, len(args))
        const = e.maybe_downcast()
        if isinstance(const, ir.AffineConstantExpr):  # (as the constant a trace replays)
            return arith.constant(t, const.value)
        return arith.index_cast(t, emit_index(e, args))
    value = getattr(pad, "value", pad)
    return arith.constant(t, float(value) if is_float(dtype) else int(value))


def _ops(block: ir.Block) -> list:
    out = []
    for o in block.operations:
        out.append(o.operation)
        for region in o.operation.regions:
            for b in region.blocks:
                out += _ops(b)
    return out
