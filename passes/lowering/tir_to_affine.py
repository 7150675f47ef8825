"""Stage `tir-to-affine`: flatten `tir.block`s into plain affine/arith/memref code.

    affine.for %i ... {                         affine.for %i ... {
      "tir.block"(%i, %k) ({ ^bb0(%vi, %vk):      %vi = affine.apply (d0, d1) -> (d0 + d1)(%i, %k)
         BODY }, { ^bb0(%vi, %vk): INIT })   =>   affine.if (d0, d1) : (d1 == 0)(%i, %k) { INIT }
        {bindings = ..., predicate = P}           affine.if P(%i, %k) { BODY }     // P: T.where
                                                }
`tir.call` intrinsics expand to arith/math, `tir.evaluate` disappears (the value it wraps is
still computed), buffers are hoisted to the start of their function (or of their enclosing
parallel loop body, so threads do not share them): small ones become `memref.alloca`, large ones
`memref.alloc` freed before every return. Loops keep their `tir.kind`/`tir.name` attributes for
`affine-to-scf`; every other `tir.*` attribute is consumed here.
"""

import functools
from contextlib import nullcontext

import numpy as np

from mlir import ir
from mlir.dialects import affine, arith, cf, math, memref, scf, vector

from tir_mlir.ir.affine_exprs import dims_of
from tir_mlir.ir.ir_walk import first
from tir_mlir.analysis import size_exprs
from tir_mlir.analysis.symbolic import used_symbols
from tir_mlir.dialect.buffers import arg_attrs, scope_of
from tir_mlir.dialect.ops import CONST_DATA, Block, Loop, body_ops, str_attr
from tir_mlir.errors import BuildError
from tir_mlir.passes.lowering import bit_intrinsics
from tir_mlir.passes.lowering.alloc_limit import nbytes as buffer_bytes
from tir_mlir.passes.lowering.common import (
    affine_to_arith,
    ancestors,
    build_error,
    functions,
    index_const,
    loop_iv,
    scalar_bits,
    set_to_arith,
    walk,
)

# Buffers up to this many bytes live on the stack.
ALLOCA_LIMIT = 64 * 1024
# A tensor-core fragment's scope, kept on its allocation (tir.* attributes are dropped here).
SCOPE_ATTR = "tir_mlir.scope"
# The ops expanded or dropped once the blocks are flattened.
_EXPANDED = ("tir.call", "tir.evaluate", "tir.assume", "tir.match_shape")


class TirToAffine:
    name = "tir-to-affine"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            # Flattening erases the block with its regions' terminators: a handle listed
            # before would dangle, so each block is found by a fresh walk. Pre-order: an
            # outer block first binds the iter vars that its inner blocks' bindings read.
            while (block := first(f, "tir.block")) is not None:
                _flatten(Block(block))
            # These ops have no regions: erasing one leaves the other handles valid.
            for op in [o for o in walk(f) if o.name in _EXPANDED]:
                if op.name == "tir.call":
                    _expand_call(op)
                elif op.name in ("tir.evaluate", "tir.assume"):
                    op.erase()  # an assumption is a fact for the schedule, not code
                elif op.name == "tir.match_shape":
                    _assert_shape(op)
            _constant_buffers(f)
            _place_buffers(f)
            for op in list(walk(f)):
                if op.name != "affine.for":
                    _strip_tir_attrs(op)
            for op in list(walk(f)):
                if op.name.startswith("tir."):
                    raise build_error(op, "cannot lower this op")


def _strip_tir_attrs(op):
    for a in [a for a in op.attributes if a.startswith("tir.")]:
        del op.attributes[a]


def _flatten(block: Block):
    """Replace a block by its init (guarded) and body, iter vars bound to their values."""
    op, loc = block.op, block.op.location
    bindings = block.bindings
    # The operands are the dims, then the symbols (sizes such as `n`) the bindings, domains
    # and predicate use: every map and set below keeps them as symbols.
    dims, syms = _split_operands(block)
    # Non-affine bindings / T.where (a dim computed by `i * j`, `i % j`...): arith + scf.if.
    affine_dims = all(_valid_dim(d) for d in dims)
    guard = functools.partial(_guard if affine_dims else _scf_guard, syms=syms)
    # Decided before any op is emitted next to the block (the pattern wants it alone).
    init = block.init
    peel_before = _peelable_reduction(block) if init is not None and affine_dims else None
    with ir.InsertionPoint(op), loc:
        values = []
        for expr in bindings.results:
            e = expr.maybe_downcast()
            if isinstance(e, ir.AffineDimExpr):
                values.append(dims[e.position])
            elif isinstance(e, ir.AffineConstantExpr):
                values.append(index_const(e.value, loc))
            elif not affine_dims:
                values.append(affine_to_arith(expr, dims, syms, loc))
            else:
                values.append(_apply(expr, bindings.n_dims, dims, syms, loc))
        pred = block.predicate
        pred_guard = None
        if pred is not None:
            pred_exprs = [c.expr for c in pred.constraints]
            pred_eqs = [c.is_eq for c in pred.constraints]
        if (
            peel_before is not None
            and pred is not None
            and any(dims_of(e) & _reduce_positions(block) for e in pred_exprs)
        ):
            peel_before = None  # the predicate reads the reduce loop IVs: no peeling
        if peel_before is not None and init is not None:  # (peeled only with an init)
            with ir.InsertionPoint(peel_before):
                init_values = _init_values(block, loc)
                target = peel_before
                if pred is not None:  # T.where guards the init too (like TVM)
                    target = guard(pred_exprs, pred_eqs, pred.n_dims, _peeled_dims(block, loc), loc)
                _inline_region(init, init_values, target)
        if pred is not None:
            pred_guard = guard(pred_exprs, pred_eqs, pred.n_dims, dims, loc)
        if block.init is not None and peel_before is None:
            reduce_eqs = [
                expr - dmin
                for expr, t, dmin in zip(bindings.results, block.iter_types, _domain_mins(block))
                if t == "R"
            ]
            with ir.InsertionPoint(pred_guard) if pred_guard is not None else nullcontext():
                init_guard = guard(reduce_eqs, [True] * len(reduce_eqs), bindings.n_dims, dims, loc)
            _inline_region(block.init, values, init_guard if init_guard is not None else pred_guard)
        _inline_region(block.body, values, pred_guard)
    op.erase()


def _peelable_reduction(block: Block):
    """The outermost reduction loop when the block alone fills the loops its reduce iter vars
    are bound to (`for k: block` with vk = k, k starting at vk's domain min): then `init` can
    run once before those loops instead of under `if vk == min` inside them, which leaves
    LLVM a clean reduction loop. None when the pattern does not match."""
    bindings, (dims, _) = block.bindings, _split_operands(block)
    reduce_dims = []
    for expr, t, dmin in zip(bindings.results, block.iter_types, _domain_mins(block)):
        e = expr.maybe_downcast()
        if t != "R":
            continue
        if not isinstance(e, ir.AffineDimExpr):
            return None
        reduce_dims.append((e.position, dmin))
    if not reduce_dims:
        return None
    spatial_uses = set()
    for expr, t in zip(bindings.results, block.iter_types):
        if t != "R":
            spatial_uses |= dims_of(expr)
    positions = {p for p, _ in reduce_dims}
    if positions & spatial_uses or len(positions) != len(reduce_dims):
        return None
    child, loops = block.op, []
    for _ in reduce_dims:
        loop = child.parent
        if (
            loop is None
            or loop.name != "affine.for"
            or len(list(loop.regions[0].blocks[0].operations)) != 2
        ):
            return None
        loops.append(loop)
        child = loop
    ivs = {}
    for loop in loops:
        iv = loop_iv(loop)
        for p, dmin in reduce_dims:
            if dims[p] == iv:
                ivs[p] = (loop, dmin)
    if len(ivs) != len(reduce_dims):
        return None
    for loop, dmin in ivs.values():
        lb = ir.AffineMapAttr(loop.attributes["lowerBoundMap"]).value.results[0].maybe_downcast()
        ub = ir.AffineMapAttr(loop.attributes["upperBoundMap"]).value
        dmin = dmin.maybe_downcast()
        if not (
            isinstance(lb, ir.AffineConstantExpr)
            and isinstance(dmin, ir.AffineConstantExpr)
            and lb.value == dmin.value
            and _runs(ub, dmin.value)
            and ir.IntegerAttr(loop.attributes["step"]).value == 1
        ):
            return None
    return loops[-1]


def _runs(ub: ir.AffineMap, start: int) -> bool:
    """Whether a loop from `start` to `ub` runs at least once: a constant bound above `start`,
    or a symbolic one (`range(n)`: a reduction over no elements then yields its init value
    instead of leaving the output unwritten, as it would under `if vk == 0`)."""
    if len(ub.results) != 1:
        return False
    e = ub.results[0].maybe_downcast()
    return e.value > start if isinstance(e, ir.AffineConstantExpr) else ub.n_dims == 0


def _apply(expr, n_dims: int, dims, syms, loc) -> ir.Value:
    """`affine.apply` of a binding; the block's symbols are operands only when the expression
    uses one (the stages after this one read plain maps of loop variables best)."""
    syms = syms if used_symbols(expr) else []
    m = ir.AffineMap.get(n_dims, len(syms), [expr])
    return affine.AffineApplyOp(m, list(dims) + list(syms), loc=loc).result


def _split_operands(block: Block) -> tuple:
    """(dims, symbols): a block's operands are its bindings' dims, then their symbols."""
    operands, n = list(block.op.operands), block.bindings.n_dims
    return operands[:n], operands[n:]


def _domain_mins(block: Block) -> list:
    """The min of each iter var's domain, as an affine expression over the block's symbols
    (an entry is `[min, extent]`, or an `affine_map<()[s..] -> (min, extent)>` when symbolic)."""
    out = []
    for d in ir.ArrayAttr(block.op.attributes["domains"]):
        if isinstance(d, ir.AffineMapAttr):
            out.append(ir.AffineMapAttr(d).value.results[0])
        else:
            out.append(ir.AffineConstantExpr.get(ir.IntegerAttr(ir.ArrayAttr(d)[0]).value))
    return out


def _reduce_positions(block: Block):
    """Dim positions bound to reduce iter vars (only called on peelable blocks: plain dims)."""
    return {
        ir.AffineDimExpr(expr).position
        for expr, t in zip(block.bindings.results, block.iter_types)
        if t == "R"
    }


def _peeled_dims(block: Block, loc):
    """Block dims before the reduce loops: reduce loop IVs (unused there) replaced by 0."""
    reduce_pos = _reduce_positions(block)
    zero = index_const(0, loc) if reduce_pos else None
    return [zero if p in reduce_pos else d for p, d in enumerate(_split_operands(block)[0])]


def _init_values(block: Block, loc):
    """Iter var values for a peeled init: reduce vars at their domain min, others bound."""
    values = []
    # Reduce loop IVs do not exist before the loops; spatial bindings do not read them.
    dims, syms = _peeled_dims(block, loc), _split_operands(block)[1]
    for expr, t, dmin in zip(block.bindings.results, block.iter_types, _domain_mins(block)):
        e = expr.maybe_downcast()
        if t == "R":
            values.append(index_const(dmin.maybe_downcast().value, loc))  # (peeled: constant)
        elif isinstance(e, ir.AffineDimExpr):
            values.append(dims[e.position])
        else:
            values.append(_apply(expr, block.bindings.n_dims, dims, syms, loc))
    return values


def _guard(exprs, eqs, n_dims, dims, loc, syms=()):
    """An `affine.if` over `dims` and `syms` (None when there is no constraint: run
    unconditionally); returns the op its contents go before."""
    if not exprs:
        return None
    iset = ir.IntegerSet.get(n_dims, len(syms), exprs, eqs)
    if_op = affine.AffineIfOp(iset, cond_operands=list(dims) + list(syms), loc=loc)
    with ir.InsertionPoint(if_op.then_block):
        yield_op = affine.AffineYieldOp([], loc=loc)
    return yield_op.operation


def _valid_dim(v) -> bool:
    """A value affine ops accept as a dim: a loop IV, an affine.apply of IVs, a constant."""
    return isinstance(v, ir.BlockArgument) or v.owner.operation.name in (
        "affine.apply",
        "arith.constant",
    )


def _scf_guard(exprs, eqs, n_dims, dims, loc, syms=()):
    """`_guard` for dims that are not affine dims: an scf.if on the constraints in arith."""
    if not exprs:
        return None
    cond = set_to_arith(ir.IntegerSet.get(n_dims, len(syms), exprs, eqs), dims, syms, loc)
    if_op = scf.IfOp(cond, [], loc=loc)
    with ir.InsertionPoint(if_op.then_block):
        yield_op = scf.YieldOp([], loc=loc)
    return yield_op.operation


def _inline_region(block: ir.Block, values, before):
    """Move a region block's ops (terminator excepted) before `before` (or before the tir.block
    owning it), its arguments replaced by `values`."""
    for arg, v in zip(block.arguments, values):
        arg.replace_all_uses_with(v)
    anchor = before if before is not None else block.owner.operation
    for o in body_ops(block):
        o.move_before(anchor)


def _assert_shape(op):
    """`tir.match_shape(%A, syms) {shape = map}` -> a `cf.assert` per dynamic dimension that
    its size is the map's result (the runtime checks the arrays before the call: this guards
    callers of the exported function that pass sizes themselves)."""
    buf, syms = op.operands[0], list(op.operands)[1:]
    amap = ir.AffineMapAttr(op.attributes["shape"]).value
    mtype = ir.MemRefType(buf.type)
    func = op.parent
    names = {
        arg: str_attr(d, "tir.name", f"arg{k}")
        for k, (arg, d) in enumerate(zip(func.regions[0].blocks[0].arguments, arg_attrs(func)))
    }
    with ir.InsertionPoint(op), op.location:
        for k, expr in enumerate(amap.results):
            if not mtype.is_dynamic_dim(k):
                continue
            want = affine.AffineApplyOp(ir.AffineMap.get(0, len(syms), [expr]), syms).result
            got = memref.DimOp(buf, index_const(k, op.location)).result
            ok = arith.cmpi(arith.CmpIPredicate.eq, got, want)
            try:
                size = size_exprs.to_text(size_exprs.of_affine(expr, syms, names))
            except BuildError:
                size = "its declared size"
            cf.AssertOp(ok, f"dimension {k} of buffer '{names.get(buf, '?')}' is not {size}")
    op.erase()


def _expand_call(op):
    """TIR intrinsics with no upstream op, as arith/math."""
    callee = ir.StringAttr(op.attributes["callee"]).value
    args = list(op.operands)
    t = op.results[0].type
    is_float = not isinstance(t, (ir.IntegerType, ir.IndexType))
    with ir.InsertionPoint(op), op.location:

        def one():
            return arith.ConstantOp(t, 1.0 if is_float else 1).result

        if callee == "likely":
            r = args[0]  # a branch hint only
        elif callee == "ramp":  # T.Ramp(b, s, n) = broadcast(b) + broadcast(s) * [0, 1, .. n-1]
            vt = ir.VectorType(t)
            lanes = np.arange(vt.shape[0], dtype=f"int{scalar_bits(vt.element_type)}")
            # (an ndarray has the buffer protocol: the stub asks for a list of attributes)
            iota = ir.DenseElementsAttr.get(lanes, type=vt)  # pyright: ignore[reportCallIssue, reportArgumentType]
            r = arith.addi(
                vector.broadcast(vt, args[0]),
                arith.muli(vector.broadcast(vt, args[1]), arith.constant(vt, iota)),
            )
        elif callee == "sigmoid" and is_float:
            x = args[0]
            r = arith.divf(one(), arith.addf(one(), math.exp(arith.negf(x))))
        elif callee == "floormod" and is_float:
            a, b = args
            r = arith.subf(a, arith.mulf(math.floor(arith.divf(a, b)), b))
        elif callee == "floormod":
            a, b = args
            r = arith.subi(a, arith.muli(arith.floordivsi(a, b), b))
        elif callee == "floordiv" and not is_float:
            r = arith.floordivsi(*args)
        elif callee in bit_intrinsics.CALLEES:
            r = bit_intrinsics.expand(op)
        elif callee == "rsqrt" and is_float:
            r = math.rsqrt(args[0])
        elif callee == "log1p" and is_float:
            r = math.log1p(args[0])
        else:
            raise build_error(op, f"cannot lower intrinsic T.{callee} on {t}")
    op.results[0].replace_all_uses_with(r)
    op.erase()


def _constant_buffers(f):
    """A T.allocate_const buffer (an alloc with `tir.const_data`) becomes a private constant
    `memref.global` of the module, read through `memref.get_global`."""
    module = f.parent
    for k, op in enumerate(
        [o for o in walk(f) if o.name == "memref.alloc" and CONST_DATA in o.attributes]
    ):
        mtype = ir.MemRefType(op.results[0].type)
        fname = ir.StringAttr(f.attributes["sym_name"]).value
        symbol = f"__tir_const_{fname}_{k}"
        with ir.InsertionPoint(module.regions[0].blocks[0]), op.location:
            memref.GlobalOp(
                symbol,
                ir.TypeAttr.get(mtype),
                sym_visibility="private",
                initial_value=op.attributes[CONST_DATA],
                constant=True,
            )
        with ir.InsertionPoint(op), op.location:
            new = memref.GetGlobalOp(mtype, symbol)
        op.results[0].replace_all_uses_with(new.result)
        op.erase()


def _place_buffers(f):
    """Hoist every `memref.alloc` to the entry of its function or enclosing parallel loop;
    small ones become stack allocations."""
    entry = f.regions[0].blocks[0]
    returns = [o for o in walk(f) if o.name == "func.return"]
    for op in [o for o in walk(f) if o.name == "memref.alloc"]:
        mtype = ir.MemRefType(op.results[0].type)
        # A buffer of symbolic size (`memref.alloc(%n)`) lives on the heap.
        nbytes = buffer_bytes(mtype) if mtype.has_static_shape else ALLOCA_LIMIT + 1
        sizes = list(op.operands)
        scope_block, scope_ends = entry, returns
        parallel = next(
            (p for p in ancestors(op) if p.name == "affine.for" and Loop(p).kind == "parallel"),
            None,
        )
        if parallel is not None:
            scope_block = Loop(parallel).body
            scope_ends = [list(scope_block.operations)[-1].operation]
        first = _after_definitions(scope_block, sizes)
        loc = op.location
        if "tir.name" in op.attributes:  # the name survives in the location (tir.* attrs do not)
            loc = ir.Location.name(ir.StringAttr(op.attributes["tir.name"]).value, loc)
        if nbytes <= ALLOCA_LIMIT:
            with ir.InsertionPoint(first):
                new = memref.AllocaOp(mtype, [], [], loc=loc)
        else:
            with ir.InsertionPoint(first):
                new = memref.AllocOp(mtype, sizes, [], loc=loc)
            for end in scope_ends:
                with ir.InsertionPoint(end):
                    memref.DeallocOp(new.result, loc=loc)
        scope = scope_of(op.attributes)
        if scope.startswith("wmma."):  # gpu-lower-wmma finds fragments by it
            new.operation.attributes[SCOPE_ATTR] = ir.StringAttr.get(scope)
        for name in op.attributes:  # notes for later stages (storage-align's requests)
            if name.startswith("tir_mlir."):
                new.operation.attributes[name] = op.attributes[name]
        op.results[0].replace_all_uses_with(new.result)
        op.erase()


def _after_definitions(block: ir.Block, values) -> ir.Operation:
    """The first op of `block` after the ops of `block` that define `values` (a size computed
    at the top of the function is defined before the allocation that uses it)."""
    ops = [o.operation for o in block.operations]
    last = -1
    for v in values:
        if isinstance(v.owner, ir.Block):
            continue
        o = v.owner.operation
        while o is not None and o not in ops:
            o = o.parent
        if o is not None:
            last = max(last, ops.index(o))
    return ops[last + 1]
