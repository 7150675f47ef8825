"""blockize of a list of sibling blocks: one outer block around their loop nests (TVM 0.21's
`blockize([b1, b2, ...])`)::

    for m in range(6):                          for m in range(6):
        for i, j in T.grid(3, 1):                   with T.block("outer_B_C_"):
            block B (vi = i, vj = j)                    vi_o = T.axis.spatial(1, 0)
        for i, j in T.grid(128, 64):        ->          vj_o = T.axis.spatial(1, 0)
            block C (vi = i, vj = j)                    for i, j in T.grid(3, 1):
                                                            block B (vi_i = i)
                                                        for i, j in T.grid(128, 64):
                                                            block C (vi_i = i, vj_i = j)

The outer block is named `outer_` + each block's name + `_`; its iter vars are the first
block's, `<name>_o` of extent 1 bound to 0 (every block's loops are inside it). Each block
keeps its loops; its iter vars become `<name>_i`, an iter var bound to unit loops only is
dropped, replaced by 0 (`preserve_unit_iters=False`) or by the outer block's iter var at its
position (as TVM substitutes it).

Legality: at least one block, no block twice; the blocks' loop nests are consecutive
statements of one loop (or the function root), each nest holding only its block (loops and
the block); every binding uses only the nest's loops (an iter var bound to a loop outside
would need a non-unit outer iter var, TVM's subspace division of it); the blocks have as many
iter vars as the first (TVM indexes the first's outer iter vars by position) and no T.init
(TVM refuses an outer reduction; an inner one it keeps is not implemented here).
"""

from typing import List

from mlir import ir
from mlir.dialects import arith

from tir_mlir.analysis.buffer_util import dims_of, move_body, replace_uses, substitute
from tir_mlir.analysis.structure import enclosing_loops, erase, move_sid
from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.passes.schedule.blockize import _divide, _inner_block, _predicate, inner_extents

C = ir.AffineExpr.get_constant
WHO = "blockize"


class _Nest:
    """One block and the loops around it below the common parent (`top` is the outermost,
    or the block itself); `parts`: per iter var, `_divide`'s (outer, inner, E, outer extent)
    with every loop of the nest inside."""

    def __init__(self, block: Block, top: ir.Operation, loops: list, parts: list):
        self.block, self.top, self.loops, self.parts = block, top, loops, parts


def check(blocks: List[Block]) -> List[_Nest]:
    """All legality checks, nothing mutated; the nests in program order."""
    if not blocks:
        raise ScheduleError(f"{WHO}: the list of blocks is empty")
    ops = [b.op for b in blocks]
    if any(ops[k] == ops[j] for k in range(len(ops)) for j in range(k)):
        raise ScheduleError(f"{WHO}: a block is given twice")
    nests = [_nest(b) for b in blocks]
    parent = nests[0].top.parent
    if any(n.top.parent != parent for n in nests):
        raise ScheduleError(
            f"{WHO}: blocks {', '.join(repr(b.name) for b in blocks)} are not siblings "
            f"(their loop nests are not statements of one loop or block)"
        )
    assert parent is not None  # a loop nest's top is a statement of a function or block
    siblings = [o.operation for o in parent.regions[0].blocks[0].operations]
    position = {
        k: next(i for i, o in enumerate(siblings) if o == n.top) for k, n in enumerate(nests)
    }
    order = sorted(range(len(nests)), key=lambda k: position[k])
    spots = [position[k] for k in order]
    if spots != list(range(spots[0], spots[0] + len(spots))):
        raise ScheduleError(f"{WHO}: the loop nests of the blocks are not consecutive")
    first = nests[order[0]].block
    for n in nests:
        if len(n.block.iter_names) != len(first.iter_names):
            raise ScheduleError(
                f"{WHO}: block {n.block.name!r} has {len(n.block.iter_names)} iter vars, "
                f"the first block {first.name!r} {len(first.iter_names)}"
            )
        if n.block.init is not None:
            raise ScheduleError(
                f"{WHO}: block {n.block.name!r} has a T.init (blockize of several blocks "
                f"takes blocks without one)"
            )
    return [nests[k] for k in order]


def _nest(block: Block) -> _Nest:
    """The block's loops up to the first loop holding anything else; refused when a binding
    uses a loop above them."""
    top = block.op
    loops = []
    for lp in reversed(enclosing_loops(block.op)):
        body = [o for o in Loop(lp).body.operations if o.operation.name != "affine.yield"]
        if len(body) != 1:
            break
        loops.append(Loop(lp))
        top = lp
    extents = inner_extents(block, loops)
    inner = set(extents)
    parts = []
    for k, (e, dom) in enumerate(zip(block.bindings.results, block.domains)):
        what = f"the binding of {block.iter_names[k]!r} in block {block.name!r}"
        if dims_of(e) - inner:
            raise ScheduleError(
                f"{WHO}: {what} uses a loop outside the blocks' loop nests (each block's "
                f"bindings must use only the loops around it alone)"
            )
        part = _divide(e, inner, extents, dom[1], what)
        if part[3] != 1:
            raise ScheduleError(f"{WHO}: {what} does not cover its domain with its own loops")
        parts.append(part)
    return _Nest(block, top, loops, parts)


def blockize_blocks(blocks: List[Block], preserve_unit_iters: bool = True) -> Block:
    nests = check(blocks)
    first = nests[0].block
    with first.op.location:
        outer = Block.build(
            "outer_" + "".join(n.block.name + "_" for n in nests),
            [name + "_o" for name in first.iter_names],
            first.iter_types,
            [(0, 1)] * len(first.iter_names),
            ir.AffineMap.get(0, 0, [C(0)] * len(first.iter_names)),
            [],
            ip=ir.InsertionPoint(nests[0].top),
        )
    end = list(outer.body.operations)[-1]
    for n in nests:
        n.top.move_before(end)
        _rebuild(n, list(outer.body.arguments), preserve_unit_iters)
    return outer


def _rebuild(n: _Nest, outer_args: list, preserve_unit_iters: bool):
    """The block again, with its inner iter vars only, the dropped ones read as 0 or as the
    outer block's iter var at their position."""
    block, parts = n.block, n.parts
    dims = block.dims
    inner_pos = [p for p, v in enumerate(dims) if any(v == lp.iv for lp in n.loops)]
    ks = [k for k, p in enumerate(parts) if p[1] is not None]

    preds = [(c.expr, c.is_eq) for c in block.predicate.constraints] if block.predicate else []
    new = _inner_block(
        block,
        block.name,
        [block.iter_names[k] + "_i" for k in ks],
        [block.iter_types[k] for k in ks],
        [(0, parts[k][2]) for k in ks],
        [_over(parts[k][1], inner_pos, len(dims)) for k in ks],
        [dims[p] for p in inner_pos],
        block.op,
        _predicate(preds, inner_pos, len(dims)),
    )
    move_sid(block.op, new.op)
    old_args = list(block.body.arguments)
    move_body(block.body, new.body)
    zero = None
    for k, old in enumerate(old_args):
        if k in ks:
            value = new.body.arguments[ks.index(k)]
            replace_uses(old, lambda _u, v=value: v)
            continue
        if preserve_unit_iters:
            replace_uses(old, lambda _u, v=outer_args[k]: v)
            continue
        if zero is None:
            with ir.InsertionPoint.at_block_begin(new.body), block.op.location:
                zero = arith.ConstantOp(ir.IndexType.get(), 0).result
        replace_uses(old, lambda _u, v=zero: v)
    erase(block.op)


def _over(e: ir.AffineExpr, positions: list, ndims: int) -> ir.AffineExpr:
    """e (over the block's dims) over `positions` only."""
    return substitute(
        e,
        [
            ir.AffineExpr.get_dim(positions.index(p)) if p in positions else C(0)
            for p in range(ndims)
        ],
    )
