"""loop_partition: one loop -> consecutive loops over parts of its range, each a copy of the
body, inside opaque blocks (TVM 0.21's output):

    for j in range(10):                 with T.block("B_j_common"):
        with T.block("B"):                  with T.block("B_j0_partition"):
            vj = T.axis.spatial(10, j)          for j0 in range(3):
            ...                      ==>            with T.block("B_j0"): vj = T.axis.spatial((0, 3), j0) ...
                                            with T.block("B_j1_partition"):
                                                for j1 in range(3, 10):
                                                    with T.block("B_j1"): ...

Names: X is the first block under the loop; the wrapper is `X_j_common`, part k is
`X_jk_partition` around loop `jk`, and every block of part k gets the suffix `_jk`. A block
iter var bound to the loop itself gets part k's range as its domain, when it is spatial: a
reduction iter keeps its full domain, so `T.init()` still runs only at the first reduction
iteration (TVM narrows it too and re-initializes in every part: wrong sums).

Factors: positive ints, at most one None (-1 is refused, as in TVM), inferred as what the others leave of the
extent; without None the factors must sum to less than the extent and one more part covers
the rest. The loop must contain a block and have no annotation or thread binding (TVM); the
parts are serial loops whatever the loop's kind (as TVM builds them).
`preserve_unit_iters` changes nothing (as in TVM: a part of extent 1 keeps its loop).
"""

from typing import List, Optional, Sequence, Tuple

from mlir import ir

from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import structure as analysis
from tir_mlir.analysis.structure import SID
from tir_mlir.ir import region_overrides as overrides
from tir_mlir.ir.regions import block_regions
from tir_mlir.analysis.buffer_util import accesses, buffer_name, i64_array
from tir_mlir.analysis.region_cover import LoopSpace, RegionError, touched_region


def _constant_bounds(loop: Loop) -> Tuple[int, int]:
    """(min, extent): the parts are constant ranges (TVM refuses a dynamic loop too)."""
    lo, extent = loop.min, loop.extent
    if not isinstance(lo, int) or not isinstance(extent, int):
        raise ScheduleError(
            f"loop_partition: loop {loop.name!r} runs from {lo} for {extent} iterations: "
            f"a symbolic range cannot be cut into constant parts (TVM refuses it too)"
        )
    return lo, extent


def part_sizes(loop: Loop, factors: Sequence[Optional[int]]) -> List[int]:
    """The extent of each part, in order (TVM's checks and messages)."""
    _, extent = _constant_bounds(loop)
    factors = list(factors)
    if sum(f is None for f in factors) > 1:
        raise ScheduleError("loop_partition: only one factor can be specified as -1 or none")
    for k, f in enumerate(factors):
        if f is not None and (not isinstance(f, int) or isinstance(f, bool) or f <= 0):
            raise ScheduleError(
                f"loop_partition: all the constant factors are required to be "
                f"positive. However, the factor at position {k} is {f!r}"
            )
    known = sum(f for f in factors if f is not None)
    if known >= extent:
        raise ScheduleError(
            f"loop_partition: the sum of factors {factors} is larger than or "
            f"equal to the extent {extent} of loop {loop.name!r}"
        )
    return [extent - known if f is None else f for f in factors] + (
        [] if None in factors else [extent - known]
    )


def loop_partition(loop_op: ir.Operation, factors: Sequence[Optional[int]]) -> List[ir.Operation]:
    """Partition `loop_op`; returns the new loops in order. `loop_op` is erased."""
    loop = Loop(loop_op)
    analysis.check_no_annotation(loop_op, "loop_partition")  # (as split: fuzzer seed 991)
    sizes = part_sizes(loop, factors)
    first = next((op for op in analysis.walk(loop_op) if analysis.is_block(op)), None)
    if first is None:
        raise ScheduleError(f"loop_partition: loop {loop.name!r} contains no block")

    # --- rewrite ------------------------------------------------------------------------------
    loc, var, base = loop_op.location, loop.name, Block(first).name
    common = _opaque_block(f"{base}_{var}_common", ir.InsertionPoint(loop_op), loc)
    new, (lo, _) = [], _constant_bounds(loop)
    for k, size in enumerate(sizes):
        part = _opaque_block(f"{base}_{var}{k}_partition", _before_end(common.body), loc)
        copy = loop_op.clone(ip=_before_end(part.body))
        copy.attributes["lowerBoundMap"] = ir.AffineMapAttr.get(ir.AffineMap.get_constant(lo))
        copy.attributes["upperBoundMap"] = ir.AffineMapAttr.get(
            ir.AffineMap.get_constant(lo + size)
        )
        Loop(copy).set(name=f"{var}{k}", kind="serial")  # (TVM's parts are serial)
        for op in [copy, *analysis.walk(copy)]:
            if SID in op.attributes:
                del op.attributes[SID]
            if analysis.is_block(op):
                _rename_and_narrow(Block(op), f"_{var}{k}", Loop(copy).iv, lo, size)
        new.append(copy)
        lo += size
    analysis.erase(loop_op)
    _tvm_regions(common)
    return new


def _tvm_regions(common: Block):
    """The T.reads / T.writes TVM prints after a partition: none on the wrapper blocks, and
    on each block with iter vars in a part, what it accesses over the whole part (every loop
    around it relaxed). Printing only (region_overrides): legality uses the accesses."""
    for op in [common.op, *analysis.walk(common.op)]:
        if not analysis.is_block(op):
            continue
        b = Block(op)
        if b.name.endswith(("_common", "_partition")) and not b.iter_names:
            regions = block_regions(op)
            for kind, found in (("read", regions.reads), ("write", regions.writes)):
                overrides.add_hidden(op, kind, sorted({buffer_name(r.buffer) for r in found}))
        elif b.iter_names and not analysis.blocks_under(op):
            for kind, k in (("read", "load"), ("write", "store")):
                for buf in {v for _, kk, v in accesses(op) if kk == k}:
                    try:
                        region = touched_region(LoopSpace([]), [b], buf, k)
                    except RegionError:
                        continue
                    ranges = _constant_ranges(region) if region is not None else None
                    if ranges is not None:
                        overrides.set_explicit(
                            op, kind, buffer_name(buf), len(b.iter_names), ranges
                        )


def _opaque_block(name: str, ip, loc) -> Block:
    return Block.build(name, [], [], [], ir.AffineMap.get(0, 0, []), [], loc=loc, ip=ip)


def _before_end(block: ir.Block) -> ir.InsertionPoint:
    return ir.InsertionPoint(analysis.terminator(block))


def _constant_ranges(region) -> Optional[List[Tuple[ir.AffineExpr, int]]]:
    """(start, extent) of each interval of a region; None if one depends on a loop or
    on a size (an inner symbolic loop: the printer's default regions stay)."""
    out = []
    for iv in region:
        lo, extent = iv.lo, iv.extent
        if iv.base.terms or not isinstance(lo, int) or not isinstance(extent, int):
            return None
        out.append((ir.AffineExpr.get_constant(lo + iv.base.const), extent))
    return out


def _rename_and_narrow(b: Block, suffix: str, iv: ir.Value, lo: int, size: int):
    b.set_attr("name", ir.StringAttr.get(b.name + suffix))
    domains = b.domains
    for k, (e, kind) in enumerate(zip(b.bindings.results, b.iter_types)):
        if kind == "S" and isinstance(e, ir.AffineDimExpr) and b.dims[e.position] == iv:
            domains[k] = (lo, size)
    b.set_attr("domains", ir.ArrayAttr.get([i64_array(d) for d in domains]))
