"""Shared helpers for schedule primitives: walking the IR, loop chains, iter-type analysis,
and the one routine that rewrites the bindings of a block after its dims change.

Every function takes and returns `mlir.ir.Operation`s (use `dialect.ops.Block/Loop` views to
read them); none of them mutates the IR except `rebind_block`.
"""

from typing import Dict, List, Optional, Sequence, Tuple

from mlir import ir

from tir_mlir.ir.affine_exprs import dims_of
from tir_mlir.analysis.symbolic import substitute as sym_substitute
from tir_mlir.dialect.ops import Block, Loop, _op as op_of, body_ops
from tir_mlir.errors import ScheduleError
from tir_mlir.ir.ir_walk import func_of, walk, walk_all  # noqa: F401  (re-exported for the primitives)
from tir_mlir.analysis import index, op_index

SID = "tir.sid"  # stable id of a block/loop (discardable attribute), see tir_mlir/schedule


def is_loop(op) -> bool:
    return op.name == Loop.OP_NAME


def is_block(op) -> bool:
    return op.name == Block.OP_NAME


def parent_op(op: ir.Operation) -> Optional[ir.Operation]:
    p = op.parent
    return op_of(p) if p is not None else None


def enclosing_loops(op: ir.Operation) -> List[ir.Operation]:
    """Loops around `op` up to its parent block or function, outermost first (TVM get_loops)."""
    loops = []
    p = op.parent
    while p is not None:
        p = p.operation
        name = p.name
        if name == Block.OP_NAME or name == "func.func":
            break
        if name == Loop.OP_NAME:
            loops.append(p)
        p = p.parent
    return loops[::-1]


def scope_of(op: ir.Operation) -> ir.Operation:
    """The block (or function) whose scope `op` is in: its nearest enclosing one."""
    p = parent_op(op)
    while p is not None and p.name != Block.OP_NAME and p.name != "func.func":
        p = parent_op(p)
    if p is None:
        raise ValueError(f"{op.name} is inside no block or function")
    return p


def child_blocks(op: ir.Operation) -> List[ir.Operation]:
    """Blocks directly under `op` (a loop, block or function), not inside another block (a
    block's init holds no blocks)."""
    out = []
    top = [True]

    def visit(o):  # MLIR's native walk, not descending into the blocks found
        if top[0]:
            top[0] = False
            return ir.WalkResult.ADVANCE
        if o.name == Block.OP_NAME:
            out.append(o)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    op_of(op).walk(visit, ir.WalkOrder.PRE_ORDER)
    return out


def blocks_accessing(
    scope: ir.Operation, buffers: Sequence[ir.Value], stores: bool, skip: Optional[ir.Operation]
) -> List[ir.Operation]:
    """The blocks directly under `scope` (in program order), `skip` aside, that load (or,
    `stores`, store) one of `buffers` anywhere inside: found from the buffers' uses, climbing
    from each access to the block under the scope, without walking the blocks' bodies."""
    name, operand = ("memref.store", 1) if stores else ("memref.load", 0)
    found = []
    for v in buffers:
        for u in v.uses:
            o = op_of(u.owner)
            if o.name != name or u.operand_number != operand:
                continue
            top, p = None, o.parent
            while p is not None:
                p = p.operation
                if p == scope:
                    break
                if p.name == Block.OP_NAME:
                    top = p
                p = p.parent
            if (
                p is not None
                and top is not None
                and (skip is None or top != skip)
                and not any(top == f for f in found)
            ):
                found.append(top)
    if len(found) < 2:
        return found
    return [b for b in child_blocks(scope) if any(b == f for f in found)]


def blocks_under(op: ir.Operation) -> List[ir.Operation]:
    """All blocks nested in `op`, at any depth."""
    out = []

    def visit(o):
        if o.name == Block.OP_NAME:
            out.append(o)
        return ir.WalkResult.ADVANCE

    top = op_of(op)
    top.walk(visit, ir.WalkOrder.PRE_ORDER)
    return out[1:] if out and out[0] == top else out


# What the top of a function body declares rather than computes: allocations, the shapes of
# its buffers and the facts about its sizes (docs/symbolic.md).
DECLARATIONS = ("memref.alloc", "tir.match_shape", "tir.assume")


def is_declaration(op: ir.Operation) -> bool:
    """An allocation, a `tir.match_shape` / `tir.assume`, or the computation of a size
    (a top-level op whose results are all `index` values: the symbols of docs/symbolic.md)."""
    op = op_of(op)
    if op.name in DECLARATIONS:
        return True
    return (
        len(op.results) > 0
        and not len(op.regions)
        and op.parent is not None
        and op.parent.name == "func.func"
        and all(isinstance(r.type, ir.IndexType) for r in op.results)
    )


def comes_before(a: ir.Operation, b: ir.Operation) -> bool:
    """Whether `a` comes before `b` in the function body (both at its top level)."""
    body = parent_op(a)
    if body is None:
        raise ValueError(f"{a.name} is not inside a function body")
    for o in body.regions[0].blocks[0].operations:
        if o.operation == a:
            return True
        if o.operation == b:
            return False
    return False


def terminator(block: ir.Block) -> ir.Operation:
    """The last op of a region block (affine.yield / gpu.yield / func.return)."""
    ops = block.operations
    return op_of(ops[len(ops) - 1])


def loop_children(loop: ir.Operation) -> List[ir.Operation]:
    """Statements directly in a loop body (without the terminator)."""
    return body_ops(Loop(loop).body)


def ancestors(op: ir.Operation) -> List[ir.Operation]:
    out = []
    p = parent_op(op)
    while p is not None:
        out.append(p)
        p = parent_op(p)
    return out


def is_ancestor(a: ir.Operation, b: ir.Operation) -> bool:
    """True when `b` is nested (at any depth) inside `a`."""
    p = parent_op(b)
    while p is not None:
        if p == a:
            return True
        p = parent_op(p)
    return False


def block_reads_writes(block: ir.Operation) -> Tuple[list, list]:
    """Memrefs loaded / stored by a block (body and init, nested blocks included)."""
    reads, writes = [], []

    def visit(o):  # (filtered in MLIR's walk: no list of every op)
        name = o.name
        if name == "memref.load":
            _add(reads, o.operands[0])
        elif name == "memref.store":
            _add(writes, o.operands[1])
        return ir.WalkResult.ADVANCE

    op_of(block).walk(visit, ir.WalkOrder.PRE_ORDER)
    return reads, writes


def _add(lst, v):
    if not any(v == x for x in lst):
        lst.append(v)


def value_range(v: ir.Value) -> Tuple[int, int]:
    """Inclusive range of an index value: a loop IV or a block iter var."""
    owner = v.owner
    if isinstance(owner, ir.Block):
        op = owner.owner.operation
        name = op.name
        if name == Loop.OP_NAME:
            lo, hi = Loop(op).iv_range()
        elif name == Block.OP_NAME:
            lo, ext = Block(op).domains[v.arg_number]
            lo, hi = lo, lo + ext - 1
        else:
            return -index.UNKNOWN, index.UNKNOWN
        # a symbolic bound (`range(n)`) is no constant: the range is open on that side
        return (
            lo if isinstance(lo, int) else -index.UNKNOWN,
            hi if isinstance(hi, int) else index.UNKNOWN,
        )
    return -index.UNKNOWN, index.UNKNOWN


def dim_exprs_using(block: ir.Operation, value: ir.Value) -> List[int]:
    """Indices of the block's iter vars whose binding mentions `value`."""
    b = Block(block)
    positions = {k for k, d in enumerate(b.dims) if d == value}
    return [r for r, used in enumerate(result_dims(b.bindings)) if used & positions]


def _mentions(expr, positions) -> bool:
    if isinstance(expr, ir.AffineDimExpr):
        return expr.position in positions
    if isinstance(expr, ir.AffineBinaryExpr):
        return _mentions(expr.lhs, positions) or _mentions(expr.rhs, positions)
    return False


_RESULT_DIMS: Dict[ir.AffineMap, tuple] = {}


def result_dims(m: ir.AffineMap) -> tuple:
    """The dims each result of `m` uses (a frozenset per result), cached: affine maps are
    uniqued by their context (hashing one is a pointer hash) and a search replays the same
    bindings thousands of times. The cache holds a reference to the context, so a key cannot
    outlive it."""
    got = _RESULT_DIMS.get(m)
    if got is None:
        if len(_RESULT_DIMS) >= 1 << 16:
            _RESULT_DIMS.clear()
        got = _RESULT_DIMS[m] = tuple(frozenset(dims_of(e)) for e in m.results)
    return got


def blocks_binding(iv: ir.Value) -> List[ir.Operation]:
    """The blocks whose dims include `iv` (in no particular order): found through the
    value's uses, not by walking the loop's subtree. Only these can have a binding that
    mentions the loop."""
    out = []
    for u in iv.uses:
        o = op_of(u.owner)
        if is_block(o) and not any(o == x for x in out):
            out.append(o)
    return out


def loop_iter_type(loop: ir.Operation) -> str:
    """ "S" when every block iter var bound to the loop is spatial, "R" when one is a
    reduction, "O" when one is opaque (TVM's GetLoopIterType)."""
    iv = Loop(loop).iv
    kinds = set()
    for blk in blocks_binding(iv):
        types = Block(blk).iter_types
        kinds.update(types[r] for r in dim_exprs_using(blk, iv))
    if "O" in kinds:
        return "O"
    return "R" if "R" in kinds else "S"


def users(values: Sequence[ir.Value]) -> List[ir.Operation]:
    """Distinct ops using any of `values` (collected before a rewrite recreates them)."""
    out = []
    for v in values:
        for u in v.uses:
            o = op_of(u.owner)
            if not any(o == x for x in out):
                out.append(o)
    return out


def non_affine_dims(block: ir.Operation) -> List[ir.Value]:
    """The block's dims computed by ops (`i * j`, `i % j`...: a non-affine binding or
    T.where the front end kept, as TVM does); affine dims are loop IVs and iter vars."""
    return [
        d
        for d in Block(block).dims
        if not isinstance(d.owner, ir.Block) and d.owner.operation.name != "arith.constant"
    ]


def check_affine_bindings(root: ir.Operation, prim: str, fixed=()):
    """TVM's reorder, blockize, compute_at... need affine bindings in the blocks they move
    (`fixed`: loop variables held constant, as reorder holds the loops above its own)."""
    from tir_mlir.analysis.affine_binding import _only_uses

    for blk in ([root] if is_block(root) else []) + blocks_under(root):
        if any(not (fixed and _only_uses(d, fixed)) for d in non_affine_dims(blk)):
            raise ScheduleError(
                f"{prim}: The block {Block(blk).name!r} is required to have an affine binding"
            )


def feeds_bindings(op: ir.Operation) -> bool:
    """Whether `op` is part of a non-affine binding or T.where: an expression op whose value
    reaches only blocks' dims (through other such ops)."""
    stack, seen = [op], 0
    while stack:
        o = stack.pop()
        seen += 1
        if seen > 10000 or len(o.results) != 1 or len(o.regions) or Loop.is_loop(o):
            return False
        users = [op_of(u.owner) for u in o.results[0].uses]
        if not users:
            return False
        stack += [u for u in users if not is_block(u)]
    return True


def rewrite_binding_uses(iv: ir.Value, expr: ir.AffineExpr, new_ivs: Sequence[ir.Value]):
    """After split/fuse, iv = `expr` over `new_ivs`: in the ops of non-affine bindings, iv is
    replaced by that expression built right before each of them; inner loops whose bounds
    use iv get their bound maps rewritten (`rebind_loop_bounds`)."""
    from tir_mlir.analysis.buffer_util import emit_index  # (it imports this module)

    for owner in users([iv]):  # each op once (a loop uses iv in both of its bounds)
        if Loop.is_loop(owner):
            rebind_loop_bounds(owner, iv, expr, new_ivs)
        elif not is_block(owner):
            with ir.InsertionPoint(owner), owner.location:
                owner.replace_uses_of_with(iv, emit_index(expr, list(new_ivs)))


def rebind_loop_bounds(
    loop_op: ir.Operation, iv: ir.Value, expr: ir.AffineExpr, new_ivs: Sequence[ir.Value]
) -> ir.Operation:
    """A loop whose bounds use `iv` (`range(i + 1)`), recreated with iv = `expr` (an affine
    expression over `new_ivs`, the loops that replace iv's). Returns the new loop op."""
    lv = Loop(loop_op)
    bounds = []
    for m, ops in (lv.lower_bound, lv.upper_bound):
        dims, syms = ops[: m.n_dims], ops[m.n_dims :]  # (symbols: sizes, `range(i, n)`)
        keep = [o for o in dims if not o == iv]
        n = len(keep) + len(new_ivs)
        shifted = substitute_dims(
            expr, [ir.AffineDimExpr.get(len(keep) + k) for k in range(len(new_ivs))]
        )
        subs = [shifted if o == iv else ir.AffineDimExpr.get(keep.index(o)) for o in dims]
        same = [ir.AffineSymbolExpr.get(k) for k in range(len(syms))]
        results = [
            ir.AffineExpr.simplify_affine_expr(sym_substitute(r, subs, same), n, len(syms))
            for r in m.results
        ]
        bounds.append((ir.AffineMap.get(n, len(syms), results), keep + list(new_ivs) + syms))
    (lmap, lops), (umap, uops) = bounds
    loop_op.attributes["lowerBoundMap"] = ir.AffineMapAttr.get(lmap)
    loop_op.attributes["upperBoundMap"] = ir.AffineMapAttr.get(umap)
    loop_op.attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([len(lops), len(uops), 0])
    return set_operands(loop_op, lops + uops)


def substitute_dims(expr: ir.AffineExpr, dims) -> ir.AffineExpr:
    """`expr` (dims only) with dim k replaced by `dims[k]`."""
    return sym_substitute(expr, dims, [])


def check_iv_uses(loop: ir.Operation, prim: str):
    """Loop rewrites only update block bindings: the IV must be used by blocks' dims (or by
    the ops of a non-affine binding, rewritten with `rewrite_binding_uses`) only."""
    lv = Loop(loop)
    for use in lv.iv.uses:
        owner = op_of(use.owner)
        if not is_block(owner) and feeds_bindings(owner):
            continue
        if Loop.is_loop(owner):
            continue  # bounds of an inner loop: rewritten by `rebind_loop_bounds`
        if not is_block(owner):
            raise ScheduleError(
                f"{prim}: loop {lv.name!r} is used directly by {owner.name} "
                f"(only block bindings may use loop variables)"
            )


def unit_loop_consts(block: ir.Operation) -> Dict[int, index.Lin]:
    """Dim position -> its constant value, for the block's dims that are unit-extent loop
    IVs: with preserve_unit_iters=False TVM binds every such loop as a constant."""
    out = {}
    for k, v in enumerate(Block(block).dims):
        owner = v.owner
        if isinstance(owner, ir.Block) and is_loop(op_of(owner.owner)):
            lp = Loop(op_of(owner.owner))
            lo = lp.min
            if lp.extent == 1 and isinstance(lo, int):
                out[k] = index.const(lo)
    return out


def check_no_annotation(loop: ir.Operation, prim: str):
    """TVM's split, fuse and loop_partition refuse a loop with annotations or a thread
    binding."""
    lv = Loop(loop)
    if lv.annotations or lv.kind == "thread_binding":
        raise ScheduleError(
            f"{prim}: loop {lv.name!r} has an annotation or thread binding (unannotate it first)"
        )


def rebind_block(
    block: ir.Operation,
    new_dims: Sequence[ir.Value],
    subst: Dict[int, index.Lin],
    extra_predicate: Sequence[ir.AffineExpr] = (),
    symbols: Optional[Sequence[ir.Value]] = None,
) -> ir.Operation:
    """Replace the block's dims by `new_dims`: old dim k becomes `subst[k]` (a Lin over
    positions in new_dims); old dims not in `subst` must appear in new_dims unchanged.
    Bindings and predicate are rewritten and simplified; `extra_predicate` adds `e >= 0`
    constraints over new_dims and `symbols`: the block's symbols (`block_symbols`), maybe
    extended at the end with those the new constraints use (default: the block's own).
    Returns the new block op (the old one is erased)."""
    b = Block(block)
    old = b.dims
    symbols = b.symbols if symbols is None else list(symbols)
    n_sym = len(symbols)
    ranges = _LazyRanges(new_dims)
    moved, at = {}, {}
    for i, v in enumerate(new_dims):
        at.setdefault(v, i)
    for k, v in enumerate(old):
        if k not in subst:
            moved[k] = at[v]
    lins = _Lins(subst, moved)

    n = len(new_dims)
    zero = ir.AffineConstantExpr.get(0)
    rename = ir.AffineMap.get(
        n, 0, [ir.AffineDimExpr.get(moved[k]) if k in moved else zero for k in range(len(old))]
    )

    def conv(e, used=None):
        if not subst.keys() & (dims_of(e) if used is None else used):
            return e.compose(rename)  # untouched dims only: a renaming (already simple)
        return index.to_affine(index.from_affine(e, lins, ranges, marks=True))

    old_bindings = b.bindings
    bindings = ir.AffineMap.get(
        n,
        n_sym,
        [conv(e, used) for e, used in zip(old_bindings.results, result_dims(old_bindings))],
    )
    cons, eqs = [], []
    predicate = b.predicate  # (read once: it is parsed from the attribute's text)
    if predicate is not None:
        for c in predicate.constraints:
            cons.append(conv(c.expr))
            eqs.append(c.is_eq)
    for e in extra_predicate:
        cons.append(e)
        eqs.append(False)
    b.op.attributes["bindings"] = ir.AffineMapAttr.get(bindings)
    if cons:
        b.set_attr("predicate", ir.IntegerSetAttr.get(ir.IntegerSet.get(n, n_sym, cons, eqs)))
    if n_sym != len(b.symbols):
        widen_domains(b, n_sym)
    return set_operands(b.op, list(new_dims) + symbols)


def block_symbols(block: ir.Operation) -> List[ir.Value]:
    """A copy of the block's symbol operands, for `SymExpr.embed` to extend."""
    return Block(block).symbols


def widen_domains(b: Block, n_sym: int):
    """Symbolic domain maps over `n_sym` symbols (the block's list grew at its end)."""
    doms = []
    for d in ir.ArrayAttr(b.op.attributes["domains"]):
        if isinstance(d, ir.AffineMapAttr):
            m = d.value
            d = ir.AffineMapAttr.get(ir.AffineMap.get(m.n_dims, n_sym, list(m.results)))
        doms.append(d)
    b.op.attributes["domains"] = ir.ArrayAttr.get(doms)


class _Lins(dict):
    """Old dim k -> its Lin over new_dims: `subst[k]`, else the new position it moved to
    (made on first use: most bindings are only renamed)."""

    def __init__(self, subst, moved):
        super().__init__(subst)
        self.moved = moved

    def __missing__(self, k):
        v = self[k] = index.var(self.moved[k])
        return v


class _LazyRanges(dict):
    """Position -> value_range of new_dims[position], computed on first use (most bindings
    simplify without asking for any range)."""

    def __init__(self, dims):
        super().__init__()
        self.dims = dims

    def __missing__(self, k):
        r = self[k] = value_range(self.dims[k])
        return r

    def get(self, k, default=None):
        return self[k] if 0 <= k < len(self.dims) else default


def erase(op) -> None:
    """Erase `op`, after checking that nothing outside it uses a value it defines (its results,
    or the results and block arguments of the ops nested in it): MLIR aborts the process when
    a used value is destroyed, and a primitive must fail with an error instead."""
    op = op_of(op)
    nested = [op, *walk_all(op)]
    for o in nested:
        for v in o.results:
            _check_uses(v, op)
        if len(o.regions):  # (iterating no regions costs 20 times more than asking)
            for r in o.regions:
                for b in r.blocks:
                    for a in b.arguments:
                        _check_uses(a, op)
    op_index.erased(nested)
    op.erase()


def _check_uses(v: ir.Value, op: ir.Operation):
    for use in v.uses:
        if not _is_inside(op_of(use.owner), op):
            raise ScheduleError(
                f"internal error: cannot erase '{op.name}': a value it "
                f"defines is still used by '{use.owner.name}'"
            )


def _is_inside(op, outer) -> bool:
    while op is not None:
        if op == outer:
            return True
        op = parent_op(op)
    return False


def move_sid(old: ir.Operation, new: ir.Operation) -> None:
    """`new` takes the place of `old` (which the rewrite erases next): it takes old's sid, so
    the handles of old stand for new; the schedule's op index hears of it."""
    if SID in old.attributes:
        new.attributes[SID] = old.attributes[SID]
        op_index.replaced(new)


def set_operands(op: ir.Operation, values: Sequence[ir.Value]) -> ir.Operation:
    """Operands cannot be resized in place: recreate the op (same attributes, sid included,
    same location) with the new operands and move its region blocks over."""
    attrs = dict(op.attributes.items())
    new = ir.Operation.create(
        op.name,
        operands=list(values),
        attributes=attrs,
        regions=len(op.regions),
        loc=op.location,
        ip=ir.InsertionPoint(op),
    )
    for src, dst in zip(op.regions, new.regions):
        for blk in list(src.blocks):
            blk.append_to(dst)
    # (its regions are empty now and it has no results, unlike what `erase` guards against;
    # a result would still be used: the check stays for those)
    if len(op.results):
        erase(op)
    else:
        op_index.erased([op])
        op.erase()
    op_index.replaced(new)
    return new


def chain_between(outer: ir.Operation, inner: ir.Operation) -> List[ir.Operation]:
    """Loops from `outer` down to `inner` (both included); ScheduleError-free: caller checks
    `is_ancestor` first."""
    chain = [inner]
    p = parent_op(inner)
    while chain[-1] != outer:
        if p is None:
            raise ValueError(f"{outer.name} does not enclose {inner.name}")
        if is_loop(p):
            chain.append(p)
        p = parent_op(p)
    return chain[::-1]
