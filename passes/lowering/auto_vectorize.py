"""Stage `auto-vectorize` (CPU, affine level, before `vectorize-loops`): an innermost serial loop
over a few registers of contiguous elements that a loop around it accumulates into becomes a
`T.vectorized` loop, as if the schedule had asked for it.

    for k1 in 0..8:                              for k1 in 0..8:
      for j1 in 0..32:                 =>          for j1 in T.vectorized(32):
        C[i, j0 + j1] += A[i, k] * B[k, j0 + j1]     C[i, j0 + j1] += A[i, k] * B[k, j0 + j1]

A tile schedule without `vectorize` (TVM users leave it to LLVM, whose loop vectorizer takes the
inner loop on TVM's IR) otherwise reaches `scalar-replace` as a scalar loop: to carry the tile's
accumulators across `k1` it unrolls `j1` into 32 scalars, which then take one register each, and
LLVM's SLP vectorizer packs only some of them (a 512 matmul with an 8 x 32 tile ran well behind
TVM's build; benchmarks/README.md, "stage figures"). Vectorized first, the tile is carried as
vectors, as a scheduled `vectorize` of the same loop is.

A tile of an odd number of columns (a split by 5) is no exception: left scalar, LLVM fully
unrolls its columns and its loop vectorizer takes the rows loop instead, every access of the
tile an interleaved group with as many members as columns; the tile, whose addresses are then
all constant, is promoted across the reduction loop into wide vectors taken apart and put
together again by shuffles at every step (a batch matmul's 32 x 5 tile: benchmarks/README.md,
"session 12, odd tile columns"). As a vector<5xf32> per row it is carried like any other.

A loop qualifies when:
- it is serial, with constant bounds and step 1, and holds no loop;
- its extent is at least one 128-bit register and at most MAX_REGISTERS registers wide (the
  element type: the narrowest stored; longer loops are left to LLVM, which has a remainder loop
  and a cost model for them), a power of two or a multiple of the register's lanes, or any
  other count (5 or 6 floats, 3 doubles) when the loop updates its elements in place
  (`x = x + e`: a tile of accumulators; a copy's odd row stays LLVM's);
- `vectorize_plan` has a vector form for its body with no two lanes touching one address where
  one of them stores, every store is contiguous or the same for all lanes (a load may also be
  gathered), one store is contiguous, and every buffer is an allocation or an argument of a
  `tir.noalias` function (the plan tells buffers apart by their memref; arguments that may
  alias are not told apart);
- a contiguous store's address does not depend on an enclosing serial loop: that loop
  accumulates into the elements, and would carry them.

A gathered load is the row sum's case: `for k: for i1 in 0..64: B[i0 + i1] += A[i0 + i1, k]`
reads one element of 64 rows per step. Left to LLVM, its loop vectorizer kept an 8-lane loop
over `i1` (B in memory, every address computed in a vector and taken apart lane by lane); as a
vector loop here, `vectorize-loops` builds the lanes in the width LLVM prices lowest
(gather_width.py) and `scalar-replace` carries the 64 sums across `k` in registers (faster: the
stage figures).

A loop that gathers is left scalar, though, when it stores integers, runs at most
scalar-replace's MAX_UNROLLED steps, and the serial loops around it (a perfect nest, each
holding nothing but the next, as many as it takes to make a register's lanes) walk every
gathered load contiguously, as one loop would (`k0 * n1 + k1`, unit stride): an int8 dot
product with 8 rows inside `k1` (`C[i0 + i1] += A[i0 + i1, k] * B[i0 + i1, k]`) gathered 8
bytes of A and 8 of B per step, one insert each; unrolled into 8 carried sums, LLVM's loop
vectorizer takes `k1` over contiguous bytes of each row (vpmaddwd), as TVM's code does. With
`k` split in two around the rows (`k0, k1 in 256 x 2`), `coalesce-loops` makes the pair one
loop around the rows first. A float sum keeps its rows vectorized: LLVM does not reorder it,
so left scalar it is not vectorized at all (a row sum of 8 rows ran slower).
"""

from typing import Optional

from mlir import ir

from tir_mlir.analysis.linear import through_applies, value_linear
from tir_mlir.dialect.ops import Loop
from tir_mlir.ir.ir_walk import ancestors, walk_all
from tir_mlir.ir.same_value import same_value
from tir_mlir.passes.lowering.affine_to_scf import element_bits
from tir_mlir.passes.lowering.buffer_roots import noalias_args, root
from tir_mlir.passes.lowering.common import constant_extent, constant_loop, functions
from tir_mlir.passes.lowering.cpu_model import VectorStage
from tir_mlir.passes.lowering.scalar_replace import MAX_UNROLLED
from tir_mlir.passes.lowering.vectorize_plan import Plan, contiguous, leaves

# The widest loop vectorized here, in registers: what `scalar-replace` can carry per row of a
# tile with room for other rows.
MAX_REGISTERS = 4
MIN_BITS = 128


class AutoVectorize(VectorStage):
    name = "auto-vectorize"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            noalias = noalias_args(f)
            for op in [o for o in walk_all(f) if o.name == "affine.for"]:
                loop = Loop(op)
                if self._qualifies(loop, noalias):
                    loop.set(kind="vectorized")

    def _qualifies(self, loop: Loop, noalias) -> bool:
        if loop.kind != "serial" or not constant_loop(loop) or loop.step != 1:
            return False
        if any(o.name == "affine.for" for o in walk_all(loop.op) if o != loop.op):
            return False
        n, bits = constant_extent(loop), element_bits(loop.body)
        lanes = max(1, self.vector_bits // bits)
        if n * bits < MIN_BITS or n > MAX_REGISTERS * lanes:
            return False
        if not (n & (n - 1) == 0 or n % lanes == 0) and not _updates_in_place(loop):
            return False
        plan = Plan(loop)
        if not plan.ok or not _accumulated(loop, plan):
            return False
        if n <= MAX_UNROLLED and _gathers_walked_by_parent(loop, lanes):
            return False
        for _, memref, _ in plan.accesses:
            (buffer, shared), _ = root(memref, noalias)
            if buffer is None or shared:
                return False
        return True


def _updates_in_place(loop: Loop) -> bool:
    """Whether a store in `loop` writes back a value computed from a load of the same address
    (`x = x + e`): a tile of accumulators, not a copy."""
    for op in walk_all(loop.op):
        if op.name not in ("affine.store", "memref.store"):
            continue
        owner = op.operands[0].owner
        if isinstance(owner, ir.Block):
            continue
        for v in owner.operation.operands:
            load = v.owner
            if not isinstance(load, ir.Block) and _same_address(load.operation, op):
                return True
    return False


def _same_address(load, store) -> bool:
    """Whether `load` reads what `store` writes: the same memref, map and indices."""
    if load.name != store.name.replace("store", "load"):
        return False
    x, y = list(load.operands), list(store.operands)[1:]
    same_map = ("map" in load.attributes) == ("map" in store.attributes) and (
        "map" not in load.attributes or str(load.attributes["map"]) == str(store.attributes["map"])
    )
    return same_map and len(x) == len(y) and all(same_value(a, b) for a, b in zip(x, y))


def _accumulated(loop: Loop, plan: Plan) -> bool:
    """Whether every store in the loop is contiguous or the same for all iterations (loads
    may be gathered), and a contiguous store's address is the same in every iteration of
    some serial loop around it."""
    outer = [Loop(p) for p in ancestors(loop.op) if p.name == "affine.for"]
    serial_ivs = [p.iv for p in outer if p.kind == "serial"]
    found = False
    for store, memref, forms in plan.accesses:
        strides = [f.stride for f in forms]
        if not any(strides):
            continue
        if not contiguous(memref, strides):
            if store:
                return False
            continue
        if store and not found:
            values = [v for f in forms for k in f.terms for v in leaves(k)]
            if any(v in plan.inner for v in values):
                continue
            used = _ivs_used(values)
            found = any(all(iv != u for u in used) for iv in serial_ivs)
    return found


def _gathers_walked_by_parent(loop: Loop, lanes: int) -> bool:
    """Whether `loop` gathers (a load that moves by more than one element per step), stores
    integers, and the serial loops around it (`_walking_nest`: a perfect nest, together at
    least a register's lanes) walk every such load contiguously, as one loop would: left
    scalar, `loop` unrolls into as many accumulators as it has steps (scalar-replace carries
    them), `coalesce-loops` makes the nest one loop, and LLVM's loop vectorizer takes it, whose
    loads are then whole registers instead of one insert per lane. Only integer sums: LLVM
    does not reorder a float sum (no reassociation), so a row sum left scalar would not be
    vectorized at all (slower over 8 rows)."""
    nest = _walking_nest(loop, lanes)
    if not nest:
        return False
    gathered = False
    for op in walk_all(loop.op):
        if op.name == "memref.store" and not isinstance(op.operands[0].type, ir.IntegerType):
            return False  # a float sum: LLVM keeps its order, so it cannot vectorize over k
        if op.name != "memref.load":
            continue
        strides = _strides(op, [loop] + nest)
        if strides is None:
            return False
        if abs(strides[0]) <= 1:
            continue
        gathered = True
        walk = 1
        for outer, stride in zip(nest, strides[1:]):
            if stride != walk:
                return False
            walk *= constant_extent(outer)
    return gathered


# A loop of kind "unroll" here is one `unroll-loops` left rolled for `coalesce-loops`.
_WALKING_KINDS = ("serial", "unroll")


def _walking_nest(loop: Loop, lanes: int) -> list:
    """The serial loops of constant bounds and step 1 around `loop`, innermost first, each
    holding nothing but the loop inside it, up to the first at which their extents multiply
    to at least `lanes`; empty when there is no such nest."""
    nest, inner, trips = [], loop.op, 1
    while trips < lanes:
        parent = inner.parent
        while parent is not None and parent.name not in ("affine.for", "func.func"):
            parent = parent.parent
        if parent is None or parent.name != "affine.for":
            return []
        outer = Loop(parent)
        if outer.kind not in _WALKING_KINDS or not constant_loop(outer) or outer.step != 1:
            return []
        if sum(o.name == "affine.for" for o in walk_all(parent)) != len(nest) + 1:
            return []  # `parent` holds a loop besides `inner`
        nest.append(outer)
        trips *= constant_extent(outer)
        inner = parent
    return nest


def _strides(load, loops: list) -> Optional[list]:
    """How far (in elements of its statically shaped memref) `load` moves per step of each
    of `loops`; None when its indices are not linear in them."""
    t = load.operands[0].type
    if not isinstance(t, ir.MemRefType) or not t.has_static_shape:
        return None
    forms = [value_linear(v, _atom) for v in list(load.operands)[1:]]
    if any(f is None for f in forms):
        return None
    full = [f for f in forms if f is not None]
    dims = [1] * len(full)
    for d in range(len(full) - 2, -1, -1):
        dims[d] = dims[d + 1] * t.shape[d + 1]
    return [sum(f.terms.get(lp.iv, 0) * st for f, st in zip(full, dims)) for lp in loops]


# A value's form over loop IVs, through `affine.apply` (other values are atoms).
_atom = through_applies()


def _ivs_used(values) -> list:
    """The block arguments (loop IVs, function arguments) the values are computed from."""
    out, todo, seen = [], list(values), []
    while todo:
        v = todo.pop()
        if any(v == s for s in seen):
            continue
        seen.append(v)
        if isinstance(v.owner, ir.Block):
            out.append(v)
        else:
            todo.extend(v.owner.operation.operands)
    return out
