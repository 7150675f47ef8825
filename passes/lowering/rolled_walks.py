"""Stage `roll-strided-walks` (CPU, scf level): a loop whose load misses L1 every iteration (rows
a page or more apart, into the same L1 sets) is kept rolled.

    scf.for %k = 0 to 128 {                        scf.for %k = 0 to 128 {
      %b = memref.load %B[%k, %j]            =>      %b = memref.load %B[%k, %j]
      ...                                            ...
    }                                              } {loop_annotation = <unroll = <disable>>}

A matmul without a cache_write tile walks a column of B over `k`: with B's rows 4 KiB apart
every row falls in the same L1 set, more rows than the set has ways, so every load comes from
L2. LLVM's unroller, tuned for the named CPU (znver4), copies such a loop 4-8 times, which puts
8 loads 32 KiB apart into one iteration; the same loop left rolled ran 0.85-0.90 of the
unrolled time (0.60 where the body is one FMA chain), and the generic x86-64 build, which LLVM
leaves rolled, at TVM's time (benchmarks/README.md, "session 17, float matmul schedules without
cache_write", and session 18's section on this stage).

A loop is kept rolled when it is an innermost `scf.for` without a loop annotation, with constant
bounds and at least MIN_TRIPS iterations, with a load directly in its body that
`prefetch-strided`'s test finds walking into one L1 set over more lines than its ways (the
target's geometry, cpu_model.py), and when it
- carries float values (accumulators in registers) and stores nothing: copies a page apart (a
  transposed add, 1.36x slower rolled) and tiles of accumulators stored every iteration (a 512
  matmul's 6 x 64 floats, 1.085x) ran faster unrolled;
- multiplies (sums of products): column sums of 2-4 lanes ran 1.03-1.07x slower rolled (wider
  ones faster: what sets them apart was not traced);
- carries fewer registers than the FMA chains that fill the target's units at their width (the
  loop waits on its chains' latency): 8 chains of 2 floats ran 1.12x slower rolled, 16 chains
  of 8 floats 1.05x;
- is not under a serial loop that reads a buffer one element per iteration: LLVM may unroll a
  short inner loop whole so as to vectorize that outer loop, and a rolled inner loop stops that
  (session 16's rule without this exception slowed such loops and was reverted).
"""

from mlir import ir

from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.common import functions, loop_iv, scf_bounds, value_bits
from tir_mlir.passes.lowering.scalar_replace import linear
from tir_mlir.passes.lowering.stride_prefetch import (
    MIN_TRIPS,
    PrefetchStage,
    set_conflicting_walk,
)

LOADS = ("memref.load", "vector.load")
# Ops that make a loop no bare accumulator chain: a nested loop, a store (a tile updated in
# memory, each row stored every iteration: 4-16 vector rows, which LLVM's unroll helped).
NESTED = ("scf.for", "memref.store", "vector.store")
# A chain of products (a matmul's `k` walk); a chain of adds alone (a column sum of 2-4 lanes)
# ran 1.03-1.07x slower rolled.
PRODUCTS = ("arith.mulf", "vector.fma", "math.fma")
ROLLED = "#llvm.loop_annotation<unroll = <disable = true>>"


class RollStridedWalks(PrefetchStage):
    name = "roll-strided-walks"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            rolled = [o for o in walk_all(f) if o.name == "scf.for" and self._misses_l1(o)]
            for loop in rolled:
                loop.attributes["loop_annotation"] = ir.Attribute.parse(ROLLED)

    def _misses_l1(self, loop) -> bool:
        bounds = scf_bounds(loop)
        if (
            "loop_annotation" in loop.attributes
            or bounds is None
            or bounds[2] <= 0
            or (bounds[1] - bounds[0]) // bounds[2] < MIN_TRIPS
            or not any(_is_float(r.type) for r in loop.results)
            or not any(o.name in PRODUCTS for o in walk_all(loop))
            or not self._waits_on_chains(loop)
            or any(o.name in NESTED for o in walk_all(loop) if o != loop)
            or _outer_unit_walk(loop)
        ):
            return False
        lo, hi, step = bounds
        iv, memo = loop_iv(loop), {}
        body = [o.operation for o in loop.regions[0].blocks[0].operations]
        return any(
            set_conflicting_walk(o, iv, step, (hi - lo) // step, memo, self.model) is not None
            for o in body
            if o.name in LOADS
        )

    def _waits_on_chains(self, loop) -> bool:
        """Whether the loop's carried values, in registers, are fewer than the FMA chains
        that fill the target's units at their width: each iteration then waits on its chains'
        latency, and copies of the body only add misses in flight into one L1 set."""
        types = [r.type for r in loop.results]
        bits = max(value_bits(t) for t in types)
        return self.register_file.register_count(types) < self.model.fma_chains(bits)


def _is_float(t) -> bool:
    if isinstance(t, ir.VectorType):
        t = t.element_type
    return isinstance(t, ir.FloatType)


def _outer_unit_walk(loop) -> bool:
    """Whether the op around `loop` is a serial `scf.for` that some load under it reads one
    element further per iteration."""
    outer = loop.parent.operation
    if outer.name != "scf.for":
        return False
    iv, memo = loop_iv(outer), {}
    for load in walk_all(outer):
        if load.name not in LOADS:
            continue
        mtype = ir.MemRefType(load.operands[0].type)
        strides, _ = mtype.get_strides_and_offset()
        forms = [linear(v, memo) for v in list(load.operands)[1:]]
        if sum(t.get(iv, 0) * s for (_, t), s in zip(forms, strides)) in (1, -1):
            return True
    return False
