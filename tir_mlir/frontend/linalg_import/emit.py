"""A planned linalg function -> a `tir` prim_func, built with the dialect's own builders.

Each step is a loop nest (`Loop.build`, one serial loop per iteration dimension) around one
`tir.block` (`Block.build`) whose iter vars are bound to the loops one to one
(`T.axis.remap`). Values are built tree-shaped right before the statement that uses them, as
the TVMScript parser builds them (docs/design.md), so the printer inlines them back and the
schedule primitives see the same IR as for a parsed program.
"""

from typing import Any, Dict, List

from mlir import ir
from mlir.dialects import affine, arith, func, memref, scf

from tir_mlir.analysis.shapes import MATCH_SHAPE, memref_type
from tir_mlir.analysis.symbolic import SymExpr
from tir_mlir.dialect.buffers import SCOPE, scope_attr

from tir_mlir.frontend.linalg_import.body import (
    GenericBody,
    clone_constant,
    emit_index,
    read,
)
from tir_mlir.frontend.linalg_import.linalg_ops import indexing_maps, iterator_types
from tir_mlir.frontend.linalg_import.loops import nest
from tir_mlir.frontend.linalg_import.named_ops import DIM_NAMES
from tir_mlir.frontend.linalg_import.plan import Compute, Copy, Planner
from tir_mlir.frontend.linalg_import.slices import SLICE_OPS, copy_indices


# names of the size vars (implicit vars), as TVMScript programs name sizes
_VAR_NAMES = ("n", "m", "p", "q", "r")


def emit_function(plan: Planner, name: str) -> ir.Operation:
    """The prim_func of `plan` at the current insertion point."""
    params = plan.inputs + [plan.outputs[k] for k in sorted(plan.outputs)]
    reps = plan.sizes.representatives()
    index = ir.IndexType.get()
    ftype = ir.FunctionType.get([_memref_type(plan, b) for b in params] + [index] * len(reps), [])
    fop = func.FuncOp(name, ftype, loc=plan.src.location(plan.func))
    fop.attributes["tir.prim_func"] = ir.UnitAttr.get()
    fop.attributes["tir.func_attrs"] = ir.DictAttr.get({"tir.noalias": ir.BoolAttr.get(True)})
    attrs: List[Dict[str, ir.Attribute]] = [{"tir.name": ir.StringAttr.get(b.name)} for b in params]
    for k in range(len(reps)):
        var = plan.unique_name(_VAR_NAMES[k] if k < len(_VAR_NAMES) else f"n{k}")
        attrs.append(
            {
                "tir.name": ir.StringAttr.get(var),
                "tir.dtype": ir.StringAttr.get("int32"),
                "tir.implicit": ir.UnitAttr.get(),
            }
        )
    fop.arg_attrs = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in attrs])
    arg_locs = [b.loc for b in params] + [params[plan.sizes.origin[k][0]].loc for k in reps]
    entry = fop.add_entry_block(arg_locs)
    plan.symbols = list(entry.arguments)[len(params) :]
    for b, arg in zip(params, entry.arguments):
        b.value = arg
    with ir.InsertionPoint(entry):
        for b in params:
            if any(not isinstance(s, int) for s in _shape(plan, b.shape)):
                _match_shape(plan, b)
        # allocations, then constants: the order the printer writes and the parser reads
        for b in sorted(plan.allocs, key=lambda b: b.data is not None):
            _alloc(plan, b)
        for step in plan.steps:
            # every op built for a step has the linalg op's location (index arithmetic too)
            if isinstance(step, Compute):
                with plan.src.location(step.op):
                    _compute(plan, step)
            else:
                with step.loc:
                    _copy(plan, step)
        func.ReturnOp([], loc=plan.src.location(plan.func))
    return fop.operation


def _memref_type(plan: Planner, b) -> ir.MemRefType:
    """`?` where a size of the buffer is not constant."""
    return memref_type([plan.sizes.canonical(s) for s in b.shape], b.element_type)


def _int(plan: Planner, size) -> int | SymExpr:
    """A (canonical) size of the plan as an Int of the function being built."""
    return size if isinstance(size, int) else SymExpr.from_affine(size, plan.symbols)


def _match_shape(plan: Planner, b):
    """`T.match_buffer(arg0_handle, (n, 16))`: the parameter's shape over the size vars."""
    symbols = []
    exprs = [
        s.embed(symbols) if isinstance(s, SymExpr) else ir.AffineConstantExpr.get(s)
        for s in _shape(plan, b.shape)
    ]
    ir.Operation.create(
        MATCH_SHAPE,
        operands=[b.value, *symbols],
        attributes={"shape": ir.AffineMapAttr.get(ir.AffineMap.get(0, len(symbols), exprs))},
        loc=b.loc,
    )


def _alloc(plan: Planner, b):
    sizes = []
    for x in _shape(plan, b.shape):  # a dynamic size: the var, or an affine.apply here
        if isinstance(x, int):
            continue
        if len(x.symbols) == 1 and str(x.expr) == "s0":
            sizes.append(x.symbols[0])
        else:
            amap, operands = x.to_map()
            sizes.append(affine.AffineApplyOp(amap, operands, loc=b.loc).result)
    op = memref.AllocOp(_memref_type(plan, b), sizes, [], loc=b.loc)
    op.attributes["tir.name"] = ir.StringAttr.get(b.name)
    op.attributes[SCOPE] = scope_attr("global")
    if b.data is not None:
        op.attributes["tir.const_data"] = b.data
    b.value = op.result


def _loop_names(kind: str, iter_types) -> list:
    if kind in DIM_NAMES and len(DIM_NAMES[kind]) == len(iter_types):
        return list(DIM_NAMES[kind])
    n_red = iter_types.count("R")
    names, s, r = [], 0, 0
    for t in iter_types:
        if t == "S":
            names.append(f"ax{s}")
            s += 1
        else:
            names.append("k" if n_red == 1 else f"k{r}")
            r += 1
    return names


def _compute(plan: Planner, step: Compute):
    op = step.op
    n_in = len(op.operands) - _n_outs(op)
    maps, iters = _keepdim_units(op, indexing_maps(op), iterator_types(op), n_in)
    # loop order: the spatial dimensions before the first reduction, the unit ones, the rest
    first_r = iterator_types(op).index("R") if "R" in iterator_types(op) else len(iters)
    order = [
        *range(first_r),
        *range(len(iterator_types(op)), len(iters)),
        *range(first_r, len(iterator_types(op))),
    ]
    extents = _loop_extents(plan, op, maps, len(iters))
    names = _loop_names(step.kind, [iters[d] for d in order])
    block = nest(
        step.name,
        names,
        [iters[d] for d in order],
        [extents[d] for d in order],
        plan.src.location(op),
        has_init=bool(step.inits),
    )
    with ir.InsertionPoint.at_block_terminator(block.body):
        GenericBody(plan.src, op, step.operands, maps, _by_dim(block.iter_vars, order)).emit()
    init = block.init  # (made when there are inits)
    if step.inits and init is not None:
        ivs = _by_dim(init.arguments, order)
        with ir.InsertionPoint.at_block_terminator(init):
            for i, (producer, inputs) in step.inits.items():
                element = maps[n_in + i].results
                value = _producer_value(plan, producer, inputs, element, ivs)
                idx = [emit_index(e, ivs) for e in element]
                memref.StoreOp(value, step.operands[n_in + i].value, idx, loc=plan.src.location(op))


def _by_dim(iter_vars, order) -> list:
    """The iter vars indexed by the op's dimension numbers (the loops run in `order`)."""
    out = [None] * len(order)
    for pos, d in enumerate(order):
        out[d] = iter_vars[pos]
    return out


def _keepdim_units(op, maps, iters, n_in):
    """A reduction whose outputs keep a reduced dimension as size 1 (torch's keepdim:
    `(d0, d1) -> (d0, 0)`) gets a spatial dimension of extent 1 there, appended to the op's
    dimensions: its block writes `sum[v0, v1]` with v1 in range(1), as TVM's keepdims
    reductions do, and compute_at/reverse_compute_at can derive its iteration domain."""
    outs = maps[n_in:]
    if "R" not in iters or any(str(m) != str(outs[0]) for m in outs):
        return maps, iters
    shapes = [ir.ShapedType(v.type).shape for v in list(op.operands)[n_in:]]
    units = [
        p
        for p, e in enumerate(outs[0].results)
        if isinstance(e.maybe_downcast(), ir.AffineConstantExpr)
        and e.maybe_downcast().value == 0
        and all(s[p] == 1 for s in shapes)
    ]
    if not units:
        return maps, iters
    n = len(iters) + len(units)
    new_out = list(outs[0].results)
    for j, p in enumerate(units):
        new_out[p] = ir.AffineExpr.get_dim(len(iters) + j)
    ins = [ir.AffineMap.get(n, 0, list(m.results)) for m in maps[:n_in]]
    return ins + [ir.AffineMap.get(n, 0, new_out)] * len(outs), list(iters) + ["S"] * len(units)


def _producer_value(plan: Planner, producer, inputs, element, ivs) -> ir.Value:
    """What elementwise `producer` computes at output element `element` (index expressions
    of the iter vars `ivs`): its iteration point is `element` through its output map."""
    pmaps = indexing_maps(producer)
    point = [None] * pmaps[-1].n_dims
    for e, r in zip(element, pmaps[-1].results):
        point[r.maybe_downcast().position] = lambda e=e: emit_index(e, ivs)
    return GenericBody(plan.src, producer, list(inputs) + [None], pmaps, point).yielded()


def _n_outs(op) -> int:
    return ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])[1]


def _loop_extents(plan: Planner, op, maps, n: int) -> list:
    """Each iteration dimension's extent: a shape dimension some operand indexes by it alone."""
    extents = [None] * n
    for v, m in zip(op.operands, maps):
        if not isinstance(v.type, (ir.RankedTensorType, ir.MemRefType)):
            continue
        shape = _shape(plan, plan.shape_of(v))
        for size, e in zip(shape, m.results):
            e = e.maybe_downcast()
            if isinstance(e, ir.AffineDimExpr) and extents[e.position] is None:
                extents[e.position] = size
    if None in extents:
        raise plan.src.error(
            f"cannot infer the extent of loop dimension d{extents.index(None)} "
            f"(no operand is indexed by it alone)",
            op,
        )
    return extents


def _shape(plan: Planner, sizes) -> list:
    return [_int(plan, plan.sizes.canonical(s)) for s in sizes]


def _copy(plan: Planner, step: Copy):
    """dst[...] = src[...]: a plain copy, an expand/collapse reshape, a pad, a slice or a
    concat part."""
    dst, src, op = step.dst, step.src, step.op
    src_shape, dst_shape = _shape(plan, src.shape), _shape(plan, dst.shape)
    if op is not None and op.name in SLICE_OPS:
        shapes = [_shape(plan, plan.shape_of(v)) for v in op.operands]
        shape, src_idx, dst_idx = copy_indices(op, step.part, shapes)
    else:
        shape, dst_idx = dst_shape, None
        src_idx = (
            None
            if op is not None and op.name == "tensor.pad"
            else _source_indices(op, src_shape, dst_shape)
        )
    n = len(shape)
    block = nest(step.name, [f"ax{i}" for i in range(n)], ["S"] * n, list(shape), step.loc)
    ivs = block.iter_vars
    with ir.InsertionPoint.at_block_terminator(block.body):
        if src_idx is None:
            value = _pad_value(plan, op, src, src_shape, dst_shape, ivs, step.loc)
        else:
            value = read(
                src, lambda: [emit_index(e, ivs) for e in src_idx], dst.element_type, step.loc
            )
        idx = list(ivs) if dst_idx is None else [emit_index(e, ivs) for e in dst_idx]
        memref.StoreOp(value, dst.value, idx, loc=step.loc)


def _reassociation(op) -> list:
    return [
        [ir.IntegerAttr(x).value for x in ir.ArrayAttr(g)]
        for g in ir.ArrayAttr(op.attributes["reassociation"])
    ]


def _source_indices(op, src_shape, dst_shape) -> list:
    """The source element each destination element (dims d0...) copies."""
    # a unit dimension's index is 0: `A[v0]`, not `A[v0 + v1]`
    d = [
        ir.AffineExpr.get_dim(i) if n != 1 else ir.AffineExpr.get_constant(0)
        for i, n in enumerate(dst_shape)
    ]
    if op is None:
        return [ir.AffineExpr.get_dim(i) for i in range(len(dst_shape))]
    # (only the outermost dimension of a group may be dynamic: the planner checked)
    out: List[Any] = [None] * len(src_shape)  # each an AffineExpr once the groups are done
    if op.name == "tensor.expand_shape":  # a source dim = a group of destination dims
        for j, group in enumerate(_reassociation(op)):
            e = d[group[0]]
            for k in group[1:]:
                e = e * dst_shape[k] + d[k]
            out[j] = e
    else:  # a destination dim = a group of source dims
        for k, group in enumerate(_reassociation(op)):
            inner = 1
            for j in reversed(group):
                e = d[k] if inner == 1 else ir.AffineExpr.get_floor_div(d[k], inner)
                if j == group[0]:
                    out[j] = e
                else:
                    out[j] = ir.AffineExpr.get_mod(e, src_shape[j])
                    inner *= src_shape[j]
    return [ir.AffineExpr.simplify_affine_expr(e, len(dst_shape), 0) for e in out]


def _pad_value(plan: Planner, op, src, src_shape, dst_shape, ivs, loc) -> ir.Value:
    """`T.if_then_else(low <= i < low + size..., src[i - low], pad)`, as TVM's pad (a
    dynamic dimension is not padded: the planner checked)."""
    low = list(ir.DenseI64ArrayAttr(op.attributes["static_low"]))
    pad = list(op.regions[0].blocks[0].operations)[-1].operands[0]
    if not any(low) and src_shape == dst_shape:
        return read(src, lambda: list(ivs), src.element_type, loc)
    index = ir.IndexType.get()
    cond = None
    for i, (lo, size) in enumerate(zip(low, src_shape)):
        padded = dst_shape[i]
        if lo == 0 and padded == size:
            continue
        checks = []
        if lo:
            checks.append(
                arith.CmpIOp(
                    arith.CmpIPredicate.sle,
                    arith.ConstantOp(index, lo, loc=loc).result,
                    ivs[i],
                    loc=loc,
                ).result
            )
        if lo + size < padded:
            checks.append(
                arith.CmpIOp(
                    arith.CmpIPredicate.slt,
                    ivs[i],
                    arith.ConstantOp(index, lo + size, loc=loc).result,
                    loc=loc,
                ).result
            )
        for c in checks:
            cond = c if cond is None else arith.AndIOp(cond, c, loc=loc).result
    if_op = scf.IfOp(cond, [ir.ShapedType(op.results[0].type).element_type], has_else=True, loc=loc)
    d = [ir.AffineExpr.get_dim(i) for i in range(len(ivs))]
    with ir.InsertionPoint(if_op.then_block):

        def idx():
            return [
                emit_index(e + (-lo), ivs) if lo else ivs[i]
                for i, (e, lo) in enumerate(zip(d, low))
            ]

        scf.YieldOp([read(src, idx, ir.ShapedType(op.results[0].type).element_type, loc)], loc=loc)
    with ir.InsertionPoint(if_op.regions[1].blocks[0]):  # (the else block: made with one)
        scf.YieldOp([clone_constant(plan.src, pad, op)], loc=loc)
    return if_op.results[0]
