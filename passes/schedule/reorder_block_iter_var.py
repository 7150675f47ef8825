"""reorder_block_iter_var: permute the iter vars of a block (TVM 0.21's output):

    vi, vj, vk = T.axis.remap("SSR", [i, j, k])   ==>   vk, vi, vj = T.axis.remap("RSS", [k, i, j])
    reorder_block_iter_var(C, [2, 0, 1])

Iter var j of the new block is iter var new_order[j] of the old one; bindings, domains, kinds
and names move with it; the body is unchanged. Legality: new_order is a permutation of
0 .. n-1 (n iter vars).
"""

from typing import Sequence

from mlir import ir

from tir_mlir.dialect.ops import Block
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis.structure import erase, move_sid
from tir_mlir.analysis.buffer_util import move_body


def reorder_block_iter_var(blk: Block, new_order: Sequence[int]) -> Block:
    n = len(blk.iter_names)
    order = list(new_order)
    if sorted(order) != list(range(n)) or not all(type(k) is int for k in order):
        raise ScheduleError(
            f"reorder_block_iter_var: the block iter var order {order} is not "
            f"a valid permutation of [0, 1, ..., {n - 1}] in block "
            f"{blk.name!r}"
        )
    # --- rewrite: a new block with permuted iter vars; the body moves over ---------------------
    pick = lambda xs: [xs[k] for k in order]  # noqa: E731
    results = blk.bindings.results
    new = Block.build(
        blk.name,
        pick(blk.iter_names),
        pick(blk.iter_types),
        pick(blk.domains),
        ir.AffineMap.get(len(blk.dims), len(blk.symbols), pick(list(results))),
        blk.dims,
        symbols=blk.symbols,
        predicate=blk.predicate,
        annotations=blk.annotations,
        has_init=blk.init is not None,
        index_dtypes=pick(blk.index_dtypes),
        loc=blk.op.location,
        ip=ir.InsertionPoint(blk.op),
    )
    move_sid(blk.op, new.op)  # handles of the block stay valid
    for old_region, new_region in zip(blk.region_blocks, new.region_blocks):
        for j, k in enumerate(order):
            old_region.arguments[k].replace_all_uses_with(new_region.arguments[j])
        move_body(old_region, new_region)
    erase(blk.op)
    return new
