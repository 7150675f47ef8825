"""Stage `carry-vectors` (CPU, scf level): a loop that carries the lanes of one vector as
separate scalars carries the vector.

A vectorized accumulator at a strided address (a tile vectorized over the rows of C, `C[i, j]`
with `i` the vector lane) is read as `vector.from_elements` of one load per lane and written as
one `vector.extract` per lane; `scalar-replace` then carries each lane's element:

    %r:8 = scf.for %k iter_args(%a0 = %c0, ..., %a7 = %c7) {        %v0 = from_elements %c0..%c7
      %v = vector.from_elements %a0, ..., %a7                       %r = scf.for %k iter_args(%v = %v0) {
      %s = FMA(A[.., k], B[k, ..], %v)                     =>         %s = FMA(A[.., k], B[k, ..], %v)
      scf.yield (extract %s[0]), ..., (extract %s[7])                 scf.yield %s }
    }                                                               %r0..%r7 = extract %r[0..7]

so every iteration rebuilds the vector from its lanes and takes it apart again: 2 x lanes
shuffles on the accumulator's chain, more than the FMA itself (an f64 8-lane tile over rows:
benchmarks/README.md, "session 9, stage figures"). Carried as the vector, the lanes are built
and taken apart once, around the loop. A reduction's init, `select(k == 0, 0, %a_i)` on every
lane with one condition, becomes one vector select.

The lanes are carried as the vector when the iter_args at some positions are used only by one
`vector.from_elements` (directly or each through such a select), in lane order, and the yields
at the same positions are `vector.extract`s of lanes 0..n-1 of one vector of that type. Inner
loops first: their results, taken apart after the loop, are the yields of the loop around.
"""

from mlir import ir
from mlir.dialects import arith, scf, vector

from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.common import else_block, functions, move_body


class CarryVectors:
    name = "carry-vectors"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for build in [o for o in walk_all(f) if o.name == "vector.from_elements"]:
                _fold_if_lanes(build)
            changed = True
            while changed:
                changed = False
                for loop in reversed([o for o in walk_all(f) if o.name == "scf.for"]):
                    group = _lane_group(loop)
                    if group is not None:
                        _carry(loop, *group)
                        changed = True
                        break


def _lane_group(loop):
    """(positions, from_elements op, select condition or None, select's lane values or None,
    yielded vector) of the first group of lanes `loop` can carry as one vector, or None."""
    body = loop.regions[0].blocks[0]
    args = list(body.arguments)[1:]
    term = list(body.operations)[-1]
    yields = list(term.operands)
    for op in body.operations:
        if op.name != "vector.from_elements":
            continue
        lanes = list(op.operands)
        cond, fill, sources = None, [], []
        for v in lanes:
            owner = v.owner
            if isinstance(owner, ir.OpView) and owner.operation.name == "arith.select":
                c, t, e = owner.operation.operands
                if cond is not None and c != cond or not _single_use(v):
                    break
                cond = c
                fill.append(t)
                sources.append(e)
            else:
                sources.append(v)
        else:
            if cond is not None and len(fill) != len(lanes):
                continue
            branch = _if_lanes(lanes, args) if cond is None else None
            if branch is not None:
                sources = branch[1]
            found = [_arg_position(s, args) for s in sources]
            positions = [p for p in found if p is not None]
            if len(positions) != len(found) or len(set(positions)) != len(positions):
                continue
            if not all(_single_use(args[p]) for p in positions):
                continue
            carried = _yielded_vector([yields[p] for p in positions], op.result.type)
            if carried is not None:
                if branch is not None:
                    return positions, op.operation, branch[0], None, carried
                return positions, op.operation, cond, fill or None, carried
    return None


def _if_lanes(lanes, args):
    """(the scf.if, the iter_args its else branch yields for the lanes) when every lane is a
    result of one `scf.if` (a reduction's init on every lane) used only there, in order, whose
    else branch passes iter_args through; else None."""
    owners = [v.owner for v in lanes]
    if not all(isinstance(o, ir.OpView) and o.operation.name == "scf.if" for o in owners):
        return None
    op = owners[0].operation
    if any(o.operation != op for o in owners) or len(op.regions[1].blocks) == 0:
        return None
    results = list(op.results)
    if [_arg_position(v, results) for v in lanes] != list(range(len(lanes))):
        return None
    if len(results) != len(lanes) or not all(_single_use(v) for v in lanes):
        return None
    passed = list(list(op.regions[1].blocks[0].operations)[-1].operands)
    if args is not None and not all(_arg_position(v, args) is not None for v in passed):
        return None
    return op, passed


def _fold_if_lanes(build):
    """`from_elements` of the lanes of one scf.if whose else branch takes a vector apart (the
    init of an unrolled reduction step): the scf.if yields the vector instead."""
    branch = _if_lanes(list(build.operands), None)
    if branch is None:
        return
    vtype = build.results[0].type
    source = _yielded_vector(branch[1], vtype)
    if source is None:
        return
    value = _vector_if(branch[0], vtype, source)
    build.results[0].replace_all_uses_with(value)
    build.erase()
    branch[0].erase()


def _arg_position(value, args):
    return next((n for n, a in enumerate(args) if a == value), None)


def _single_use(value) -> bool:
    return len(list(value.uses)) == 1


def _yielded_vector(values, vtype):
    """The vector whose lanes 0..n-1 `values` extract, in order, or None."""
    source = None
    for lane, v in enumerate(values):
        owner = v.owner
        if not isinstance(owner, ir.OpView) or owner.operation.name != "vector.extract":
            return None
        op = owner.operation
        position = list(ir.DenseI64ArrayAttr(op.attributes["static_position"]))
        if list(op.operands)[1:] or position != [lane]:
            return None
        if source is None:
            source = op.operands[0]
        elif op.operands[0] != source:
            return None
    return source if source is not None and source.type == vtype else None


def _carry(loop, positions, build, cond, fill, carried):
    """Rebuild `loop` with the lanes at `positions` carried as one vector (last iter_arg)."""
    body = loop.regions[0].blocks[0]
    inits = list(loop.operands)[3:]
    lo, hi, step = list(loop.operands)[:3]
    vtype = build.result.type
    keep = [n for n in range(len(inits)) if n not in positions]
    with ir.InsertionPoint(loop), loop.location:
        init = vector.from_elements(vtype, [inits[p] for p in positions])
        new = scf.ForOp(lo, hi, step, [inits[n] for n in keep] + [init])
    attrs = loop.attributes
    for a in [attrs[i] for i in range(len(attrs))]:  # (iterating gives the names only)
        if a.name != "operandSegmentSizes":
            new.operation.attributes[a.name] = a.attr
    new_args = list(new.body.arguments)
    old_args = list(body.arguments)
    old_args[0].replace_all_uses_with(new_args[0])
    for m, n in enumerate(keep):
        old_args[1 + n].replace_all_uses_with(new_args[1 + m])
    term = list(body.operations)[-1]
    yields = list(term.operands)
    with ir.InsertionPoint(new.body), loop.location:
        new_term = scf.YieldOp([yields[n] for n in keep] + [carried])
    move_body(body, new_term.operation)
    if isinstance(cond, ir.Operation):  # the lanes come from this scf.if: it yields the vector
        value = _vector_if(cond, vtype, new_args[-1])
        selects = [cond]
    else:
        selects = [v.owner.operation for v in build.operands] if cond is not None else []
        with ir.InsertionPoint(build), build.location:
            value = new_args[-1]
            if cond is not None:
                value = arith.select(cond, vector.from_elements(vtype, fill), value)
    build.result.replace_all_uses_with(value)
    build.erase()
    for s in selects:
        s.erase()
    results = list(loop.results)
    after = new.results[-1]
    with ir.InsertionPoint.after(new.operation), loop.location:
        for lane, p in enumerate(positions):
            results[p].replace_all_uses_with(vector.extract(after, [], [lane]))
    for m, n in enumerate(keep):
        results[n].replace_all_uses_with(new.results[m])
    loop.erase()


def _vector_if(op, vtype, carried):
    """A copy of the scf.if `op` that yields its lanes as one vector: the then branch's values
    built into it, `carried` from the else branch. Returns the vector result."""
    then_block = op.regions[0].blocks[0]
    with ir.InsertionPoint(op), op.location:
        new = scf.IfOp(op.operands[0], [vtype], has_else=True)
        for block in (new.then_block, else_block(new)):  # (the builder may add empty yields)
            for o in list(block.operations):
                o.erase()
        then_term = list(then_block.operations)[-1]
        with ir.InsertionPoint(new.then_block):
            term = scf.YieldOp([])
        move_body(then_block, term.operation)
        with ir.InsertionPoint(term.operation):
            built = vector.from_elements(vtype, list(then_term.operands))
            scf.YieldOp([built])
        term.operation.erase()
        with ir.InsertionPoint(else_block(new)):
            scf.YieldOp([carried])
    return new.results[0]
