"""Specialization: a symbolic function at given values of its sizes and scalar parameters, by
constant propagation over its IR (docs/symbolic.md, "Specialization").

    func.func @f(%A: memref<?x128xf32>, %n: index)       func.func @f(%A: memref<128x128xf32>)
      "tir.match_shape"(%A, %n) {()[s0] -> (s0, 128)}  =>
      affine.for %i = 0 to ()[s0] -> (s0 ceildiv 4)[%n]    affine.for %i = 0 to 32
      "tir.block"(%i, %j, %n) {bindings = (d0, d1)[s0]..}   "tir.block"(%i, %j) {(d0, d1) -> ..}

Each argument named in `values` becomes a constant; every map and set that took it as a symbol
(loop bounds, block bindings, domains and predicates, `tir.match_shape`, `tir.assume`,
`affine.apply/min/max`) takes the constant in, `arith` ops over constants fold, dynamic memref
types whose sizes became constants are refined to static ones (arguments and
`memref.alloc(%n)`), a `tir.match_shape` with nothing left to check and a `tir.assume` that
holds are dropped (one that fails is an error), and the argument is removed. What is left is
the program as written with those numbers.
"""

from mlir import ir
from mlir.dialects import arith

from tir_mlir.analysis.symbolic import substitute
from tir_mlir.dialect.buffers import arg_attrs
from tir_mlir.dialect.ops import integer_set, str_attr
from tir_mlir.ir.ir_walk import walk

_FOLD = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.floordivsi": lambda a, b: a // b,
    "arith.ceildivsi": lambda a, b: -(-a // b),
    "arith.divsi": lambda a, b: abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1),
    "arith.remsi": lambda a, b: a - b * int(a / b),
    "arith.minsi": min,
    "arith.maxsi": max,
}
_CASTS = ("arith.index_cast", "arith.extsi", "arith.trunci", "arith.sitofp")


class SpecializeError(ValueError):
    """A value that does not fit the function (unknown name, wrong type, failed assumption)."""


def specialize_function(func: ir.Operation, values: dict) -> None:
    """Specialize the `func.func` op in place: `values` maps parameter names (TVMScript
    names: `n`, `alpha`) to ints / floats. Names and values are checked before anything
    changes; an assumption the values break is found while folding: specialize a copy."""
    entry = func.regions[0].blocks[0]
    attrs = arg_attrs(func)
    names = {str_attr(d, "tir.name", f"arg{k}"): k for k, d in enumerate(attrs)}
    fname = str_attr(func.attributes, "sym_name")
    for name in values:
        if name not in names:
            raise SpecializeError(
                f"function {fname!r} has no parameter or size named "
                f"{name!r} (it has {', '.join(names)})"
            )
    positions = sorted(names[n] for n in values)
    with func.location:
        attrs_of = {n: _value_attr(entry.arguments[names[n]].type, v, n) for n, v in values.items()}
        consts = {}
        for name, attr in attrs_of.items():
            arg = entry.arguments[names[name]]
            consts[arg] = _constant(attr, entry)
        for arg, c in consts.items():
            arg.replace_all_uses_with(c)
        _propagate(func)
        _refine_arguments(func)
        _sink_constants(entry)
        for k in reversed(positions):
            entry.erase_argument(k)
        _set_signature(
            func, [ir.DictAttr.get(dict(d)) for k, d in enumerate(attrs) if k not in positions]
        )


def _value_attr(t: ir.Type, value, name: str) -> ir.Attribute:
    if isinstance(t, (ir.IndexType, ir.IntegerType)):
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            and not (isinstance(value, float) and value.is_integer())
        ):
            raise SpecializeError(f"{name} takes an integer, got {value!r}")
        return ir.IntegerAttr.get(t, int(value))
    if isinstance(t, ir.MemRefType):
        raise SpecializeError(f"{name} is a buffer: specialize its sizes instead")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return ir.FloatAttr.get(t, float(value))
    raise SpecializeError(f"{name} takes a number, got {value!r}")


def _constant(attr: ir.Attribute, entry: ir.Block) -> ir.Value:
    first = next(iter(entry.operations), None)
    with ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(entry):
        # (type, attribute) reaches the generated builder; the stub's overloads omit it
        return arith.ConstantOp(attr.type, attr).result  # pyright: ignore[reportArgumentType]


def _int_const(v: ir.Value):
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.constant":
        return None
    attr = owner.operation.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def _propagate(func):
    """Fold ops over constants and take constant symbols into maps, in program order (a
    definition comes before its uses), until nothing changes."""
    changed = True
    while changed:
        changed = False
        for op in list(walk(func)):
            if op.name in _FOLD or op.name in _CASTS:
                changed |= _fold_arith(op)
            elif op.name in ("affine.apply", "affine.min", "affine.max"):
                changed |= _fold_apply(op)
            elif op.name in (
                "affine.for",
                "affine.if",
                "tir.block",
                "tir.match_shape",
                "tir.assume",
                "memref.alloc",
                "memref.alloca",
            ):
                changed |= _fold_symbols(op)


def _replace_with_constant(op, value):
    t = op.results[0].type
    with ir.InsertionPoint(op), op.location:
        attr = (
            ir.FloatAttr.get(t, value) if isinstance(value, float) else ir.IntegerAttr.get(t, value)
        )
        c = arith.ConstantOp(t, attr).result  # pyright: ignore[reportArgumentType]  (as above)
    op.results[0].replace_all_uses_with(c)
    op.erase()


def _fold_arith(op) -> bool:
    consts = [_int_const(v) for v in op.operands]
    vals = [c for c in consts if c is not None]
    if len(vals) != len(consts):
        return False
    if op.name == "arith.sitofp":  # T.Cast("float32", shift)
        _replace_with_constant(op, float(vals[0]))
    elif not isinstance(op.results[0].type, (ir.IndexType, ir.IntegerType)):
        return False
    elif op.name in _CASTS:
        _replace_with_constant(op, vals[0])
    elif (
        op.name in ("arith.floordivsi", "arith.ceildivsi", "arith.divsi", "arith.remsi")
        and vals[1] == 0
    ):
        return False
    else:
        _replace_with_constant(op, _FOLD[op.name](*vals))
    return True


def _substituted(exprs, n_dims: int, operands: list) -> tuple:
    """`exprs` (over n_dims dims, then symbols = operands[n_dims:]) with the constant symbols
    taken in: (new exprs, number of symbols left, new operands)."""
    dims = [ir.AffineDimExpr.get(k) for k in range(n_dims)]
    syms, kept = [], list(operands[:n_dims])
    for v in operands[n_dims:]:
        c = _int_const(v)
        if c is not None:
            syms.append(ir.AffineConstantExpr.get(c))
        else:
            syms.append(ir.AffineSymbolExpr.get(len(kept) - n_dims))
            kept.append(v)
    n_syms = len(kept) - n_dims
    return (
        [
            ir.AffineExpr.simplify_affine_expr(substitute(e, dims, syms), n_dims, n_syms)
            for e in exprs
        ],
        n_syms,
        kept,
    )


def _fold_map(amap: ir.AffineMap, operands: list) -> tuple:
    exprs, n_syms, kept = _substituted(list(amap.results), amap.n_dims, operands)
    return ir.AffineMap.get(amap.n_dims, n_syms, exprs), kept


def _fold_apply(op) -> bool:
    amap = ir.AffineMapAttr(op.attributes["map"]).value
    operands = list(op.operands)
    if not any(_int_const(v) is not None for v in operands[amap.n_dims :]):
        return False
    new_map, kept = _fold_map(amap, operands)
    consts = [r.maybe_downcast() for r in new_map.results]
    if all(isinstance(c, ir.AffineConstantExpr) for c in consts):
        values = [c.value for c in consts]
        pick = {"affine.apply": values[0], "affine.min": min(values), "affine.max": max(values)}[
            op.name
        ]
        _replace_with_constant(op, pick)
        return True
    attrs = _attrs(op)
    attrs["map"] = ir.AffineMapAttr.get(new_map)
    _recreate(op, kept, attrs)
    return True


def _fold_symbols(op) -> bool:
    """Constant symbol operands of a loop, if, block, match_shape, assume or allocation
    taken into its maps."""
    operands = list(op.operands)
    if op.name in ("memref.alloc", "memref.alloca"):
        return _fold_alloc(op, operands)
    attrs = _attrs(op)
    if op.name == "affine.for":
        lmap = ir.AffineMapAttr(attrs["lowerBoundMap"]).value
        n_lb = lmap.n_dims + lmap.n_symbols
        lb_ops, ub_ops = operands[:n_lb], operands[n_lb:]
        umap = ir.AffineMapAttr(attrs["upperBoundMap"]).value
        if not (_const_symbol(lmap, lb_ops) or _const_symbol(umap, ub_ops)):
            return False
        lmap, lb_ops = _fold_map(lmap, lb_ops)
        umap, ub_ops = _fold_map(umap, ub_ops)
        attrs["lowerBoundMap"] = ir.AffineMapAttr.get(lmap)
        attrs["upperBoundMap"] = ir.AffineMapAttr.get(umap)
        attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([len(lb_ops), len(ub_ops), 0])
        _recreate(op, lb_ops + ub_ops, attrs)
        return True
    if op.name == "affine.if":
        iset = integer_set(attrs["condition"])
        if not any(_int_const(v) is not None for v in operands[iset.n_dims :]):
            return False
        attrs["condition"], kept = _fold_set(iset, operands)
        _recreate(op, kept, attrs)
        return True
    if op.name == "tir.block":
        return _fold_block(op, operands, attrs)
    if op.name == "tir.match_shape":
        amap = ir.AffineMapAttr(attrs["shape"]).value
        if not any(_int_const(v) is not None for v in operands[1:]):
            return False
        new_map, kept = _fold_map(amap, operands[1:])
        attrs["shape"] = ir.AffineMapAttr.get(new_map)
        _recreate(op, operands[:1] + kept, attrs)
        return True
    # tir.assume
    iset = integer_set(attrs["condition"])
    if not any(_int_const(v) is not None for v in operands):
        return False
    new_set, kept = _fold_set(iset, operands)
    if not kept:
        _check_assumption(new_set, iset)
        op.erase()
        return True
    attrs["condition"] = new_set
    _recreate(op, kept, attrs)
    return True


def _const_symbol(amap: ir.AffineMap, operands: list) -> bool:
    return any(_int_const(v) is not None for v in operands[amap.n_dims :])


def _fold_set(iset: ir.IntegerSet, operands: list) -> tuple:
    cons = list(iset.constraints)
    exprs, n_syms, kept = _substituted([c.expr for c in cons], iset.n_dims, operands)
    new = ir.IntegerSet.get(iset.n_dims, n_syms, exprs, [c.is_eq for c in cons])
    return ir.IntegerSetAttr.get(new), kept


def _check_assumption(new_set_attr, original: ir.IntegerSet):
    for c in integer_set(new_set_attr).constraints:
        e = c.expr.maybe_downcast()
        value = e.value if isinstance(e, ir.AffineConstantExpr) else None
        if value is None:
            continue
        if (c.is_eq and value != 0) or (not c.is_eq and value < 0):
            raise SpecializeError(f"the values given break the function's assumption {original}")


def _fold_block(op, operands, attrs) -> bool:
    bindings = ir.AffineMapAttr(attrs["bindings"]).value
    n_dims = bindings.n_dims
    if not any(_int_const(v) is not None for v in operands[n_dims:]):
        return False
    new_bindings, kept = _fold_map(bindings, operands)
    n_syms = len(kept) - n_dims
    attrs["bindings"] = ir.AffineMapAttr.get(new_bindings)
    syms = operands[n_dims:]
    doms = []
    i64 = ir.IntegerType.get_signless(64)
    for d in ir.ArrayAttr(attrs["domains"]):
        if not isinstance(d, ir.AffineMapAttr):
            doms.append(d)
            continue
        dmap = ir.AffineMapAttr(d).value
        # (the symbols left keep their order: a prefix of the block's is a prefix of kept)
        exprs, _, _ = _substituted(list(dmap.results), 0, syms[: dmap.n_symbols])
        ints = [e.maybe_downcast() for e in exprs]
        if all(isinstance(e, ir.AffineConstantExpr) for e in ints):
            doms.append(ir.ArrayAttr.get([ir.IntegerAttr.get(i64, e.value) for e in ints]))
        else:
            doms.append(ir.AffineMapAttr.get(ir.AffineMap.get(0, n_syms, exprs)))
    attrs["domains"] = ir.ArrayAttr.get(doms)
    if "predicate" in attrs:
        pred = integer_set(attrs["predicate"])
        attrs["predicate"], _ = _fold_set(pred, operands)
    _recreate(op, kept, attrs)
    return True


def _fold_alloc(op, operands) -> bool:
    """`memref.alloc(%c128) : memref<?x4xf32>` -> `memref.alloc() : memref<128x4xf32>`."""
    consts = [_int_const(v) for v in operands]
    vals = [c for c in consts if c is not None]
    if not operands or len(vals) != len(consts):
        return False
    t = ir.MemRefType(op.results[0].type)
    it = iter(vals)
    shape = [next(it) if t.is_dynamic_dim(k) else s for k, s in enumerate(t.shape)]
    new_type = ir.MemRefType.get(shape, t.element_type, t.layout, t.memory_space)
    attrs = _attrs(op)
    attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([0, 0])
    new = ir.Operation.create(
        op.name,
        results=[new_type],
        operands=[],
        attributes=attrs,
        loc=op.location,
        ip=ir.InsertionPoint(op),
    )
    op.results[0].replace_all_uses_with(new.results[0])
    op.erase()
    return True


def _attrs(op) -> dict:
    return {a: op.attributes[a] for a in op.attributes}


def _recreate(op, operands, attrs):
    """`op` rebuilt with new operands and attributes, its regions moved over."""
    new = ir.Operation.create(
        op.name,
        results=[r.type for r in op.results],
        operands=operands,
        attributes=attrs,
        regions=len(op.regions),
        loc=op.location,
        ip=ir.InsertionPoint(op),
    )
    for old_region, new_region in zip(op.regions, new.regions):
        for b in list(old_region.blocks):
            b.append_to(new_region)
    for a, b in zip(op.results, new.results):
        a.replace_all_uses_with(b)
    op.erase()
    return new


def _refine_arguments(func):
    """Arguments whose `tir.match_shape` now states constant sizes get the static type; a
    match_shape left with nothing to check goes."""
    entry = func.regions[0].blocks[0]
    for op in [o.operation for o in entry.operations if o.operation.name == "tir.match_shape"]:
        buf = op.operands[0]
        amap = ir.AffineMapAttr(op.attributes["shape"]).value
        sizes = [r.maybe_downcast() for r in amap.results]
        t = ir.MemRefType(buf.type)
        shape = [
            s.value if isinstance(s, ir.AffineConstantExpr) else d for s, d in zip(sizes, t.shape)
        ]
        if shape != list(t.shape) and isinstance(buf.owner, ir.Block):
            buf.set_type(ir.MemRefType.get(shape, t.element_type, t.layout, t.memory_space))
        if all(isinstance(s, ir.AffineConstantExpr) for s in sizes):
            op.erase()


def _sink_constants(entry: ir.Block):
    """The constants made for the arguments, at their uses inside loops and blocks (where the
    program written with the numbers has them) and gone where no use is left."""
    for op in [o.operation for o in entry.operations if o.operation.name == "arith.constant"]:
        result = op.results[0]
        for use in list(result.uses):
            user = use.owner.operation
            if user.parent is not None and user.parent == entry.owner:
                continue
            copy = op.clone(ip=ir.InsertionPoint(user))
            user.operands[use.operand_number] = copy.results[0]
        if not list(result.uses):
            op.erase()


def _set_signature(func, attrs: list):
    entry = func.regions[0].blocks[0]
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    new = ir.FunctionType.get([a.type for a in entry.arguments], list(ftype.results))
    func.attributes["function_type"] = ir.TypeAttr.get(new)
    if attrs:
        func.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
    elif "arg_attrs" in func.attributes:
        del func.attributes["arg_attrs"]


def specialize_module(module: ir.Module, values: dict) -> None:
    """Specialize, in place, every function of `module` on the names in `values` it has; a
    name that no function has is an error."""
    funcs = [op.operation for op in module.body.operations if op.operation.name == "func.func"]
    seen = set()
    for f in funcs:
        names = {str_attr(d, "tir.name", f"arg{k}") for k, d in enumerate(arg_attrs(f))}
        mine = {n: v for n, v in values.items() if n in names}
        seen |= set(mine)
        if mine:
            specialize_function(f, mine)
    missing = [n for n in values if n not in seen]
    if missing:
        raise SpecializeError(
            f"no function has a parameter or size named {', '.join(map(repr, missing))}"
        )
