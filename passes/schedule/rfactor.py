"""rfactor: factor a reduction over one loop into an intermediate buffer.

rfactor(k_1, factor_axis=0) on `C[vi, vj] += A[vi, vk] * B[vk, vj]`, vk = k_0 * 4 + k_1::

    C_rf = alloc((4, 16, 16))
    for i, j, k_0, k_1:
        block "C_rf": vk_1, vi, vj, vk_0 = S, S, S, R          # k_1 is now spatial
            init: C_rf[vk_1, vi, vj] = 0
            C_rf[vk_1, vi, vj] = C_rf[vk_1, vi, vj] + A[vi, vk_0 * 4 + vk_1] * B[...]
    for i, j, k_1:
        block "C": vk_1, vi, vj = R, S, S                       # the write-back
            init: C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + C_rf[vk_1, vi, vj]

Legality: the loop holds exactly one block, the first block under its outermost loop, and
the outermost loop bound to a reduction iter holds it alone (TVM's loop properties, see
_check_loops); that block is a reduction `W[I] = W[I] op rhs` with an init storing op's identity
(add: 0, mul: 1, max: -inf / lowest value, min: +inf / highest value), W read nowhere else
and I free of reduction iter vars; the loop is bound to reduction iter vars only;
`factor_axis` is in [-(ndim + 1), ndim].
As in TVM, the rf block gets fresh copies of all the loops, before the outermost one; the
original loops (and their handles) are the write-back's, less those bound to reduction iters
other than the rf loop.
An argmax/argmin pair (two buffers updated through `T.Select`) is TVM's tuple reducer
(rfactor_tuple.py). A loop no iter var uses (e.g. from add_unit_loop) becomes a new spatial
iter of the rf block and a reduction iter of the write-back, as in TVM. A let in the update
is inlined (as TVM).
"""

import math

from mlir import ir
from mlir.dialects import memref

from tir_mlir.analysis.shapes import buffer_shape
from tir_mlir.dialect.ops import Block, Loop, body_ops
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis.buffer_util import (
    NotAffine,
    accesses,
    block_binding_exprs,
    buffer_name,
    emit_index,
    enclosing_loops,
    func_of,
    dims_of,
    move_body,
    replace_uses,
    substitute,
    to_affine,
    walk,
)
from tir_mlir.passes.schedule.cache_read_write import make_cache_alloc
from tir_mlir.analysis.structure import erase, move_sid
from tir_mlir.passes.schedule.compute_inline import _check_consumers_covered, _writers_readers
from tir_mlir.analysis.region_cover import iter_var_of
from tir_mlir.passes.schedule.rfactor_tuple import TupleReduction

COMBINERS = {
    "arith.addf": "add",
    "arith.addi": "add",
    "arith.mulf": "mul",
    "arith.muli": "mul",
    "arith.maximumf": "max",
    "arith.maxsi": "max",
    "arith.maxnumf": "max",
    "arith.minimumf": "min",
    "arith.minsi": "min",
    "arith.minnumf": "min",
}


def _identity_ok(kind: str, attr: ir.Attribute) -> bool:
    if isinstance(attr, ir.FloatAttr):
        v = ir.FloatAttr(attr).value
        return {
            "add": v == 0,
            "mul": v == 1,
            "max": v == -math.inf or v <= -3.4e38,
            "min": v == math.inf or v >= 3.4e38,
        }[kind]
    if isinstance(attr, ir.IntegerAttr):
        v, w = ir.IntegerAttr(attr).value, ir.IntegerType(attr.type).width
        return {
            "add": v == 0,
            "mul": v == 1,
            "max": v == -(1 << (w - 1)),
            "min": v == (1 << (w - 1)) - 1,
        }[kind]
    return False


def reduction_of(block: Block):
    """The block's reduction: one buffer (Reduction) or an argmax/argmin pair."""
    err = f"rfactor: block {block.name!r} is not a reduction with a known identity: "
    stores = [o for o in body_ops(block.body) if o.name == "memref.store"]
    if block.init is not None and len(stores) > 1 and not len(walk(block.op, Block.is_block)):
        return TupleReduction(block, stores, err)
    return Reduction(block)


class Reduction:
    """The `W[I] = W[I] op rhs` pattern of a reduction block, with its init."""

    def __init__(self, block: Block):
        self.block = block
        err = f"rfactor: block {block.name!r} is not a reduction with a known identity: "
        if block.init is None:
            raise ScheduleError(err + "it has no init")
        stores = [o for o in body_ops(block.body) if o.name == "memref.store"]
        if len(stores) != 1 or len(walk(block.op, Block.is_block)):
            raise ScheduleError(err + "its body must be one store")
        self.store = stores[0]
        self.buffer = self.store.operands[1]
        self.buffers, self.stores = [self.buffer], [self.store]
        comb = self.store.operands[0].owner
        if isinstance(comb, ir.Block) or comb.name not in COMBINERS:
            raise ScheduleError(err + "the stored value is not add/mul/max/min of the buffer")
        self.combiner, self.kind = comb, COMBINERS[comb.name]
        idx = list(self.store.operands[2:])
        self.self_load = None
        for pos, v in enumerate(comb.operands):
            o = v.owner
            if (
                not isinstance(o, ir.Block)
                and o.name == "memref.load"
                and o.operands[0] == self.buffer
                and self._same(list(o.operands[1:]), idx)
            ):
                self.self_load, self.rhs_pos = o, 1 - pos
        if self.self_load is None:
            raise ScheduleError(
                err + f"the update does not read "
                f"{buffer_name(self.buffer)}[...] at the stored index"
            )
        loads = [o for o, k, v in accesses(block.op) if k == "load" and v == self.buffer]
        if loads != [self.self_load]:
            raise ScheduleError(err + f"{buffer_name(self.buffer)} is read outside the update")
        init_stores = [o for o in body_ops(block.init) if o.name == "memref.store"]
        if len(init_stores) != 1 or init_stores[0].operands[1] != self.buffer:
            raise ScheduleError(err + "the init must be one store to the reduced buffer")
        c = init_stores[0].operands[0].owner
        if any("tir.let_name" in o.attributes for o in body_ops(block.init)):
            raise ScheduleError(
                err + "the init must be a single store (it binds a value with a let)"
            )
        init_idx = list(init_stores[0].operands[2:])
        try:
            same_index = [to_affine(v, list(block.init.arguments)) for v in init_idx] == [
                to_affine(v, list(block.iter_vars)) for v in idx
            ]
        except NotAffine:
            same_index = False
        if not same_index:
            raise ScheduleError(
                err + f"the init and the update store "
                f"{buffer_name(self.buffer)} at different indices"
            )
        if (
            isinstance(c, ir.Block)
            or c.name != "arith.constant"
            or not _identity_ok(self.kind, c.attributes["value"])
        ):
            raise ScheduleError(err + f"the init value is not the identity of {self.kind}")
        self.init_const = c
        leaves = list(block.iter_vars)
        self.indices = [to_affine(v, leaves) for v in idx]  # over the iter vars
        if len(leaves) != len(block.iter_vars):
            raise ScheduleError(err + "the store index uses values outside the iter vars")

    def finish_rf(self, rfb: Block, rf_bufs):
        """The update is one store: a let in it is inlined (TVM rebuilds it from the
        reducer)."""
        for op in body_ops(rfb.body):
            if "tir.let_name" in op.attributes:
                del op.attributes["tir.let_name"]

    def drop_combine(self, rfb: Block, rf_bufs):
        """The rf block of a wholly factored reduction stores the rhs alone."""
        comb = self.combiner
        acc = comb.operands[1 - self.rhs_pos].owner
        comb.result.replace_all_uses_with(comb.operands[self.rhs_pos])
        erase(comb)
        erase(acc)

    def fill_writeback(self, wb: Block, rf_bufs, spatial, axis, loc):
        """init: W[I] = identity; body: W[I] = W[I] op W_rf[I with the rf iter at axis]."""
        init = wb.init
        assert init is not None  # the write-back block is built with an init
        for region_block, is_init in ((init, True), (wb.body, False)):
            args, rf_buf = list(region_block.arguments), rf_bufs[0]
            # old iter var k (spatial) is new arg 1 + spatial.index(k)
            sub = [
                _dim(1 + spatial.index(k)) if k in spatial else ir.AffineExpr.get_constant(0)
                for k in range(len(self.block.iter_types))
            ]
            with ir.InsertionPoint.at_block_terminator(region_block), loc:

                def idx():
                    return [emit_index(substitute(e, sub), args) for e in self.indices]

                if is_init:
                    c = self.init_const.clone(
                        ip=ir.InsertionPoint.at_block_terminator(region_block)
                    )
                    memref.StoreOp(c.result, self.buffer, idx())
                    continue
                cur = memref.LoadOp(self.buffer, idx()).result
                i = idx()
                part = memref.LoadOp(rf_buf, i[:axis] + [args[0]] + i[axis:]).result
                operands = [cur, part] if self.rhs_pos == 1 else [part, cur]
                attrs = {
                    n: self.combiner.attributes[n]
                    for n in self.combiner.attributes
                    if n != "tir.let_name"
                }
                res = ir.Operation.create(
                    self.combiner.name,
                    results=[cur.type],
                    operands=operands,
                    attributes=attrs,
                    loc=self.combiner.location,
                )
                memref.StoreOp(res.result, self.buffer, idx())

    def _same(self, a, b) -> bool:
        leaves = list(self.block.iter_vars)
        try:
            return [to_affine(v, leaves) for v in a] == [to_affine(v, leaves) for v in b]
        except NotAffine:
            return False


def rfactor(loop: Loop, factor_axis: int) -> Block:
    """Returns the rf block; the write-back block keeps the original block's handle."""
    with loop.op.location:
        return _rfactor(loop, factor_axis)


def _rfactor(loop: Loop, factor_axis: int) -> Block:
    if loop.kind != "serial":
        raise ScheduleError(
            f"rfactor: The input loop {loop.name!r} of rfactor is required to "
            f"be `Serial`. However, the kind of {loop.name!r} is `{loop.kind}`"
        )
    blocks = walk(loop.op, Block.is_block)
    if len(blocks) != 1:
        raise ScheduleError(
            f"rfactor: loop {loop.name!r} must hold exactly one block, found {len(blocks)}"
        )
    block = Block(blocks[0])
    red = reduction_of(block)
    loops = enclosing_loops(block.op)
    ivs = [l.iv for l in loops]
    leaves = list(ivs)
    try:
        binds = block_binding_exprs(block, leaves)
    except NotAffine as e:
        raise ScheduleError(f"rfactor: bindings of block {block.name!r} are not affine ({e})")
    if len(leaves) != len(ivs):
        raise ScheduleError(
            f"rfactor: block {block.name!r} is bound to values other than its enclosing loops"
        )
    rf = next(i for i, l in enumerate(loops) if l.op == loop.op)
    types, names, doms = block.iter_types, block.iter_names, block.domains
    _check_loops(block, loops, binds, rf)
    _check_region_cover(block, red)
    users = [k for k, e in enumerate(binds) if _uses(e, rf)]
    if any(_uses_any(e, [k for k, t in enumerate(types) if t != "S"]) for e in red.indices):
        raise ScheduleError(
            f"rfactor: block {block.name!r} stores at an index that uses a reduction iter var"
        )
    shape = buffer_shape(red.buffers[0])
    if not -(len(shape) + 1) <= factor_axis <= len(shape):
        raise ScheduleError(
            f"rfactor: factor_axis {factor_axis} is out of range for buffer "
            f"{buffer_name(red.buffers[0])!r} of rank {len(shape)}"
        )
    axis = factor_axis % (len(shape) + 1)

    # --- check done: build ----------------------------------------------------------------
    loc = block.op.location
    split_loops = sorted({d for k in users for d in dims_of(binds[k])})
    # rf block iters: (name, type, domain, binding over loop dims); value of each old iter var
    rf_iters = [("v" + loops[rf].name, "S", (loops[rf].min, loops[rf].extent), _dim(rf))]
    # old iter k -> the position of the rf iter it becomes, or its binding (a split loop's)
    old_value: dict[int, int | ir.AffineExpr] = {}
    for k, t in enumerate(types):
        if k in users:
            old_value[k] = binds[k]
            continue
        old_value[k] = len(rf_iters)
        rf_iters.append((names[k], t, doms[k], binds[k]))
    # the non-rf loops of split reductions become reduction iters, after the spatial ones
    for d in split_loops:
        if d != rf:
            rf_iters.append(("v" + loops[d].name, "R", (loops[d].min, loops[d].extent), _dim(d)))
    loop_iter = {rf: 0}
    loop_iter.update(
        {
            d: next(
                i
                for i, it in enumerate(rf_iters)
                if it[0] == "v" + loops[d].name and it[3] == _dim(d)
            )
            for d in split_loops
            if d != rf
        }
    )
    # with no reduction iter left (the whole reduction was factored), the rf block is a plain
    # spatial block `W_rf[...] = rhs`, without init (as TVM)
    reduces = any(it[1] == "R" for it in rf_iters)
    rf_shape = shape[:axis] + [loops[rf].extent] + shape[axis:]
    func = func_of(block.op)
    rf_bufs = [
        make_cache_alloc(func, b, buffer_name(b) + "_rf", "global", loc, shape=rf_shape)
        for b in red.buffers
    ]

    # the T.where, over loop positions: all of it on the rf block, the part over the kept
    # loops on the write-back block
    pred = []
    if block.predicate is not None:
        loop_dims = [to_affine(d, leaves) for d in block.dims]
        pred = [(substitute(c.expr, loop_dims), c.is_eq) for c in block.predicate.constraints]
    # the rf nest: fresh copies of all the block's loops, before the outermost one (as TVM;
    # the loops themselves, and their handles, stay with the write-back)
    top = loops[0].op
    ip = ir.InsertionPoint(top)
    rf_loops = []
    with loc:
        for l in loops:
            nl = _copy_loop(l, loops, rf_loops, ip)
            rf_loops.append(nl)
            ip = ir.InsertionPoint.at_block_terminator(nl.body)
        rfb = _new_block(
            block,
            block.name + "_rf",
            rf_iters,
            [l.iv for l in rf_loops],
            None,
            ip=ip,
            copy_sid=False,
            has_init=reduces,
            predicate=_integer_set(len(ivs), pred, len(block.symbols)),
        )
    # move body and init over, then express the old iter vars through the new ones
    for src, dst in zip(block.region_blocks, rfb.region_blocks):  # (the init if it reduces)
        move_body(src, dst)
        new_args = list(dst.arguments)
        for k, old in enumerate(src.arguments):
            payload = old_value[k]
            if isinstance(payload, int):
                old.replace_all_uses_with(new_args[payload])
            else:
                sub = [
                    ir.AffineExpr.get_dim(loop_iter[d])
                    if d in loop_iter
                    else ir.AffineExpr.get_constant(0)
                    for d in range(len(loops))
                ]
                e = substitute(payload, sub)
                replace_uses(old, lambda _u, e=e, a=new_args: emit_index(e, a))
        for op, kind, v in accesses(rfb.op):
            rf_buf = next((r for b, r in zip(red.buffers, rf_bufs) if b == v), None)
            if rf_buf is not None:
                pos = 1 if kind == "load" else 2
                ops = list(op.operands)
                with ir.InsertionPoint(op), op.location:
                    new_idx = ops[pos : pos + axis] + [new_args[0]] + ops[pos + axis :]
                    new = (
                        memref.LoadOp(rf_buf, new_idx)
                        if kind == "load"
                        else memref.StoreOp(ops[0], rf_buf, new_idx)
                    )
                if kind == "load":
                    op.result.replace_all_uses_with(new.result)
                erase(op)

    # write-back nest (as TVM): every loop but those bound to reduction iters, the rf loop kept
    spatial = [k for k, t in enumerate(types) if t == "S"]
    keep = [
        d
        for d in range(len(loops))
        if d == rf or not any(_uses(binds[k], d) for k, t in enumerate(types) if t != "S")
    ]
    remap = {d: i for i, d in enumerate(keep)}
    wb_iters: list[tuple] = [
        ("v" + loops[rf].name, "R", (loops[rf].min, loops[rf].extent), _dim(remap[rf]))
    ]
    for k in spatial:
        wb_iters.append(
            (
                names[k],
                "S",
                doms[k],
                substitute(
                    binds[k],
                    [
                        _dim(remap[d]) if d in remap else ir.AffineExpr.get_constant(0)
                        for d in range(len(loops))
                    ],
                ),
            )
        )
    to_kept = [
        _dim(remap[d]) if d in remap else ir.AffineExpr.get_constant(0) for d in range(len(loops))
    ]
    wb_pred = [(substitute(e, to_kept), eq) for e, eq in pred if dims_of(e) <= set(remap)]
    with loc:
        wb = _new_block(
            block,
            block.name,
            wb_iters,
            [loops[d].iv for d in keep],
            block.op,
            copy_sid=True,
            predicate=_integer_set(len(keep), wb_pred, len(block.symbols)),
        )
    red.fill_writeback(wb, rf_bufs, spatial, axis, loc)
    red.finish_rf(rfb, rf_bufs)
    if not reduces:  # W_rf[...] = rhs (after the write-back cloned the combiner)
        red.drop_combine(rfb, rf_bufs)
    erase(block.op)
    # the loops bound to reduction iters (but the rf loop) leave the write-back nest; by
    # _check_loops they hold the block alone
    for d in reversed(range(len(loops))):
        if d not in keep:
            for o in body_ops(loops[d].body):
                o.move_before(loops[d].op)
            erase(loops[d].op)
    return rfb


def _copy_loop(l: Loop, loops, copies, ip) -> Loop:
    """A copy of loop `l` at `ip`; bounds on outer loops (`range(i + 1)`) read the copies."""
    bounds = None
    if not l.constant_bounds:

        def on_copies(values):
            return [next((c.iv for o, c in zip(loops, copies) if o.iv == v), v) for v in values]

        (lm, lops), (um, uops) = l.lower_bound, l.upper_bound
        bounds = ((lm, on_copies(lops)), (um, on_copies(uops)))
    return Loop.build(
        l.name,
        0 if bounds else l.extent,
        min=0 if bounds else l.min,
        kind=l.kind,
        thread=l.thread,
        annotations=l.annotations or None,
        index_dtype=l.index_dtype,
        bounds=bounds,
        loc=l.op.location,
        ip=ip,
    )


def _check_loops(block: Block, loops, binds, rf: int):
    """TVM's loop properties: the block is the first block under the outermost loop; no loop is
    touched by both spatial and reduction iters, the rf loop by no spatial one; the outermost
    loop touched by a reduction iter holds this block alone, and no loop under it with an
    extent other than 1 is unbound."""
    if Block(walk(loops[0].op, Block.is_block)[0]).op != block.op:
        raise ScheduleError(
            f"rfactor: The first child block of the outermost loop "
            f"{loops[0].name!r} is not the reduction block."
        )
    types = block.iter_types
    met_reduction = False
    for d, l in enumerate(loops):
        touched = {types[k] for k, e in enumerate(binds) if _uses(e, d)}
        if {"S", "R"} <= touched:
            raise ScheduleError(
                f"rfactor: It is not allowed that the loop {l.name!r} is "
                f"touched by both some data parallel block iters and some "
                f"reduction block iters"
            )
        if "S" in touched:
            if d == rf:
                raise ScheduleError(
                    f"rfactor: The loop to be applied rfactor is {l.name!r}, "
                    f"which is required not to be touched by any data parallel "
                    f"block iter of the block below. However, some of the "
                    f"block's data parallel block iters touch this loop"
                )
        elif "R" in touched:
            if not met_reduction and len(walk(l.op, Block.is_block)) != 1:
                raise ScheduleError(
                    f"rfactor: The loop {l.name!r} is required to have only "
                    f"one child block, which is block {block.name!r}"
                )
            met_reduction = True
        elif met_reduction and l.extent != 1:
            raise ScheduleError(
                f"rfactor: The loop {l.name!r} has extent greater than one, "
                f"and is not bound to any block iter. Therefore it shouldn't "
                f"appear under a reduction loop"
            )


def _check_region_cover(block: Block, red: Reduction | TupleReduction):
    """TVM's stage pipeline: what other blocks read of the reduced buffer, this block writes
    (its only writer)."""
    for store in red.stores:
        idx = list(store.operands[2:])
        if any(iter_var_of(block, v) is None for v in idx):
            continue
        writers, readers = _writers_readers(func_of(block.op), store.operands[1], block.op)
        if not writers:
            _check_consumers_covered(block, idx, store.operands[1], readers, "rfactor")


def _dim(d):
    return ir.AffineExpr.get_dim(d)


def _uses(e, d) -> bool:
    return d in dims_of(e)


def _uses_any(e, ds) -> bool:
    return bool(dims_of(e) & set(ds))


def _integer_set(n: int, cons, n_symbols: int = 0):
    if not cons:
        return None
    return ir.IntegerSet.get(n, n_symbols, [e for e, _ in cons], [eq for _, eq in cons])


def _new_block(
    old: Block, name, iters, dims, before, ip=None, copy_sid=False, has_init=True, predicate=None
) -> Block:
    symbols = old.symbols  # (the predicate's symbols are the old block's)
    bindings = ir.AffineMap.get(len(dims), len(symbols), [it[3] for it in iters])
    nb = Block.build(
        name,
        [it[0] for it in iters],
        [it[1] for it in iters],
        [it[2] for it in iters],
        bindings,
        dims,
        symbols=symbols,
        predicate=predicate,
        annotations=old.annotations or None,
        has_init=has_init,
        loc=old.op.location,
        ip=ip or ir.InsertionPoint(before),
    )
    if copy_sid:
        move_sid(old.op, nb.op)
    return nb
