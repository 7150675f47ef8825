"""decompose_reduction: move a reduction block's init into its own block before a loop.

decompose_reduction(C, j) on `for i, j, k: block C (init C[vi, vj] = 0; C += ...)`::

    for i:
        for j_init:                                   # loops under j bound to spatial iters
            block "C_init": vi, vj = S, S             # the init, as a block of its own
                C[vi, vj] = 0
        for j, k:
            block "C_update": vi, vj, vk = S, S, R    # the old block, without init
                C[vi, vj] = C[vi, vj] + ...

Legality: the block has an init; the loop is an ancestor of the block (within the block's
scope); every loop from it down to the block changes the block's iter vars (a loop that only
repeats the block, as compute_at under another block's loop makes, would accumulate the
update again without the init); the init does not use reduction iter vars; no conjunct of its predicate mixes loops copied
for the init with loops that are not (the others are kept on the init or dropped, as TVM). Returns the init block; the original
block handle now names "C_update".
"""

from mlir import ir

from tir_mlir.ir import region_overrides as overrides

from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis.buffer_util import (
    dims_of,
    enclosing_loops,
    erase_region_block,
    move_body,
    substitute,
)


def decompose_reduction(block: Block, loop: Loop) -> Block:
    if block.init is None:
        raise ScheduleError(f"decompose_reduction: block {block.name!r} has no init")
    loops = enclosing_loops(block.op)
    pos = next((i for i, l in enumerate(loops) if l.op == loop.op), None)
    if pos is None:
        raise ScheduleError(
            f"decompose_reduction: loop {loop.name!r} is not an ancestor of block {block.name!r}"
        )
    types = block.iter_types
    binds = block.bindings.results
    at = _positions(block.dims)
    for outer in loops[:pos]:
        dpos = set(at.get(outer.iv, ()))
        if any(types[k] != "S" and dims_of(binds[k]) & dpos for k in range(len(types))):
            raise ScheduleError(
                f"decompose_reduction: loop {outer.name!r} above loop "
                f"{loop.name!r} is bound to a reduction iter var of block "
                f"{block.name!r}; the init would run more than once"
            )
    for inner in loops[pos:]:
        if inner.extent != 1 and not any(_depends_on(d, inner.iv) for d in block.dims):
            raise ScheduleError(
                f"decompose_reduction: loop {inner.name!r} repeats block "
                f"{block.name!r} without changing its iter vars; the init, "
                f"moved out of it, would run once for all its updates"
            )
    for k, arg in enumerate(block.init.arguments):
        if types[k] != "S" and len(list(arg.uses)):
            raise ScheduleError(
                f"decompose_reduction: the init of block {block.name!r} uses "
                f"reduction iter var {block.iter_names[k]!r}"
            )
    with block.op.location:
        return _decompose(block, loops[pos:])


def _depends_on(value: ir.Value, iv: ir.Value) -> bool:
    """Whether a block dim is the loop var `iv` or computed from it (a non-affine binding)."""
    if value == iv:
        return True
    if isinstance(value.owner, ir.Block):
        return False
    return any(_depends_on(v, iv) for v in value.owner.operation.operands)


def _positions(dims) -> dict:
    """Value -> its positions among a block's dims (values hash as they compare: by the IR
    value they wrap)."""
    at = {}
    for p, v in enumerate(dims):
        at.setdefault(v, []).append(p)
    return at


def _decompose(block: Block, inner: list) -> Block:
    loc = block.op.location
    dims, binds = block.dims, block.bindings.results
    spatial = [k for k, t in enumerate(block.iter_types) if t == "S"]
    used = set().union(*[dims_of(binds[k]) for k in spatial]) if spatial else set()
    at = _positions(dims)
    inner_ivs = {l.iv for l in inner}
    # the loops copied for the init: those a spatial iter var is bound to
    copied = [l for l in inner if any(p in used for p in at.get(l.iv, ()))]
    copied_at = {p for l in copied for p in at[l.iv]}
    # The init keeps the conjuncts of the block's predicate on loops it has (a non-dividing
    # split guards the init too); those on reduction loops only filter the update (as TVM).
    uncopied = {p for p, v in enumerate(dims) if p not in copied_at and v in inner_ivs}
    conjuncts = []
    for c in block.predicate.constraints if block.predicate is not None else []:
        on = dims_of(c.expr)
        if not on & uncopied:
            conjuncts.append(c)
        elif on & copied_at:
            raise ScheduleError(
                f"decompose_reduction: the predicate (T.where) of block "
                f"{block.name!r} mixes loops copied for the init with others"
            )
    positions = sorted(used.union(*[dims_of(c.expr) for c in conjuncts]))
    if any(p in uncopied for p in positions):
        raise ScheduleError(
            f"decompose_reduction: block {block.name!r} binds a spatial "
            f"iter var to a loop that is not copied"
        )
    ip = ir.InsertionPoint(inner[0].op)
    remap = {}  # old dim value position -> new value
    for l in copied:
        nl = l.build_like(l.name + "_init", ip=ip)
        for p in at[l.iv]:
            remap[p] = nl.iv
        ip = ir.InsertionPoint.at_block_terminator(nl.body)
    new_dims, dim_pos = [], {}
    for p in positions:
        dim_pos[p] = len(new_dims)
        new_dims.append(remap.get(p, dims[p]))
    sub = [
        ir.AffineExpr.get_dim(dim_pos[p]) if p in dim_pos else ir.AffineExpr.get_constant(0)
        for p in range(len(dims))
    ]
    symbols = block.symbols  # (symbol k stays symbol k: the same operands)
    predicate = (
        ir.IntegerSet.get(
            len(new_dims),
            len(symbols),
            [substitute(c.expr, sub) for c in conjuncts],
            [c.is_eq for c in conjuncts],
        )
        if conjuncts
        else None
    )
    init = Block.build(
        block.name + "_init",
        [block.iter_names[k] for k in spatial],
        ["S"] * len(spatial),
        [block.domains[k] for k in spatial],
        ir.AffineMap.get(len(new_dims), len(symbols), [substitute(binds[k], sub) for k in spatial]),
        new_dims,
        symbols=symbols,
        predicate=predicate,
        annotations=block.annotations or None,
        index_dtypes=[block.index_dtypes[k] for k in spatial],
        loc=loc,
        ip=ip,
    )
    old_init = block.init
    assert old_init is not None  # decompose_reduction checked
    move_body(old_init, init.body)
    for k, arg in zip(spatial, init.body.arguments):
        old_init.arguments[k].replace_all_uses_with(arg)
    erase_region_block(old_init)
    block.op.attributes["name"] = ir.StringAttr.get(block.name + "_update")
    overrides.set_writes_first(block.op)  # TVM puts the written buffers first in T.reads
    return init
