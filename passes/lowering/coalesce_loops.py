"""Stage `coalesce-loops` (CPU, affine level, last before `affine-to-scf`): two serial loops, one
directly inside the other and innermost (or around rows of sums only), whose variables the body
uses only as one index `k0 * n1 + k1` become one loop over that index.

    for k0 in 0..64:                             for k in 0..512:
      for k1 in 0..8:                 =>           C[i] += A[i, k] * B[i, k]
        C[i] += A[i, k0 * 8 + k1] * B[i, k0 * 8 + k1]

A split that nothing was scheduled between (`split` then no `reorder`, `vectorize` or cache
step at the outer loop) leaves such a pair. LLVM vectorizes one loop of a nest: the inner one
when it is long enough, else it unrolls the inner one whole and vectorizes the outer, whose
iterations are then `n1` elements apart. A dot product split by 8 got vectors of every 8th
element of the rows: 64-byte loads taken apart into eight 8-lane vectors (shifts and byte
truncations) each step, while the unsplit loop is one contiguous row segment per step (the
split one took four times as long: benchmarks/README.md, "session 9, stage figures").
As one loop it is the loop the split came from, and LLVM chooses its vectors as it would there.
Only a pair whose accesses are contiguous along the combined index (or the same at every step)
is coalesced: a row-strided access in a short inner loop is a constant displacement from one
address per inner step, while in one loop LLVM builds a vector of addresses and extracts each
lane to gather (an int8 matmul's B column, k split by 32, ran slower coalesced).

A `T.unroll` inner loop is taken too: `unroll-loops` (earlier) leaves such a loop rolled, of
kind "unroll", when it makes a pair here, and the rewrite drops the kind. The user's unroll is
dropped with it, and rightly: unrolled first, the loop LLVM vectorizes is the outer one, with
`n1` loads per row `n1` elements apart per step (0915 of seed 2004163578, `k` split by 8 and
`unroll(k1)`, 2 rows inside: each 64-byte load taken apart into 8 byte vectors), while the one
contiguous loop is unrolled and interleaved by LLVM's vectorizer itself. A pair that is not
coalesced here keeps the kind, which `affine-to-scf` makes LLVM's full-unroll hint.

A pair qualifies when:
- both loops are plain (serial, constant bounds from 0, step 1, no annotation, two iterations
  or more; the inner one may be of kind "unroll"), the outer one's body is the inner loop
  alone and the inner one holds no loop but
  rows of sums: plain loops directly in it, of at most scalar-replace's MAX_UNROLLED steps,
  holding no loop, each store in them at the same address at every step of the pair (an int8
  dot product's rows inside a split reduction, `i0, k0, k1, i1`: `scalar-replace` unrolls the
  rows into sums carried across the one loop, which LLVM then vectorizes over contiguous
  bytes of each row; `auto-vectorize` leaves such integer rows scalar);
- every load and store in it (`memref`'s, `vector`'s plain ones; any other vector access keeps
  the pair) is the same at every step, or walks its last (unit-stride) dim one element per
  step of `k0 * n1 + k1`, and none stores a float at the same address at every step (a float
  sum: LLVM keeps its order and vectorizes neither form, so the pair stays as scheduled);
- every use of either variable is a dim of an `affine.apply` (a block's index binding:
  scheduled blocks take their indices through one) or an `affine.if` (a reduction's init,
  `if k0 * n1 + k1 == 0`), whose every expression is linear with the outer variable's
  coefficient `n1` times the inner one's (so each is a function of `k0 * n1 + k1`, the new
  loop's variable).

The rewrite sets each such expression's outer variable to 0 and its inner variable to the new one
(`c * (k0 * n1 + k1) + rest` is `c * k + rest`), widens the inner loop to `n0 * n1`
iterations, and puts it in the outer loop's place. Innermost pairs go first, so a split into
three loops that nothing separates becomes one.
"""

from typing import Optional, Tuple

from mlir import ir

from tir_mlir.analysis.linear import Linear, linear
from tir_mlir.dialect.ops import Loop, body_ops, integer_set
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.common import constant_extent, constant_min, functions, loop_iv
from tir_mlir.passes.lowering.loop_interchange import plain_loop
from tir_mlir.passes.lowering.memory_ops import ACCESSES, STORES
from tir_mlir.passes.lowering.scalar_replace import MAX_UNROLLED


class CoalesceLoops:
    name = "coalesce-loops"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            # innermost first: an outer loop then sees the loop its inner pair became
            for op in reversed([o for o in walk_all(f) if o.name == "affine.for"]):
                inner = self.coalescible(op)
                if inner is not None:
                    _coalesce(op, inner)

    def coalescible(self, outer) -> Optional[ir.Operation]:
        """The loop directly inside `outer` when the pair has the shape the stage rewrites."""
        if not _plain_from_zero(outer):
            return None
        ops = body_ops(outer.regions[0].blocks[0])
        if len(ops) != 1 or not _plain_from_zero(ops[0], kinds=("serial", "unroll")):
            return None
        inner = ops[0].operation
        inside = walk_all(inner)
        n1 = constant_extent(Loop(inner))
        k0, k1 = loop_iv(outer), loop_iv(inner)
        loops = [o for o in inside if o.name in ("affine.for", "affine.parallel", "scf.for")]
        if not all(_accumulator_row(o, inner, k1) for o in loops):
            return None
        users = {id(u.owner): u.owner for v in (k0, k1) for u in v.uses}
        if not all(_combined(user, k0, k1, n1) for user in users.values()):
            return None
        for o in inside:
            if o.name in ACCESSES:
                if not _contiguous(o, inner, k1) or _float_sum(o, inner, k1):
                    return None
            elif o.name.startswith("vector.") and any(w in o.name for w in _VECTOR_MEMORY):
                return None
        return inner


# Any op of `vector` that reads or writes memory, other than ACCESSES, keeps the pair.
_VECTOR_MEMORY = ("load", "store", "read", "write", "gather", "scatter")


def _contiguous(access, inner, k1: ir.Value) -> bool:
    """Whether `access` in `inner` is the same for every step of the pair or walks its last
    dim one element per step of `k0 * n1 + k1` (unit stride): only then is the coalesced loop
    LLVM's contiguous vector. A row-strided one stays in the pair, whose inner steps are
    constant displacements from one address (as one loop, LLVM builds a vector of addresses
    and extracts every lane to gather)."""
    at, first, _ = ACCESSES[access.name]
    indices = list(access.operands)[first:]
    memref = ir.MemRefType(access.operands[at].type)
    for d, index in enumerate(indices):
        step = _step(index, inner, k1)
        if step is None or (step and (d != len(indices) - 1 or step != 1)):
            return False
    if any(_step(i, inner, k1) for i in indices):
        return memref.get_strides_and_offset()[0][-1] == 1
    return True


def _accumulator_row(loop, inner, k1: ir.Value) -> bool:
    """Whether `loop`, inside the pair's inner loop, is a row of sums that `scalar-replace`
    unrolls into scalars carried across the coalesced loop: directly in `inner`, plain from
    0, at most MAX_UNROLLED steps, holding no loop, every store in it at the same address at
    every step of the pair. The coalesced loop is then innermost when LLVM sees it."""
    if loop.parent != inner or not _plain_from_zero(loop):
        return False
    if constant_extent(Loop(loop)) > MAX_UNROLLED:
        return False
    for o in walk_all(loop):
        if o.name in ("affine.for", "affine.parallel", "scf.for"):
            return False
        if o.name in STORES:
            first = ACCESSES[o.name][1]
            if any(_step(i, inner, k1) for i in list(o.operands)[first:]):
                return False
    return True


def _float_sum(access, inner, k1: ir.Value) -> bool:
    """Whether `access` stores a float at the same address at every step: a float sum, whose
    order LLVM keeps, so it vectorizes neither the pair nor the one loop."""
    if access.name not in STORES:
        return False
    element = ir.MemRefType(access.operands[1].type).element_type
    first = ACCESSES[access.name][1]
    invariant = not any(_step(i, inner, k1) for i in list(access.operands)[first:])
    return invariant and isinstance(element, ir.FloatType)


def _step(index: ir.Value, inner, k1: ir.Value) -> Optional[int]:
    """How far `index` moves per step of the coalesced loop: 0 when it is defined outside
    `inner`, the inner variable's coefficient of an `affine.apply` there, else None."""
    owner = index.owner
    if isinstance(owner, ir.Block):
        return 1 if index == k1 else 0  # (the inner loop's only block argument is k1)
    if not _inside(owner, inner):
        return 0
    if owner.name != "affine.apply":
        return None
    operands = list(owner.operands)
    form = _forms(owner)[0]
    if form is None:
        return None
    return sum(form.terms.get(j, 0) for j, v in enumerate(operands) if v == k1)


def _inside(op, loop) -> bool:
    loop, parent = loop.operation, op.operation.parent
    while parent is not None:
        if parent.operation == loop:
            return True
        parent = parent.operation.parent
    return False


def _plain_from_zero(op, kinds=("serial",)) -> bool:
    return plain_loop(op, kinds=kinds) and constant_min(Loop(op)) == 0


# The ops whose affine attribute may take the two variables as dims: the index bindings and
# the guards (a reduction's init, `if k0 * n1 + k1 == 0`).
_AFFINE_ATTR = {"affine.apply": "map", "affine.if": "condition"}


def _exprs(op) -> Tuple[int, int, list]:
    """(dims, symbols, expressions) of an `affine.apply`'s map or an `affine.if`'s set."""
    attr = op.attributes[_AFFINE_ATTR[op.name]]
    if op.name == "affine.apply":
        amap = ir.AffineMapAttr(attr).value
        return amap.n_dims, amap.n_symbols, list(amap.results)
    iset = integer_set(attr)
    return iset.n_dims, iset.n_symbols, [c.expr for c in iset.constraints]


def _set_exprs(op, exprs: list):
    key = _AFFINE_ATTR[op.name]
    if op.name == "affine.apply":
        amap = ir.AffineMapAttr(op.attributes[key]).value
        new = ir.AffineMap.get(amap.n_dims, amap.n_symbols, exprs)
        op.attributes[key] = ir.AffineMapAttr.get(new)
    else:
        iset = integer_set(op.attributes[key])
        eqs = [c.is_eq for c in iset.constraints]
        new = ir.IntegerSet.get(iset.n_dims, iset.n_symbols, exprs, eqs)
        op.attributes[key] = ir.IntegerSetAttr.get(new)


def _forms(op) -> list:
    """Each expression of `op` as a linear form over its operand positions (None: not linear)."""
    n_dims, n_symbols, exprs = _exprs(op)
    dims = [Linear({j: 1}) for j in range(n_dims)]
    symbols = [Linear({n_dims + j: 1}) for j in range(n_symbols)]
    return [linear(e, dims, symbols) for e in exprs]


def _combined(op, k0: ir.Value, k1: ir.Value, n1: int) -> bool:
    """Whether every expression of `op` uses `k0` and `k1` only as `k0 * n1 + k1` (both as
    dims: the stage rewrites dims only)."""
    if op.name not in _AFFINE_ATTR:
        return False
    n_dims, n_symbols, exprs = _exprs(op)
    operands = list(op.operands)
    if any(v in (k0, k1) for v in operands[n_dims:]):
        return False
    at0 = [j for j, v in enumerate(operands) if v == k0]
    at1 = [j for j, v in enumerate(operands) if v == k1]
    for form in _forms(op):
        if form is None:
            return False
        c0 = sum(form.terms.get(j, 0) for j in at0)
        c1 = sum(form.terms.get(j, 0) for j in at1)
        if c0 != n1 * c1:
            return False
    return True


def _coalesce(outer, inner):
    k0, k1 = loop_iv(outer), loop_iv(inner)
    for user in {id(u.owner): u.owner for u in k0.uses}.values():
        _drop_operand(user, k0, k1)
    n = constant_extent(Loop(outer)) * constant_extent(Loop(inner))
    inner.attributes["upperBoundMap"] = ir.AffineMapAttr.get(ir.AffineMap.get_constant(n))
    Loop(inner).set(kind="serial")  # (an unrolled inner loop's kind: see the module's doc)
    inner.move_before(outer)
    outer.erase()


def _drop_operand(op, k0: ir.Value, k1: ir.Value):
    """`op` with its dim `k0` set to 0 (`k0`'s operands then hold `k1`, unused)."""
    n_dims, n_symbols, exprs = _exprs(op)
    operands = list(op.operands)
    zero = ir.AffineConstantExpr.get(0)
    subst = [zero if operands[j] == k0 else ir.AffineDimExpr.get(j) for j in range(n_dims)]
    to = ir.AffineMap.get(n_dims, n_symbols, subst)
    _set_exprs(op, [e.compose(to) for e in exprs])
    for j, v in enumerate(operands):
        if v == k0:
            op.operands[j] = k1
