"""pad_einsum: pad an einsum block's iteration domain up to multiples of `padding`, through
zero-padded copies of its inputs and a padded output copied back (TVM 0.21's output):

    for i, j, k in T.grid(127, 127, 127):           A_pad = alloc((128, 128)) ... C_pad
        block C: C[i, j] += A[i, k] * B[k, j]   ->   for i0, i1 in T.grid(128, 128):
                                                        block A_pad: A_pad[v0, v1] =
    pad_einsum(C, [32, 32, 32])                            T.if_then_else(v0 < 127 and v1 < 127,
                                                                          A[v0, v1], 0)
                                                     (B_pad alike)
                                                     for i, j, k in T.grid(128, 128, 128):
                                                         block C: C_pad[i, j] += A_pad[i, k] * B_pad[k, j]
                                                     for i0, i1 in T.grid(127, 127):
                                                         block C_pad: C[v0, v1] = C_pad[v0, v1]

Iter var v of extent E gets extent ceil(E / p) * p; a size `n` gets `(n + 31) // 32 * 32`, the map
`s0 ceildiv 32 * 32` of its symbol (allocations of that size, loops and domains over it, the
fill comparing with n itself). A buffer the block reads (other than its
output) whose dimensions change gets a `<name>_pad` copy, zero outside the original shape,
built before the block's loop nest; the output gets a `<name>_pad` buffer copied back after
it, over the original extents. A loop bound to a padded iter var alone grows with it; other
bindings keep their loops (the padded points are then simply not computed). Nothing to pad:
the module is unchanged (as TVM).

Legality: `padding` has one positive integer per iter var; the block is a leaf at the function
root whose loop nest holds only it, its iter var domains start at 0, its body is one store
(with an optional T.init() store of the same element) and every buffer index is an iter var
or a constant (the einsum pattern), each buffer always indexed alike; the output is indexed by
distinct iter vars and read only by a reduction with T.init(). Beyond TVM (which gives wrong
numbers there): a reduction loop may only grow when the update is `out + x` with x zero
wherever a padded input is zero (a padded input itself, or a product with one as a factor).
"""

from typing import Dict, List, Optional

from mlir import ir
from mlir.dialects import arith, memref, scf

from tir_mlir.dialect.buffers import buffer_attrs
from tir_mlir.dialect.ops import Block, Loop, body_ops
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import structure as analysis
from tir_mlir.analysis.shapes import buffer_shape, size_operands
from tir_mlir.analysis.symbolic import Int, SymExpr, tile_count
from tir_mlir.analysis.buffer_util import (
    accesses,
    block_reads,
    block_writes,
    buffer_name,
    buffer_scope,
    func_of,
    i64_array,
    top_stmt,
)
from tir_mlir.passes.schedule.cache_read_write import make_cache_alloc, make_nest

WHO = "pad_einsum"
_EXPR_OPS = ("memref.load", "arith.", "math.", "tir.call", "scf.if", "scf.yield")


class _Plan:
    def __init__(self, block, extents, output, inputs, indices, grow):
        self.block, self.extents, self.output, self.inputs = block, extents, output, inputs
        self.indices = indices  # buffer -> [iter var position or ("const", c)] per dim
        self.grow = grow  # loops to lengthen: [(Loop, new extent)]


def check(block: Block, padding: List[int]) -> Optional[_Plan]:
    """All legality checks; None when nothing changes. Mutates nothing."""
    n = len(block.iter_names)
    if (
        not isinstance(padding, (list, tuple))
        or len(padding) != n
        or not all(isinstance(p, int) and not isinstance(p, bool) and p > 0 for p in padding)
    ):
        raise ScheduleError(
            f"{WHO}: padding must be {n} positive integers (one per iter var "
            f"of block {block.name!r}), got {padding!r}"
        )
    top_parent = top_stmt(block.op).parent
    if top_parent is None or top_parent.name != "func.func":
        raise ScheduleError(
            f"{WHO}: block {block.name!r} is nested in another block (only "
            f"blocks at the function root are supported)"
        )
    if any(lo != 0 for lo, _ in block.domains):
        raise ScheduleError(f"{WHO}: the iter vars of block {block.name!r} must start at 0")
    _check_body(block)
    writes = block_writes(block)
    if len(writes) != 1:
        raise ScheduleError(
            f"{WHO}: block {block.name!r} is not an einsum (it writes {len(writes)} buffers)"
        )
    output = writes[0]
    indices = _indices(block)
    out_idx = indices[output]
    if any(isinstance(x, tuple) for x in out_idx) or len(set(out_idx)) != len(out_idx):
        raise ScheduleError(
            f"{WHO}: the output {buffer_name(output)!r} of block "
            f"{block.name!r} must be indexed by distinct iter vars"
        )
    if any(k == "load" and v == output for _, k, v in accesses(block.op)) and block.init is None:
        raise ScheduleError(
            f"{WHO}: block {block.name!r} reads its output "
            f"{buffer_name(output)!r} without T.init() (the padded copy "
            f"would start unwritten)"
        )
    extents = [tile_count(ext, p) * p for (_, ext), p in zip(block.domains, padding)]
    if extents == [ext for _, ext in block.domains]:
        return None
    top = top_stmt(block.op)
    if analysis.blocks_under(top) != [block.op] and top != block.op:
        raise ScheduleError(f"{WHO}: the loops of block {block.name!r} hold other blocks")
    inputs = [b for b in block_reads(block) if b != output]
    grow = _growing_loops(block, extents)
    reduce_grown = {k for k, _ in grow if block.iter_types[k] == "R"}
    if reduce_grown:
        _check_zero_update(block, output, indices, reduce_grown)
    return _Plan(block, extents, output, inputs, indices, [g for _, g in grow])


def _check_body(block: Block):
    for region in [block.body] + ([block.init] if block.init is not None else []):
        ops = body_ops(region)
        stores = [o for o in ops if o.name == "memref.store"]
        others = [o for o in ops if o.name != "memref.store" and not o.name.startswith(_EXPR_OPS)]
        if len(stores) != 1 or others or any(o.name in ("scf.if",) and not o.results for o in ops):
            raise ScheduleError(
                f"{WHO}: block {block.name!r} is not an einsum (its body must be a single store)"
            )


def _indices(block: Block) -> Dict[ir.Value, list]:
    """Per buffer, its index per dimension: an iter var position or ("const", c)."""
    out: Dict = {}
    args = list(block.iter_vars) + (list(block.init.arguments) if block.init else [])
    n = len(block.iter_names)
    for op, kind, buf in accesses(block.op):
        idx = list(op.operands)[1 if kind == "load" else 2 :]
        found = []
        for v in idx:
            pos = next((k % n for k, a in enumerate(args) if a == v), None)
            if pos is None:
                c = _const(v)
                if c is None:
                    raise ScheduleError(
                        f"{WHO}: block {block.name!r} is not an einsum (an "
                        f"index of {buffer_name(buf)!r} is neither an iter var "
                        f"nor a constant)"
                    )
                found.append(("const", c))
            else:
                found.append(pos)
        if buf in out and out[buf] != found:
            raise ScheduleError(
                f"{WHO}: block {block.name!r} is not an einsum (buffer "
                f"{buffer_name(buf)!r} is accessed with different indices)"
            )
        out[buf] = found
    return out


def _const(v: ir.Value) -> Optional[int]:
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    return ir.IntegerAttr(owner.attributes["value"]).value


def _growing_loops(block: Block, extents) -> list:
    """[(iter var k, (Loop, new extent))] for padded iter vars bound to a loop alone."""
    out = []
    results = block.bindings.results
    loops = analysis.enclosing_loops(block.op)
    for k, e in enumerate(results):
        old = block.domains[k][1]
        if extents[k] == old or not isinstance(e, ir.AffineDimExpr):
            continue
        iv = block.dims[e.position]
        lp = next((lp for lp in loops if Loop(lp).iv == iv), None)
        if lp is None or (Loop(lp).min, Loop(lp).extent) != (0, old):
            continue
        others = [r for j, r in enumerate(results) if j != k]
        if any(analysis._mentions(r, [e.position]) for r in others) or (
            block.predicate is not None
            and any(analysis._mentions(c.expr, [e.position]) for c in block.predicate.constraints)
        ):
            continue
        out.append((k, (Loop(lp), extents[k])))
    return out


def _check_zero_update(block: Block, output, indices, reduce_grown):
    """The update adds nothing on a padded reduction point: out = out + x, x zero there."""
    store = next(o for o in body_ops(block.body) if o.name == "memref.store")
    value = store.operands[0]
    op = None if isinstance(value.owner, ir.Block) else value.owner
    ok = False
    if op is not None and op.name in ("arith.addf", "arith.addi"):
        a, b = op.operands
        for acc, x in ((a, b), (b, a)):
            if _is_load_of(acc, output) and all(
                _zero_when_padded(x, k, output, indices) for k in reduce_grown
            ):
                ok = True
    if not ok:
        names = ", ".join(block.iter_names[k] for k in sorted(reduce_grown))
        raise ScheduleError(
            f"{WHO}: padding reduction iter var(s) {names} of block "
            f"{block.name!r} would change its result (the update must be "
            f"out + x with x zero on padded inputs, e.g. a sum of products)"
        )


def _is_load_of(v: ir.Value, buf) -> bool:
    return (
        not isinstance(v.owner, ir.Block)
        and v.owner.name == "memref.load"
        and v.owner.operands[0] == buf
    )


def _zero_when_padded(v: ir.Value, k: int, output, indices) -> bool:
    """v is 0 wherever iter var k is past its original extent."""
    if isinstance(v.owner, ir.Block):
        return False
    op = v.owner
    if op.name == "memref.load":
        buf = op.operands[0]
        return buf != output and k in indices.get(buf, [])
    if op.name in ("arith.mulf", "arith.muli"):
        return any(_zero_when_padded(x, k, output, indices) for x in op.operands)
    if op.name in (
        "arith.extf",
        "arith.truncf",
        "arith.sitofp",
        "arith.extsi",
        "arith.trunci",
        "arith.fptosi",
    ):
        return _zero_when_padded(op.operands[0], k, output, indices)
    return False


# --- rewrite ----------------------------------------------------------------------------------
def pad_einsum(block: Block, padding: List[int]):
    plan = check(block, padding)
    if plan is None:
        return
    func = func_of(block.op)
    top = top_stmt(block.op)
    loc = block.op.location
    new_bufs = {}
    for buf in plan.inputs:
        shape = _padded_shape(buf, plan)
        if shape != buffer_shape(buf):
            new_bufs[buf] = (_alloc(func, buf, shape, loc), shape)
    out_shape = _padded_shape(plan.output, plan)
    if out_shape != buffer_shape(plan.output):
        new_bufs[plan.output] = (_alloc(func, plan.output, out_shape, loc), out_shape)
    for buf, (new, shape) in new_bufs.items():
        if buf != plan.output:
            _fill_block(func, buf, new, shape, loc, top)
    if plan.output in new_bufs:
        new = new_bufs[plan.output][0]
        old_ext = [block.domains[k][1] for k in plan.indices[plan.output]]
        copy = make_nest(
            buffer_name(new),
            old_ext,
            loc,
            top,
            lambda ivs: memref.StoreOp(memref.LoadOp(new, ivs).result, plan.output, ivs),
        )
        _name_loops(copy)
        top_stmt(copy.op).move_after(top)
    for op, kind, buf in accesses(block.op):
        if buf in new_bufs:
            op.operands[0 if kind == "load" else 1] = new_bufs[buf][0]
    for lp, ext in plan.grow:
        _set_extent(lp, ext)
    _set_domains(block, plan.extents)


def _set_extent(lp: Loop, ext: Int):
    """The loop runs from its min to min + ext (a size: a bound map over its symbols)."""
    lo_map, lo_ops = lp.lower_bound
    hi = lp.min + ext
    if isinstance(hi, SymExpr):
        hi_map, hi_ops = hi.to_map()
    else:
        hi_map, hi_ops = ir.AffineMap.get_constant(hi), []
    lp.op.attributes["upperBoundMap"] = ir.AffineMapAttr.get(hi_map)
    if not hi_ops and len(lp.op.operands) == len(lo_ops):
        return
    lp.op.attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get(
        [len(lo_ops), len(hi_ops), 0]
    )
    analysis.set_operands(lp.op, list(lo_ops) + list(hi_ops))


def _set_domains(block: Block, extents: List[Int]):
    """Domains [0, e) per iter var; a symbolic extent is a map over the block's symbols
    (extended, with the bindings and predicate, by those it lacks)."""
    if not any(isinstance(e, SymExpr) for e in extents):
        block.set_attr("domains", ir.ArrayAttr.get([i64_array((0, e)) for e in extents]))
        return
    syms = analysis.block_symbols(block.op)
    exprs = [e.embed(syms) if isinstance(e, SymExpr) else e for e in extents]
    zero = ir.AffineConstantExpr.get(0)
    doms = [
        ir.AffineMapAttr.get(ir.AffineMap.get(0, len(syms), [zero, e]))
        if isinstance(e, ir.AffineExpr)
        else i64_array((0, e))
        for e in exprs
    ]
    if len(syms) != len(block.symbols):  # (only a new symbol: the bindings keep their dims)
        block = Block(analysis.rebind_block(block.op, block.dims, {}, symbols=syms))
    block.set_attr("domains", ir.ArrayAttr.get(doms))


def _padded_shape(buf, plan: _Plan) -> List[Int]:
    shape = buffer_shape(buf)
    return [
        plan.extents[x] if not isinstance(x, tuple) else shape[d]
        for d, x in enumerate(plan.indices[buf])
    ]


def _alloc(func, buf, shape, loc) -> ir.Value:
    new = make_cache_alloc(
        func, buf, f"{buffer_name(buf)}_pad", buffer_scope(buf), loc, shape=shape
    )
    if "tir.axis_separators" in new.owner.attributes:  # TVM's padded buffer has none (seed 2682)
        del new.owner.attributes["tir.axis_separators"]
    return new


def _name_loops(block: Block):
    for d, lp in enumerate(analysis.enclosing_loops(block.op)):
        Loop(lp).op.attributes["tir.name"] = ir.StringAttr.get(f"i{d}")


def _fill_block(func, buf, new, shape, loc, before):
    """new[v] = T.if_then_else(v_d < shape_d and ..., buf[v], 0) over new's shape."""
    old = buffer_shape(buf)
    dtype = ir.MemRefType(buf.type).element_type
    index = ir.IndexType.get()
    padded = [d for d in range(len(shape)) if shape[d] != old[d]]
    # (a symbolic size is a value at the top level of the function: made before the nest)
    sizes = {d: size_operands(func, [old[d]])[0][0] for d in padded if isinstance(old[d], SymExpr)}

    def bound(d: int) -> ir.Value:
        size = old[d]
        return arith.ConstantOp(index, size).result if isinstance(size, int) else sizes[d]

    def fill(ivs):
        conds = [arith.CmpIOp(arith.CmpIPredicate.slt, ivs[d], bound(d)).result for d in padded]
        cond = conds[0]
        for c in conds[1:]:
            cond = arith.AndIOp(cond, c).result
        ifop = scf.IfOp(cond, [dtype], has_else=True)
        with ir.InsertionPoint(ifop.then_block):
            scf.YieldOp([memref.LoadOp(buf, ivs).result])
        else_block = ifop.else_block
        assert else_block is not None  # built with has_else
        with ir.InsertionPoint(else_block):
            scf.YieldOp([_zero(dtype, buf)])
        memref.StoreOp(ifop.results[0], new, ivs)

    _name_loops(make_nest(buffer_name(new), shape, loc, before, fill))


def _zero(dtype, buf) -> ir.Value:
    is_float = isinstance(dtype, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type))
    c = arith.ConstantOp(dtype, 0.0 if is_float else 0)  # (a FloatAttr / IntegerAttr of dtype)
    attrs = buffer_attrs(buf)
    if "tir.dtype" in attrs:
        c.operation.attributes["tir.dtype"] = attrs["tir.dtype"]
    return c.result
