"""Stage `prefetch-panels` (CPU, scf level): a loop that first copies a panel and then computes
on it prefetches the panel of its next iteration while it computes, a few lines per iteration
of the compute loop, as BLAS kernels prefetch their next packed panel.

    scf.for %k0 = 0 to 32 {                      scf.for %k0 = 0 to 32 {
      scf.for %r = 0 to 32 {                       (the copy, unchanged)
        scf.for %c = 0 to 16 {                     scf.for %i = 0 to 64 {
          %v = vector.load %B[%k0 * 32 + %r, ..]     %n = min(%k0 + 1, 31)
          vector.store %v, %P[%r, %c * 16]     =>    memref.prefetch %B[%n * 32 + (%i * 8 + t) / 16,
      } }                                                          ((%i * 8 + t) % 16) * 16]  (t < 8)
      scf.for %i = 0 to 64 { ... %P ... }            ...
    }                                              } }

A packed panel (`pack-panels`' copy of a `k` tile of B, or a schedule's `cache_read` under a
reduction loop) is read from memory by its copy at the start of every tile: rows a page or
more apart, each one a new stream for the hardware prefetchers, so the copy waits on its misses
while the FMA units idle (in a tuned 1024 matmul the copies alone are a noticeable share of
the kernel: benchmarks/README.md, "session 9, stage figures"). Spread over the compute loop
that follows, the same lines arrive while it runs, and the copy then reads them from the cache.

The loop qualifies when:
- its body holds, in order, a copy nest (perfect `scf.for` nest of constant bounds whose
  innermost body computes indices with `arith` ops, loads one vector of whole cache lines
  from a memref and stores it into another, both defined outside the loop) and a later
  `scf.for` of constant bounds that carries at most half the vector registers in values (a
  register tile carried through it would spill around the prefetches' address arithmetic,
  as `prefetch-strided` found);
- the load's indices use the loop's IV (the next iteration copies another panel), the
  panel fits in half the L2 (the rest holds the current tile's data), and the compute loop
  reads each panel element `pack_panels.MIN_REUSE` times or more: a few prefetches next to
  much work (a copy read once, a transpose's, is memory-bound already, and prefetching the
  next one during it made it slower).
The next panel goes to L2 (locality 2) when it and the current one do not fit L1 together
(prefetched into L1 it would evict the panel the compute loop reads), else to L1. The last
iteration prefetches its own panel again, so every prefetched address is valid. The target's
cache geometry is cpu_model's.
"""

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from mlir import ir
from mlir.dialects import arith, memref

from tir_mlir.ir.ir_walk import ancestors, walk_all
from tir_mlir.passes.lowering.common import (
    Bounds,
    defined_outside,
    depends_on,
    functions,
    index_const,
    iterations,
    loop_iv,
    scalar_bits,
    scf_bounds,
    trip_count,
)
from tir_mlir.passes.lowering.cpu_model import CpuModel
from tir_mlir.passes.lowering.pack_panels import MIN_REUSE
from tir_mlir.passes.lowering.stride_prefetch import PrefetchStage
from tir_mlir.passes.lowering.scalar_replace import ScalarReplace


class PanelPrefetch(PrefetchStage):
    name = "prefetch-panels"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for loop in [o for o in walk_all(f) if o.name == "scf.for"]:
                plan = _plan(loop, self.model, self.register_file)
                if plan is not None:
                    _emit(loop, plan)


def _body(loop) -> List[ir.Operation]:
    return [o.operation for o in loop.regions[0].blocks[0].operations if o.name != "scf.yield"]


def _copy_nest(loop):
    """([loops], [index ops], the load) of a copy nest rooted at `loop`, or None."""
    nest, ops = [loop], []
    while True:
        body = _body(nest[-1])
        inner = [o for o in body if o.name == "scf.for"]
        if len(inner) == 1:
            if any(o.name != "scf.for" and not o.name.startswith("arith.") for o in body):
                return None
            ops += [o for o in body if o.name != "scf.for"]
            nest.append(inner[0])
            continue
        if inner or [o.name for o in body if not o.name.startswith("arith.")] != [
            "vector.load",
            "vector.store",
        ]:
            return None
        load = next(o for o in body if o.name == "vector.load")
        return nest, ops + [o for o in body if o.name.startswith("arith.")], load


@dataclass
class _Plan:
    outer: Bounds  # the loop's
    nest: List[Tuple[ir.Operation, Bounds]]  # the copy's loops
    ops: List[ir.Operation]  # the copy's index arithmetic, in order
    load: ir.Operation
    compute: Tuple[ir.Operation, Bounds]
    lines: int  # cache lines one load reads
    line_elements: int
    locality: int


def _reads(compute, buffer: ir.Value) -> Optional[int]:
    """Elements the `compute` nest loads from `buffer` over all its iterations (None: a loop
    of unknown trips holds such a load)."""
    total = 0
    for op in walk_all(compute):
        if op.name not in ("vector.load", "memref.load") or op.operands[0] != buffer:
            continue
        count = math.prod(ir.VectorType(op.results[0].type).shape) if op.name[0] == "v" else 1
        for p in [op.operation, *ancestors(op)]:
            if p.name == "scf.for":
                trips = trip_count(p)
                if not trips:
                    return None
                count *= trips
            if p == compute:
                break
        total += count
    return total


def _plan(loop, model: CpuModel, regs: ScalarReplace) -> Optional[_Plan]:
    outer = scf_bounds(loop)
    if outer is None or (trip_count(loop) or 0) < 2:
        return None
    loops = [o for o in _body(loop) if o.name == "scf.for"]
    if len(loops) < 2:
        return None
    found = _copy_nest(loops[0])
    compute = scf_bounds(loops[1])
    if found is None or compute is None or not trip_count(loops[1]):
        return None
    if regs.register_count(r.type for r in loops[1].results) > regs.registers // 2:
        return None
    nest, ops, load = found
    bounds = [scf_bounds(n) if trip_count(n) else None for n in nest]
    src = load.operands[0]
    store = next(o for o in _body(nest[-1]) if o.name == "vector.store")
    dest = store.operands[1]
    if not (defined_outside(src, loop) and defined_outside(dest, loop)):
        return None
    if not any(depends_on(v, loop_iv(loop)) for v in list(load.operands)[1:]):
        return None
    mtype = ir.MemRefType(src.type)
    if mtype.get_strides_and_offset()[0][-1] != 1:
        return None
    element = scalar_bits(mtype.element_type) // 8
    load_bytes = math.prod(ir.VectorType(load.results[0].type).shape) * element
    if load_bytes % model.line_bytes:
        return None
    resolved = [(n, b) for n, b in zip(nest, bounds) if b is not None]
    if len(resolved) != len(nest):
        return None
    panel = math.prod(iterations(b) for _, b in resolved) * load_bytes
    reads = _reads(loops[1], dest)
    if reads is None or reads < MIN_REUSE * panel // element:
        return None
    l1 = model.l1d_sets * model.l1d_ways * model.line_bytes
    l2 = model.l2_sets * model.l2_ways * model.line_bytes
    if panel > l2 // 2:
        return None
    return _Plan(
        outer,
        resolved,
        ops,
        load,
        (loops[1], compute),
        lines=load_bytes // model.line_bytes,
        line_elements=model.line_bytes // element,
        locality=2 if 2 * panel > l1 else 3,
    )


def _emit(loop, plan: _Plan):
    """At the start of each iteration of the compute loop, prefetch its share of the loads
    the copy makes in the next iteration of `loop`."""
    outer = plan.outer
    compute, cb = plan.compute
    trips = [iterations(b) for _, b in plan.nest]
    total = math.prod(trips)
    per = -(-total // iterations(cb))
    loc = compute.location
    with ir.InsertionPoint.at_block_begin(compute.regions[0].blocks[0]), loc:
        last = outer[0] + (iterations(outer) - 1) * outer[2]
        nxt = arith.minsi(
            arith.addi(loop_iv(loop), index_const(outer[2], loc)), index_const(last, loc)
        )
        step = arith.divsi(
            arith.subi(loop_iv(compute), index_const(cb[0], loc)), index_const(cb[2], loc)
        )
        for t in range(per):
            # the t-th of this iteration's loads of the next copy, as the copy's IVs
            unit = arith.addi(arith.muli(step, index_const(per, loc)), index_const(t, loc))
            unit = arith.minsi(unit, index_const(total - 1, loc))
            mapping: Dict[ir.Value, ir.Value] = {loop_iv(loop): nxt}
            inner = 1
            for (n, (lo, _, st)), count in reversed(list(zip(plan.nest, trips))):
                digit = arith.remsi(
                    arith.divsi(unit, index_const(inner, loc)), index_const(count, loc)
                )
                mapping[loop_iv(n)] = arith.addi(
                    index_const(lo, loc), arith.muli(digit, index_const(st, loc))
                )
                inner *= count
            for op in plan.ops:
                clone = op.clone()
                for i, v in enumerate(list(clone.operands)):
                    if v in mapping:
                        clone.operands[i] = mapping[v]
                for old, new in zip(op.results, clone.results):
                    mapping[old] = new
            indices = [mapping.get(v, v) for v in list(plan.load.operands)[1:]]
            for line in range(plan.lines):
                idx = list(indices)
                if line:
                    idx[-1] = arith.addi(idx[-1], index_const(line * plan.line_elements, loc))
                memref.prefetch(
                    plan.load.operands[0],
                    idx,
                    is_write=False,
                    locality_hint=plan.locality,
                    is_data_cache=True,
                )
