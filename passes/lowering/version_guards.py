"""Stage `version-guards` (CPU, affine level): a loop nest guarded by a `T.where` over a
symbolic size, or over constants, runs unguarded on the iterations where the guard holds
throughout.

A split of a loop over `n` by 8 guards its body with `i_0 * 8 + i_1 < n`; every iteration of
`i_0` but the last has all 8 rows. The guard then costs a compare per element and keeps the
later stages from seeing a plain tile (no accumulators carried across `k`, a masked vector
loop). TVM's loop partitioning does the same:

    for i_0 in range((n + 7) // 8):        for i_0 in range((n + 7) // 8):
      for k, i_1, j: ...                     if i_0 * 8 + 7 < n:      # every i_1 in [0, 8)
        if i_0 * 8 + i_1 < n:      =>          for k, i_1, j: BODY
          BODY                               else:
                                               for k, i_1, j: ...
                                                 if i_0 * 8 + i_1 < n: BODY

The guard's condition must be linear in the loop variables inside the versioned loop (the
outermost one it uses), those loops must have constant bounds, and its constraints be
inequalities. Every guard of the loop's body that versions the same loop shares the one
version (a tile's init, update and write-back nests each carry the tile's guard). The
partial version runs only where some iteration can pass (`if i_0 * 8 < n`), when the guards
agree on that condition and nothing outside them has an effect: a tile of 1024 rows at
n = 256 is 3/4 empty jobs, which then cost nothing. A second guard is versioned only inside the full version of the first, so a
2-d split over two sizes has three versions (full x full, full x partial, partial). A guard
over constants only (a static program's split by a factor that does not divide, `compute_at`'s
clipped regions) is versioned when its full-tile condition holds on some iterations of the loop
and fails on others: a 256 matmul tiled by 7 columns under a fused loop (`(f mod 37) * 7 + j1 <
256`) ran with the compare per element and no vector or carried accumulator, an order of
magnitude slower than versioned (benchmarks/README.md, "session 9, stage figures").

The loops of a versioned body carry an id (COPY) that their copies share: compact-buffers counts
the copies of one loop in the two versions as one loop, so a tile under a versioned loop
compacts as it did unversioned.
"""

import itertools

from mlir import ir
from mlir.dialects import affine
from tir_mlir.dialect.ops import Loop, integer_set
from tir_mlir.passes.lowering.common import ancestors, constant_loop, else_block, functions, walk

from tir_mlir.analysis.symbolic import substitute, used_symbols

VERSIONED = "tir_mlir.versioned"  # the if this stage made (its nest is not versioned again)
# Every loop of a versioned body carries an id its copies share, so that a later stage can tell
# the copies of one loop in the two versions (compact-buffers counts them as one loop).
COPY = "tir_mlir.loop_copy"
_MARK = "tir_mlir.version_guard"
# A constant guard is versioned when its full-tile condition holds on some iterations of the
# loop and not on others, tried on each of at most this many iterations.
ENUMERATED = 1 << 16


class VersionGuards:
    name = "version-guards"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            ids = itertools.count()
            changed = True
            while changed:  # a version's guard left with other constraints: again
                changed = False
                for op in [o for o in walk(f) if o.name == "affine.if"]:
                    plan = _plan(op)
                    if plan is not None:
                        _version(plan[0], *_together(op, plan), ids=ids)
                        changed = True
                        break


def _plan(guard):
    """(the loop to version, its full-iteration condition, the symbol operands, the
    positions of the guard's constraints that condition covers, the guard's some-iteration
    condition or None) or None. The some-iteration condition (each constraint holds for
    some values of the inner IVs) is given when the full one covers every constraint: where
    it fails, no iteration of the loop body passes the guard."""
    if len(guard.results) or len(guard.regions[1].blocks):
        return None
    iset = integer_set(guard.attributes["condition"])
    if any(c.is_eq for c in iset.constraints):
        return None
    loops = [p for p in ancestors(guard) if p.name == "affine.for"]
    versioned = [p for p in ancestors(guard) if VERSIONED in p.attributes]
    if any(_inside(guard, p.regions[1].blocks[0]) for p in versioned):
        return None  # (the partial tiles of another guard stay as they are)
    dims = list(guard.operands)[: iset.n_dims]
    # Per constraint over a size: the loop it is versioned at and its full-tile form.
    forms = {}
    for k, c in enumerate(iset.constraints):
        form = _full_form(c.expr, dims, loops, iset)
        if form is not None and (used_symbols(c.expr) or _some_full(*form)):
            forms[k] = form
    if not forms:
        return None
    outer = max((lp for lp, _ in forms.values()), key=loops.index)  # (innermost first)
    if any(not any(a == p for a in ancestors(outer)) for p in versioned):
        return None  # versioning it would copy another guard's versions too
    covered = [k for k, (lp, _) in forms.items() if lp == outer]
    syms = list(guard.operands)[iset.n_dims :]
    some = None
    if len(covered) == len(iset.constraints):
        some = []
        for c in iset.constraints:
            form = _full_form(c.expr, dims, loops, iset, some=True)
            assert form is not None, "every constraint has a full form, so a some form too"
            some.append(form[1])
    return outer, [forms[k][1] for k in covered], syms, covered, some


def _together(first, plan):
    """The versioning of `plan`'s loop for `first` and every other guard in that loop whose
    plan versions the same loop (the init, update and write-back nests of one tile each carry
    the tile's guard): (the full-iteration condition of them all, its symbol operands, [(guard,
    covered constraints)], the condition for the partial version to do anything or None).
    One version per loop: versioned one guard at a time, the first guard's version would
    leave the others' guards inside the full tile, and copies of them could no longer be
    versioned there. The partial version is skipped where no guard can pass (a tile past
    `n`: a tile of 1024 rows at n = 256 has 3 empty quarters) when every guard has the same
    some-iteration condition and nothing outside the guards has an effect."""
    loop = plan[0]
    group = [(first, plan)]
    for op in walk(loop):
        if op.name == "affine.if" and op != first:
            other = _plan(op)
            if other is not None and other[0] == loop:
                group.append((op, other))
    syms, exprs, somes = [], {}, set()
    for _, (_, forms, operands, _, some) in group:
        # each guard's symbols renumbered as positions in one operand list
        at = []
        for v in operands:
            if not any(v == w for w in syms):
                syms.append(v)
            at.append(next(k for k, w in enumerate(syms) if v == w))
        sym_exprs = [ir.AffineSymbolExpr.get(k) for k in at]
        for e in forms:
            e = substitute(e, [ir.AffineDimExpr.get(0)], sym_exprs)
            exprs.setdefault(str(e), e)
        if some is None:
            somes.add(None)
            continue
        some = [substitute(e, [ir.AffineDimExpr.get(0)], sym_exprs) for e in some]
        somes.add(tuple(sorted({str(e): e for e in some}.items())))
    full = ir.IntegerSet.get(1, len(syms), list(exprs.values()), [False] * len(exprs))
    guards = [(guard, p[3]) for guard, p in group]
    nonempty = None
    if len(somes) == 1 and None not in somes and _no_effect_outside(loop, guards):
        some_exprs = [e for _, e in next(iter(somes))]
        nonempty = ir.IntegerSet.get(1, len(syms), some_exprs, [False] * len(some_exprs))
    return full, syms, guards, nonempty


# Ops without an effect that may stand outside the guards of a partial version that is skipped
# where no guard passes.
_PURE = {"affine.for", "affine.yield", "affine.apply", "affine.min", "affine.max", "affine.load"}
_PURE |= {"memref.load", "memref.dim", "vector.load", "vector.broadcast", "affine.vector_load"}


def _no_effect_outside(loop_op, guards) -> bool:
    """Whether every op in `loop_op` outside the `guards` is free of effects."""
    blocks = [g.regions[0].blocks[0] for g, _ in guards]
    for op in walk(loop_op):
        if any(op == g for g, _ in guards) or any(_inside(op, b) for b in blocks):
            continue
        if op.name not in _PURE and not op.name.startswith("arith."):
            return False
    return True


def _full_form(e, dims, loops, iset, some: bool = False):
    """(V, e') for a constraint `e >= 0`: V the outermost loop whose IV it uses, e' over V's IV
    (d0) and the symbols, true exactly when `e >= 0` holds for every value of the other IVs
    it uses (loops inside V with constant bounds; `some`: for some value of them); None when
    it has no such form."""
    used = sorted(_dims_of(e))
    owners = [_loop_of(dims[p], loops) for p in used]
    if not owners or any(o is None for o in owners):
        return None
    outer = max(owners, key=loops.index)
    repl = [ir.AffineConstantExpr.get(0)] * iset.n_dims
    for p, owner in zip(used, owners):
        if owner == outer:
            repl[p] = ir.AffineDimExpr.get(0)
            continue
        loop = Loop(owner)
        coef = _coefficient(e, p, iset.n_dims, iset.n_symbols)
        if not constant_loop(loop) or coef is None:
            return None
        lo, hi = loop.iv_range()
        repl[p] = ir.AffineConstantExpr.get(lo if (coef > 0) != some else hi)
    syms = [ir.AffineSymbolExpr.get(k) for k in range(iset.n_symbols)]
    return outer, ir.AffineExpr.simplify_affine_expr(substitute(e, repl, syms), 1, iset.n_symbols)


def _some_full(loop_op, e) -> bool:
    """Whether a constant guard's full-tile form `e >= 0` (over the loop's IV) holds for some
    iterations of the loop and fails for others (both versions run). At most ENUMERATED values
    are tried: a longer loop's are evenly spaced and include both ends (a fused loop of 103 row
    tiles x 1024 columns fails only on its last 1024 iterations). A value seen either way is
    exact, so sampling can only miss a version, never make a wrong one."""
    loop = Loop(loop_op)
    if not constant_loop(loop):
        return False
    lo, hi = loop.iv_range()
    step = -(-(hi - lo + 1) // ENUMERATED)
    f = _function(e)
    values = [f(v) for v in [*range(lo, hi + 1, step), hi]]
    return any(x >= 0 for x in values) and any(x < 0 for x in values)


def _function(e):
    """An affine expression of one dim as a Python function of d0."""
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineConstantExpr):
        c = e.value
        return lambda v: c
    if isinstance(e, ir.AffineDimExpr):
        return lambda v: v
    a, b = _function(e.lhs), _function(e.rhs)
    if isinstance(e, ir.AffineAddExpr):
        return lambda v: a(v) + b(v)
    if isinstance(e, ir.AffineMulExpr):
        return lambda v: a(v) * b(v)
    if isinstance(e, ir.AffineModExpr):
        return lambda v: a(v) % b(v)
    if isinstance(e, ir.AffineFloorDivExpr):
        return lambda v: a(v) // b(v)
    return lambda v: -(-a(v) // b(v))


def _dims_of(expr) -> set:
    e = expr.maybe_downcast()
    if isinstance(e, ir.AffineDimExpr):
        return {e.position}
    if isinstance(e, (ir.AffineConstantExpr, ir.AffineSymbolExpr)):
        return set()
    return _dims_of(e.lhs) | _dims_of(e.rhs)


def _loop_of(value, loops):
    """The enclosing `affine.for` whose IV `value` is, or None."""
    if not isinstance(value.owner, ir.Block):
        return None
    return next((lp for lp in loops if Loop(lp).iv == value), None)


def _coefficient(expr, p: int, n_dims: int, n_syms: int):
    """The constant coefficient of dim p in `expr` (None when not linear in it)."""
    dims = [ir.AffineDimExpr.get(k) + (1 if k == p else 0) for k in range(n_dims)]
    syms = [ir.AffineSymbolExpr.get(k) for k in range(n_syms)]
    diff = ir.AffineExpr.simplify_affine_expr(
        substitute(expr, dims, syms) - expr, n_dims, n_syms
    ).maybe_downcast()
    return diff.value if isinstance(diff, ir.AffineConstantExpr) else None


def _version(loop_op, full: ir.IntegerSet, syms, guards, nonempty=None, *, ids):
    """Wrap the body of `loop_op` in `if full { body, each guard without its covered
    constraints } else { body }`; `guards` lists (guard, covered constraint positions);
    `nonempty`: the else version is `if nonempty { body }`. The body's loops get a COPY id
    (from `ids`) unless an earlier version gave them one; their copies keep it."""
    loop = Loop(loop_op)
    body = [o.operation for o in list(loop.body.operations)[:-1]]
    i64 = ir.IntegerType.get_signless(64)
    for o in body:
        for inner in [o, *walk(o)]:
            if inner.name == "affine.for" and COPY not in inner.attributes:
                inner.attributes[COPY] = ir.IntegerAttr.get(i64, next(ids))
    for k, (guard, _) in enumerate(guards):
        guard.attributes[_MARK] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k)
    loc = loop_op.location
    with ir.InsertionPoint(body[0]):
        if_op = affine.AffineIfOp(full, cond_operands=[loop.iv, *syms], has_else=True, loc=loc)
        then_end = affine.AffineYieldOp([], ip=ir.InsertionPoint(if_op.then_block), loc=loc)
        else_end = affine.AffineYieldOp([], ip=ir.InsertionPoint(else_block(if_op)), loc=loc)
    for o in body:
        o.move_before(else_end.operation)
    # A clone of the whole if copies the body with its uses remapped; its else block's ops
    # move into the then block.
    copy = if_op.operation.clone(ip=ir.InsertionPoint(if_op.operation))
    for o in [o.operation for o in list(copy.regions[1].blocks[0].operations)[:-1]]:
        o.move_before(then_end.operation)
    copy.erase()
    unguarded = {
        ir.IntegerAttr(o.attributes[_MARK]).value: o
        for o in walk(if_op.operation)
        if o.name == "affine.if" and _MARK in o.attributes and _inside(o, if_op.then_block)
    }
    for k, (guard, covered) in enumerate(guards):
        _drop(unguarded[k], covered)
        del guard.attributes[_MARK]
    if nonempty is not None:
        with ir.InsertionPoint(body[0]):
            skip = affine.AffineIfOp(nonempty, cond_operands=[loop.iv, *syms], loc=loc)
            skip_end = affine.AffineYieldOp([], ip=ir.InsertionPoint(skip.then_block), loc=loc)
        for o in body:
            o.move_before(skip_end.operation)
    if_op.operation.attributes[VERSIONED] = ir.UnitAttr.get()


def _drop(guard, covered):
    """`guard` without the constraints at `covered` (unwrapped when none is left)."""
    del guard.attributes[_MARK]
    iset = integer_set(guard.attributes["condition"])
    rest = [c for k, c in enumerate(iset.constraints) if k not in covered]
    if rest:
        guard.attributes["condition"] = ir.IntegerSetAttr.get(
            ir.IntegerSet.get(
                iset.n_dims, iset.n_symbols, [c.expr for c in rest], [c.is_eq for c in rest]
            )
        )
        return
    for o in [o.operation for o in list(guard.regions[0].blocks[0].operations)[:-1]]:
        o.move_before(guard)
    guard.erase()


def _inside(op, block: ir.Block) -> bool:
    while op is not None and op.name != "func.func":
        if op.block == block:
            return True
        op = op.parent
    return False
