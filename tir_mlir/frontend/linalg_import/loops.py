"""One loop nest around one block: how every imported op is laid out."""

from mlir import ir

from tir_mlir.dialect.ops import Block, Loop


def nest(name: str, loop_names, iter_types, extents, loc, has_init=False) -> Block:
    """Loops `loop_names` around a block whose iter vars (`v_` + loop name) are bound to them."""
    loops, ip = [], None
    for n, e in zip(loop_names, extents):
        loop = Loop.build(n, e, loc=loc, ip=ip)
        loops.append(loop)
        ip = ir.InsertionPoint.at_block_terminator(loop.body)
    n = len(extents)
    return Block.build(
        name,
        [f"v_{x}" for x in loop_names],
        iter_types,
        [(0, e) for e in extents],
        ir.AffineMap.get_identity(n),
        [lp.iv for lp in loops],
        has_init=has_init,
        loc=loc,
        ip=ip,
    )
