"""Stage `prefetch-strided` (CPU, scf level): a vector load whose rows a loop walks a page or more
apart, into the same L1 sets, is prefetched one iteration ahead.

    scf.for %k = 0 to 128 {                        scf.for %k = 0 to 128 {
                                                     %n = min(%k + 1, 1023)
                                              =>     memref.prefetch %B[%n, %j], read, locality<3>, data
      %b = vector.load %B[%k, %j]                    %b = vector.load %B[%k, %j]

A register tile over `k` reads a row segment of B per iteration. When B's rows are 4 KiB apart
(a 1024-wide float matrix), every row falls in the same L1 sets: the 128 rows of a `k` block do
not fit in their ways, so every load misses L1, and the hardware prefetchers, which follow a
stream only within a 4 KiB page, do not help. Asking for the next row one iteration early hides most
of the miss (`shared/bench/hand_mm.py`'s 1024 matmul and the tuner's 1024-matmul candidates:
benchmarks/README.md, "session 9, stage figures").

A load is prefetched when:
- it is a `vector.load` directly in the body of an innermost `scf.for` with constant bounds and
  at least MIN_TRIPS iterations (LLVM unrolls a shorter loop whole, and the out-of-order core
  then starts the loads early by itself; with the prefetches in it, LLVM unrolled it less and
  it ran slower), with no vectorize hint (LLVM would widen the step);
- the loop does no scalar float math (LLVM's SLP vectorizer may still pack it into vectors, and
  calls between its loads stop that) and carries at most half the vector registers
  in values (the prefetch addresses made LLVM spill a 26-register tile every iteration);
- its memref is defined outside the loop with a static shape and strides, and its indices are
  linear in the IV (`arith` add/sub/mul by constant) with a byte stride of at least the
  prefetchers' page that puts more lines in one L1 set than it has ways over the loop;
- the lines one iteration reads of its buffer (an unrolled `k` step: several rows), with as
  many prefetched for the next iteration, are at most the ways in each L1 set: else a
  prefetched line is evicted before its load comes, and the prefetches only add misses.
The register file, the L1 data cache's sets, ways and line size and the page are the target's
(cpu_model.py: the host's caches as the kernel reports them, or the named CPU's).
One prefetch per cache line the loads read (loads of one buffer at constant distances share
lines), placed before the load. An index that would leave its dimension in the last iteration
is clamped into it, so every prefetched address is valid (the clamped form also ran faster).
"""

import math
from typing import Optional

from mlir import ir
from mlir.dialects import arith, memref

from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.common import (
    functions,
    index_const,
    loop_iv,
    scalar_bits,
    scf_bounds,
)
from tir_mlir.passes.lowering.cpu_model import CpuModel, cpu_model
from tir_mlir.passes.lowering.scalar_replace import ScalarReplace, leaves, linear

# LLVM unrolls a loop of fewer iterations whole (see the module docstring).
MIN_TRIPS = 32
# Iterations ahead: the next one, the least that hides a miss behind an iteration's work (on a
# 4x64 register tile, 16 FMAs an iteration, 1 beat 2, 4 and 8).
DISTANCE = 1


class PrefetchStage:
    """What a prefetching stage reads of the target: its vector register file (as
    `scalar-replace` counts it: the registers a loop's carried values take) and cpu_model's
    cache geometry. `prefetch-strided` and `prefetch-panels` build themselves from it."""

    def __init__(self, register_file=None, model: Optional[CpuModel] = None):
        self.register_file = register_file or ScalarReplace()
        self.model = model or cpu_model("llvm")

    @classmethod
    def for_target(cls, target):
        return cls(ScalarReplace.for_target(target), cpu_model(target))


class StridePrefetch(PrefetchStage):
    name = "prefetch-strided"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for loop in [o for o in walk_all(f) if o.name == "scf.for"]:
                if self._eligible(loop):
                    _prefetch(loop, self.model)

    def _eligible(self, loop) -> bool:
        annotation = (
            str(loop.attributes["loop_annotation"]) if "loop_annotation" in loop.attributes else ""
        )
        bounds = scf_bounds(loop)
        regs = self.register_file
        nested = [o for o in walk_all(loop) if o != loop]
        return (
            "vectorize" not in annotation
            and bounds is not None
            and bounds[2] > 0
            and (bounds[1] - bounds[0]) // bounds[2] >= MIN_TRIPS
            and regs.register_count(r.type for r in loop.results) <= regs.registers // 2
            and not any(o.name == "scf.for" or _scalar_float_math(o) for o in nested)
        )


def _prefetch(loop, model: CpuModel):
    iv = loop_iv(loop)
    bounds = scf_bounds(loop)
    assert bounds is not None, "an eligible loop's bounds"
    lo, hi, step = bounds
    trips = (hi - lo) // step
    # (buffer, variable terms) -> [(load, deltas, line within the load, its byte offset)]
    memo, lines = {}, {}
    size = model.line_bytes
    for op in list(loop.regions[0].blocks[0].operations):
        op = op.operation
        if op.name != "vector.load":
            continue
        access = _strided(op, iv, step, trips, memo, model)
        if access is None:
            continue
        key, offset, span, deltas = access
        seen = lines.setdefault(key, [])
        for line in range(0, span, size):
            if all(abs(offset + line - s[3]) >= size for s in seen):
                seen.append((op, deltas, line, offset + line))
    for seen in lines.values():
        if not _outlives_ways([s[3] for s in seen], model):
            for load, deltas, line, _ in seen:
                _emit(load, deltas, line)


def _outlives_ways(offsets, model: CpuModel) -> bool:
    """Whether a line prefetched one iteration ahead is evicted before its load: between the two,
    the lines of one iteration's loads and of its prefetches of the next (as many, in the same
    sets) share the L1 sets; where one set gets more of them than it has ways, the prefetched
    line goes before its use and the prefetch only adds a miss (a `k` loop unrolled 16 rows
    down a 2 KiB-pitch column: 8 rows in each of 2 sets, 16 lines to 8 ways)."""
    per_set: dict = {}
    for offset in offsets:
        s = (offset // model.line_bytes) % model.l1d_sets
        per_set[s] = per_set.get(s, 0) + 1
    return 2 * max(per_set.values(), default=0) > model.l1d_ways


def _scalar_float_math(op) -> bool:
    return (
        op.name.startswith("arith.")
        and op.name.endswith("f")
        and any(isinstance(r.type, ir.FloatType) for r in op.results)
    )


def _set_conflicts(stride, trips, model: CpuModel) -> bool:
    """Whether `trips` accesses `stride` bytes apart put more lines in one L1 set than it has
    ways: then each evicts an earlier one and every access misses L1."""
    if stride % model.line_bytes:
        return False
    sets = model.l1d_sets // math.gcd(stride // model.line_bytes, model.l1d_sets)
    return trips / sets > model.l1d_ways


def _strided(op, iv, step, trips, memo, model: CpuModel):
    """(key, byte offset, bytes read, per-dimension index step) of a load to prefetch, or None."""
    walk = set_conflicting_walk(op, iv, step, trips, memo, model)
    if walk is None:
        return None
    forms, strides, element, coefficients = walk
    span = ir.VectorType(op.results[0].type).shape[-1] * element if strides[-1] == 1 else element
    key = (
        op.operands[0],
        tuple(frozenset((a, k) for a, k in t.items() if a != iv) for _, t in forms),
    )
    offset = sum(c * s for (c, _), s in zip(forms, strides)) * element
    deltas = [k * step * DISTANCE for k in coefficients]
    return key, offset, span, deltas


def set_conflicting_walk(op, iv, step, trips, memo, model: CpuModel):
    """(index forms, memref strides, element bytes, IV coefficients) of a load (`memref.load` or
    `vector.load` in loop `iv`'s body) whose address the loop moves a page or more per iteration,
    over more lines in one L1 set than it has ways; None for any other load."""
    base = op.operands[0]
    mtype = ir.MemRefType(base.type)
    owner = base.owner
    defined_in = owner.owner if isinstance(owner, ir.Block) else owner.operation.parent
    bits = getattr(mtype.element_type, "width", 0)  # (an index element has none)
    if defined_in.operation == op.parent.operation or not bits or bits % 8:
        return None
    strides, _ = mtype.get_strides_and_offset()
    if any(s < 0 for s in strides) or any(n < 0 for n in mtype.shape):
        return None
    forms = [linear(v, memo) for v in list(op.operands)[1:]]
    nested = [
        (c, dict(t)) for _, terms in forms for a in terms if isinstance(a, tuple) for c, t in a[2]
    ]
    if any(v == iv for v in leaves(nested)):
        return None  # the IV inside a division: not a constant stride
    element = bits // 8
    coefficients = [t.get(iv, 0) for _, t in forms]
    stride = sum(k * s for k, s in zip(coefficients, strides)) * step * element
    if abs(stride) < model.page_bytes or not _set_conflicts(abs(stride), trips, model):
        return None
    return forms, strides, element, coefficients


def _emit(load, deltas, line_bytes):
    """Prefetch, before `load`, the address it reads DISTANCE iterations later plus
    `line_bytes` along its last dimension."""
    mtype = ir.MemRefType(load.operands[0].type)
    loc = load.location
    extra = line_bytes // (scalar_bits(mtype.element_type) // 8)
    with ir.InsertionPoint(load), loc:
        indices = []
        for d, (index, size) in enumerate(zip(list(load.operands)[1:], mtype.shape)):
            delta = deltas[d] + (extra if d == mtype.rank - 1 else 0)
            if delta:
                index = arith.addi(index, index_const(delta, loc))
                index = (
                    arith.minsi(index, index_const(size - 1, loc))
                    if delta > 0
                    else arith.maxsi(index, index_const(0, loc))
                )
            indices.append(index)
        memref.prefetch(
            load.operands[0], indices, is_write=False, locality_hint=3, is_data_cache=True
        )
