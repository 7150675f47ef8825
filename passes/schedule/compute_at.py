"""compute_at / reverse_compute_at: move a block under a loop, covering what is needed there.

compute_at(B, j_0): the producer B is computed, inside each iteration of j_0, for exactly the
part of its output that B's consumers read in that iteration:

    for i, j in T.grid(16, 16):                 for i, j_0 in T.grid(16, 4):
        B[vi, vj] = A[vi, vj] * 2                   for ax0 in range(4):
    for i, j_0, j_1 in T.grid(16, 4, 4):   ->           vi = i; vj = j_0 * 4 + ax0
        C[vi, vj] = B[vi, vj] + 1                       B[vi, vj] = A[vi, vj] * 2
                                                    for j_1 in range(4):
                                                        C[vi, vj] = B[vi, vj] + 1

reverse_compute_at(C, j_0) is the mirror: the consumer C is moved under j_0 to consume exactly
what its producers wrote in that iteration. The new loops (`ax0`, `ax1`, ... one per iter var
of non-unit extent; all of them with preserve_unit_loops) cover the region (see region_cover),
reduction iter vars take their full domain; a region that may leave the iter domain gets a
`T.where` guard. The block's old loops that held only it are removed. `index` picks the
position among the loop body's statements: -1 the last valid one (compute_at: right before the
first consumer), -2 the first valid one, k >= 0 exactly k.

Legality (TVM's): the loop is in the block's function and is not its ancestor; the block is a
complete or reduction block (no opaque iter vars) and the only writer of what it writes; all
its consumers (reverse: producers) are under the loop, and (compute_at) it has at least one (a
reverse_compute_at block without producers covers its whole domain under the loop); the region has
a constant extent and the block's accesses to the moved-over buffers index by plain iter vars.

`compute_at([B1, B2], loop)` moves a group (TE's create_group + compute_at): consumers first,
so each producer then finds its consumers already under the loop.
"""

from typing import List, Sequence, Union

from mlir import ir

from tir_mlir.ir.affine_exprs import dims_of
from tir_mlir.analysis.symbolic import SymExpr, substitute
from tir_mlir.analysis.structure import widen_domains, erase
from tir_mlir.dialect.ops import Block, Loop, body_ops
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import index
from tir_mlir.analysis.structure import (
    block_reads_writes,
    blocks_accessing,
    blocks_under,
    enclosing_loops,
    func_of,
    is_ancestor,
    op_of,
    parent_op,
    scope_of,
    set_operands,
    walk_all,
)
from tir_mlir.analysis.region_cover import (
    IterCover,
    LoopSpace,
    NestedSpace,
    RegionError,
    cover,
    iter_var_intervals,
    touched_region,
)


def compute_at(
    block, loop, preserve_unit_loops: bool = False, index: int = -1
) -> Union[ir.Operation, List[ir.Operation]]:
    """Move producer `block` (or a list of blocks) under `loop`; returns the new block op(s)."""
    if isinstance(block, (list, tuple)):
        return _group(block, loop, preserve_unit_loops, index, reverse=False)
    return _move(op_of(block), op_of(loop), preserve_unit_loops, index, reverse=False)


def reverse_compute_at(
    block, loop, preserve_unit_loops: bool = False, index: int = -1
) -> Union[ir.Operation, List[ir.Operation]]:
    """Move consumer `block` (or a list of blocks) under `loop`; returns the new block op(s)."""
    if isinstance(block, (list, tuple)):
        return _group(block, loop, preserve_unit_loops, index, reverse=True)
    return _move(op_of(block), op_of(loop), preserve_unit_loops, index, reverse=True)


def _group(blocks, loop, preserve, idx, reverse) -> List[ir.Operation]:
    ops = [op_of(b) for b in blocks]
    if not ops:
        raise ScheduleError("compute_at: empty group of blocks")
    order = blocks_under(func_of(ops[0]))
    pos = {o: k for k, o in enumerate(order)}
    if any(o not in pos for o in ops):
        raise ScheduleError("compute_at: the blocks of a group must be in one function")
    ops.sort(key=lambda o: pos[o], reverse=not reverse)
    return [_move(o, op_of(loop), preserve, idx, reverse) for o in ops]


def _who(block: Block, loop: Loop, reverse: bool) -> str:
    prim = "reverse_compute_at" if reverse else "compute_at"
    return f"{prim}: block {block.name!r} at loop {loop.name!r}"


def _names(ops) -> str:
    return ", ".join(repr(Block(o).name) for o in ops)


def dataflow(block_op: ir.Operation, rw=None):
    """(producers, consumers) of a block: other blocks of its scope (TVM's: under the same
    block or function, not inside another block) writing what it reads / reading what it
    writes (a block reducing into a buffer does not count as reading it). A blockized block
    counts with the accesses of the blocks nested in it. Found from the buffers' uses."""
    scope = scope_of(block_op)
    rw = _ReadsWrites() if rw is None else rw
    reads, writes = rw[block_op]
    producers = blocks_accessing(scope, reads, stores=True, skip=block_op)
    consumers = [
        b
        for b in blocks_accessing(scope, writes, stores=False, skip=block_op)
        if _meets(rw[b][0], writes)
    ]
    return producers, consumers


class _ReadsWrites(dict):
    """block op -> _reads_writes(block op), each computed once (a primitive asks several
    times about every block of the function)."""

    def __missing__(self, block_op):
        v = self[block_op] = _reads_writes(block_op)
        return v


def _reads_writes(block_op):
    reads, writes = block_reads_writes(block_op)
    if Block(block_op).init is not None:
        reads = [r for r in reads if not any(r == w for w in writes)]
    return reads, writes


def _meets(a, b) -> bool:
    return any(x == y for x in a for y in b)


def check_single_writer(block_op, func, who: str, rw=None):
    """The block must be the only writer of its buffers, blocks nested in it or around it
    aside: a store of one of them outside it, in a block not around it, is another writer."""
    rw = _ReadsWrites() if rw is None else rw
    for w in rw[block_op][1]:
        for u in w.uses:
            store = op_of(u.owner)
            if store.name != "memref.store" or u.operand_number != 1:
                continue
            around, p = [], parent_op(store)  # the blocks around the store
            while p is not None and p != func and p != block_op:
                if p.name == Block.OP_NAME:
                    around.append(p)
                p = parent_op(p)
            if p == block_op:
                continue  # a store of the block itself
            other = next((b for b in around if not is_ancestor(b, block_op)), None)
            if other is not None:
                raise ScheduleError(
                    f"{who}: the block is not a complete block: it is not "
                    f"the only writer of its buffers (block "
                    f"{Block(other).name!r} writes them too)"
                )


def _check_order(loop_op, producers, consumers, who: str):
    """Outside the loop, every producer must run before it and every consumer after it (a
    reverse_compute_at block without producers must not move past its consumers)."""
    late = [p for p in producers if not is_ancestor(loop_op, p) and _precedes(loop_op, p)]
    early = [c for c in consumers if not is_ancestor(loop_op, c) and _precedes(c, loop_op)]
    if late or early:
        what = (
            f"producer(s) {_names(late)} would run after it"
            if late
            else f"consumer(s) {_names(early)} would run before it"
        )
        raise ScheduleError(f"{who}: the block's {what}")


def _precedes(a: ir.Operation, b: ir.Operation) -> bool:
    """Whether `a` comes before `b` (a != b) in a pre-order walk of their function: found
    from their chains of ancestors (where they part, which of the two sibling statements
    is first), not by walking the function."""
    ca, cb = _chain(a), _chain(b)
    k = 0
    while k < len(ca) and k < len(cb) and ca[k] == cb[k]:
        k += 1
    if k == len(ca) or k == len(cb):  # one holds the other: the outer one is first
        return k == len(ca)
    x, y = ca[k], cb[k]
    if x.block == y.block:
        return x.is_before_in_block(y)
    order = walk_all(func_of(a))  # (siblings in different regions of an op)
    return order.index(a) < order.index(b)


def _chain(op: ir.Operation) -> list:
    """`op` and its ancestors up to the function, outermost first."""
    out = [op]
    while out[-1].name != "func.func":
        p = parent_op(out[-1])
        if p is None:
            raise ValueError(f"{op.name} is not inside a func.func")
        out.append(p)
    return out[::-1]


def _holding(stmts: Sequence[ir.Operation], blocks) -> List[int]:
    """Positions of the statements that are or hold one of `blocks` (found from the blocks
    up: a statement holds a block when it is on the block's chain of ancestors)."""
    out = []
    for b in blocks:
        p = b
        while p is not None:
            k = next((k for k, s in enumerate(stmts) if s == p), None)
            if k is not None:
                out.append(k)
                break
            p = parent_op(p)
    return out


def position(stmts: Sequence[ir.Operation], before, after, idx: int, who: str) -> int:
    """Where to insert among `stmts`: after every statement holding an `after` block, before
    every one holding a `before` block; idx -1 = last valid, -2 = first valid."""
    lo = max([k + 1 for k in _holding(stmts, after)], default=0)
    hi = min(_holding(stmts, before), default=len(stmts))
    if lo > hi:
        raise ScheduleError(
            f"{who}: no position in the loop body is after all the block's "
            f"producers and before all its consumers"
        )
    if idx == -1:
        return hi
    if idx == -2:
        return lo
    if not lo <= idx <= hi:
        raise ScheduleError(f"{who}: index {idx} is not a valid position (valid: {lo}..{hi})")
    return idx


def _move(block_op, loop_op, preserve, idx, reverse) -> ir.Operation:
    blk, lp = Block(block_op), Loop(loop_op)
    who = _who(blk, lp, reverse)
    func = func_of(block_op)
    if func_of(loop_op) != func:
        raise ScheduleError(f"{who}: the loop is not in the block's function")
    if is_ancestor(loop_op, block_op):
        raise ScheduleError(
            f"{who}: the loop is an ancestor of block {blk.name!r} (it "
            f"must be outside it, under the same block scope)"
        )
    if is_ancestor(block_op, loop_op):
        raise ScheduleError(f"{who}: the loop is inside the block")
    scope = scope_of(block_op)
    if scope_of(loop_op) != scope and is_ancestor(scope, loop_op):
        raise ScheduleError(
            f"{who}: the block and the loop are not under the same block "
            f"scope (the loop is inside block {Block(scope_of(loop_op)).name!r}"
            f", the block is not)"
        )
    if scope.name == Block.OP_NAME and not is_ancestor(scope, loop_op):
        # (a block nested in a blockized one would leave its iter vars behind)
        raise ScheduleError(
            f"{who}: the block and the loop are not under the same block "
            f"scope (the block is inside block {Block(scope).name!r}, the "
            f"loop is not)"
        )
    if "O" in blk.iter_types:
        raise ScheduleError(
            f"{who}: the block has opaque iter vars (it must be a complete or reduction block)"
        )
    rw = _ReadsWrites()  # (each block's accesses read once)
    check_single_writer(block_op, func, who, rw)
    producers, consumers = dataflow(block_op, rw)
    needed = producers if reverse else consumers
    role = "producer" if reverse else "consumer"
    if not needed and not reverse:  # reverse: no producer = recompute it all under the loop
        raise ScheduleError(f"{who}: the block has no {role} (it is an output block)")
    outside = [b for b in needed if not is_ancestor(loop_op, b)]
    if outside:
        raise ScheduleError(
            f"{who}: the primitive requires all the {role}(s) of the block "
            f"under the loop ({_names(outside)} "
            f"{'is' if len(outside) == 1 else 'are'} not)"
        )
    _check_order(loop_op, producers, consumers, who)

    reads, writes = rw[block_op]
    outer = enclosing_loops(loop_op) + [loop_op]
    space = NestedSpace(outer)  # a consumer may be inside a blockized block
    try:
        regions = {}
        for buf in reads if reverse else writes:
            r = touched_region(
                space, [Block(b) for b in needed], buf, "store" if reverse else "load"
            )
            if r is not None:
                regions[buf] = r
        intervals = iter_var_intervals(
            blk, regions, "load" if reverse else "store", conflicts_ok=not reverse, space=space
        )
    except RegionError as e:
        raise ScheduleError(f"{who}: {e}") from None
    covers = cover(space, blk, intervals, preserve, reverse)

    stmts = body_ops(lp.body)
    pos = position(stmts, consumers, producers, idx, who)
    return place(block_op, lp.body, stmts, pos, space, covers)


def place(
    block_op, body: ir.Block, stmts, pos: int, space: LoopSpace, covers: List[IterCover]
) -> ir.Operation:
    """Build the covering loops at `stmts[pos]` in `body`, move the block into them, rebind it,
    and remove its old loops that held only it. Returns the new block op."""
    blk = Block(block_op)
    loc = block_op.location
    old_parent = block_op.parent
    anchor = stmts[pos] if pos < len(stmts) else list(body.operations)[-1]
    with loc:
        new_ivs, n = [], 0
        ip = ir.InsertionPoint(anchor)
        for c, index_dtype in zip(covers, blk.index_dtypes):
            if c.loop:
                new = Loop.build(f"ax{n}", c.extent, index_dtype=index_dtype, loc=loc, ip=ip)
                n += 1
                new_ivs.append(new.iv)
                ip = ir.InsertionPoint.at_block_terminator(new.body)
            else:
                new_ivs.append(None)
        block_op.move_before(ip.ref_operation)

        # New bindings: base + lo (+ the new loop), over the outer loops used, then the new loops.
        nout = len(space.values)
        lins = []
        for c, iv in zip(covers, new_ivs):
            # (a symbolic start, `n - 1 - ...`, is added to the expression below)
            lin = c.base + index.const(c.lo if isinstance(c.lo, int) else 0)
            if iv is not None:
                space.values.append(iv)
                space.ranges[len(space.values) - 1] = (0, index.upper(c.extent) - 1)
                lin = lin + index.var(len(space.values) - 1)
            lins.append(lin)
        used = sorted({v for lin in lins for v in _lin_vars(lin)})
        used = [v for v in used if v < space.n_outer] + [v for v in used if v >= nout]
        posn = {v: k for k, v in enumerate(used)}
        dim = lambda v: ir.AffineDimExpr.get(posn[v])  # noqa: E731
        doms = blk.domains  # (read while the operands are the old ones)
        symbols = blk.symbols  # (kept: the domains and the new constraints use them)
        # sizes the region uses (`n - 1 - i`) are symbols of the space: the block's here
        sym_map = [ir.AffineSymbolExpr.get(_position(symbols, v)) for v in space.symbols]
        ident = [ir.AffineDimExpr.get(k) for k in range(len(used))]

        def remap(e):
            return substitute(e, ident, sym_map) if sym_map else e

        exprs = [remap(index.to_affine(lin, dim)) for lin in lins]
        exprs = [
            e + c.lo.embed(symbols) if isinstance(c.lo, SymExpr) else e
            for e, c in zip(exprs, covers)
        ]
        blk.op.attributes["bindings"] = ir.AffineMapAttr.get(
            ir.AffineMap.get(len(used), len(symbols), exprs)
        )
        # TVM's binding is the region start plus the new loop: `hh_0 * 8 - 1 + ax0`
        blk.start_first_bindings = {str(e) for e in exprs}
        cons, spelled = [], {}
        for c, lin, e, (dmin, dext) in zip(covers, lins, exprs, doms):
            # a new loop of extent 1 is 0 in the predicate (TVM simplifies it over the loop's
            # range: `i_0 * 16 + i_1 < 1`, where the binding keeps `+ ax0`)
            unit = [
                (a, k)
                for a, k in lin.terms
                if a[0] == "v" and a[1] >= nout and space.ranges.get(a[1]) == (0, 0)
            ]
            if unit:
                lin = index.Lin(tuple(t for t in lin.terms if t not in unit), lin.const)
                e = remap(index.to_affine(lin, dim))
                e = e + c.lo.embed(symbols) if isinstance(c.lo, SymExpr) else e
            if c.lower_check:
                cons.append(e - (dmin.embed(symbols) if isinstance(dmin, SymExpr) else dmin))
            if c.upper_check and not isinstance(dmin + dext, int):  # e < n
                cons.append((dmin + dext).embed(symbols) - 1 - e)
            elif c.upper_check:  # e < dmin + dext, a common factor divided out (TVM)
                ul, un = index.less_than(lin, dmin + dext, space.ranges)
                cons.append(remap(index.to_affine(index.const(un - 1) + ul.scale(-1), dim)))
                if all(k < 0 for _, k in ul.terms):  # `8 - i < 8` is TVM's `0 < i`
                    spelled[str(cons[-1])] = "<"
        blk.set_attr(
            "predicate",
            ir.IntegerSetAttr.get(
                ir.IntegerSet.get(len(used), len(symbols), cons, [False] * len(cons))
            )
            if cons
            else None,
        )
        blk.where_spelling = spelled
        widen_domains(blk, len(symbols))
        new_op = set_operands(block_op, [space.values[v] for v in used] + symbols)
    _remove_empty_loops(old_parent)
    return new_op


def _position(symbols: list, v: ir.Value) -> int:
    """The position of `v` in `symbols`, appended when absent."""
    for k, s in enumerate(symbols):
        if s == v:
            return k
    symbols.append(v)
    return len(symbols) - 1


def _lin_vars(lin) -> List[int]:
    out = []
    for atom, _ in lin.terms:
        if atom[0] == "v":
            out.append(atom[1])
        elif atom[0] == "x":
            out.extend(sorted(dims_of(atom[1])))
        elif atom[0] != "s":
            out.extend(_lin_vars(atom[1]))
    return out


def _remove_empty_loops(op):
    """Erase `op` and its ancestors while they are loops with nothing left in their body."""
    op = op_of(op) if op is not None else None
    top = None
    while op is not None and Loop.is_loop(op) and _holds_only(op, top):
        top = op
        op = parent_op(op)
    if top is not None:
        erase(top)  # (with the empty loops inside it)


def _holds_only(loop: ir.Operation, inner) -> bool:
    """Whether the loop's body is empty, or (`inner` not None) holds only `inner` (besides
    its terminator)."""
    ops = loop.regions[0].blocks[0].operations
    if inner is None:
        return len(ops) == 1
    return len(ops) == 2 and ops[0].operation == inner
