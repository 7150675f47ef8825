"""Stage `strided-loads` (CPU, scf level): a vector built from every other element of a row is
read as two contiguous loads and one shuffle.

    %a0 = memref.load %A[%r, %x]                  %lo = vector.load %A[%r, %x]      : vector<4xf32>
    %a1 = memref.load %A[%r, %x + 2]       =>     %hi = vector.load %A[%r, %x + 3]  : vector<4xf32>
    %a2 = memref.load %A[%r, %x + 4]              %v = vector.shuffle %lo, %hi [0, 2, 5, 7]
    %a3 = memref.load %A[%r, %x + 6]
    %v = vector.from_elements %a0, %a1, %a2, %a3

A stride-2 window vectorized along its output columns (a 2x2 max pool's `A[.., 2 x + rx]` with
`x` in the vector lanes) has each lane's element two apart. Built lane by lane, LLVM gives one
scalar load and one `insertps` per lane, the inserts all on one shuffle port (issue 28's 0121:
48 `vinsertps` per 8 x 2 outputs). The n lanes span 2n - 1 elements: a load of n elements at the
first and one at the n-th cover them all, and the lanes are one two-source shuffle of those
(`shufps` for 4 floats, `vpermt2ps` for 8 or 16). Both loads read only elements between the first
lane's and the last lane's, in one row, so nothing the program did not touch. A unit stride is
one load and no shuffle. Under 4 lanes two apart the shuffle and the second load cost what the
inserts did, and the build stays.

The window's other column reads the odd elements of the same span: 2n elements, two whole
loads, that an even and an odd shuffle split (TVM's code: LLVM's interleaved group). Two builds
of one block, lanes `x + 2k` and `x + 1 + 2k` (the window column unrolled), each load the span's
halves and shuffle out their own elements: the loads are the same, and LLVM keeps one pair. A
build inside a loop of two iterations whose IV `r` enters its last index with coefficient 1 and
no other index (the window column rolled around the lanes) loads the span at its index less `r`
(plus the loop's first value), makes both shuffles and picks one by `r`: once LLVM unrolls that
loop, the pick is a constant and the copies' loads are one pair. That loop must hold no write of
the memref and have only `scf.for`s of constant bounds between it and the build, and the build's
other indices must be defined outside it (so the two iterations' loads are the same values),
and it must be small enough for LLVM to unroll whole (`UNROLLED_BAND_OPS`; rolled, each
iteration would pay both shuffles and a pick and share no load);
both halves of the span are read by the program, so nothing new is touched.

A `vector.from_elements` is rewritten when every lane is a `memref.load` of one memref (last
dimension of unit stride) in its block, the lanes' indices equal in every dimension but the last
(as linear forms), and the last one the first lane's plus s times the lane, s 1 (2 with at
least 4 lanes); and from the first of those loads to the build nothing in the block may write
that memref (a store to another `noalias` argument or allocation is fine) or holds a region or
a call.
"""

import math

from mlir import ir
from mlir.dialects import arith, vector

from tir_mlir.analysis.linear import Linear, value_linear
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.buffer_roots import noalias_args, root
from tir_mlir.passes.lowering.common import (
    UNROLLED_BAND_OPS,
    defined_outside,
    functions,
    scf_bounds,
    trip_count,
)

STORES = ("memref.store", "vector.store", "vector.maskedstore", "vector.transfer_write")
STRIDES = (1, 2)  # the lanes of two registers at most
# Fewest lanes two apart worth it: the shuffle and the second load take the place of n - 1
# inserts, a gain from 4 lanes on (2 lanes ran slower: benchmarks/README.md, "session 9, stage
# figures").
MIN_STRIDED_LANES = 4


class StridedLoads:
    name = "strided-loads"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for op, loads, step, half in _plans(f):
                _rewrite(op, loads, step, half)


def _plans(f) -> list:
    """(build, its loads, stride, half: see `_rewrite`) of every build of `f` to rewrite."""
    noalias = noalias_args(f)
    memo: dict = {}
    plans = []
    for op in [o for o in walk_all(f) if o.name == "vector.from_elements"]:
        plan = _plan(op, memo)
        if plan is not None and _unwritten(op, plan[0], noalias):
            plans.append((op, *plan))
    halves = _sibling_halves(plans, memo, noalias)
    out = []
    for op, loads, step in plans:
        half = halves.get(id(op))
        if half is None and step == 2:
            half = _pair_loop(op, loads, memo, noalias)
        out.append((op, loads, step, half))
    return out


def _leaf(value):
    return Linear({value: 1}, 0)


def _plan(op, memo):
    """(the lanes' loads, stride) of a build of loads along a row, or None."""
    loads = []
    for v in op.operands:
        owner = v.owner
        if isinstance(owner, ir.Block) or owner.operation.name != "memref.load":
            return None
        if owner.operation.block != op.block:
            return None
        loads.append(owner.operation)
    n = len(loads)
    memref = loads[0].operands[0]
    if n < 2 or any(ld.operands[0] != memref for ld in loads):
        return None
    mtype = ir.MemRefType(memref.type)
    strides, _ = mtype.get_strides_and_offset()
    if mtype.rank < 1 or strides[-1] != 1:
        return None
    forms = [[value_linear(i, _leaf, memo) for i in list(ld.operands)[1:]] for ld in loads]
    if any(f is None for fs in forms for f in fs):
        return None
    if any(fs[:-1] != forms[0][:-1] for fs in forms[1:]):
        return None
    lane0 = forms[0][-1]
    step = forms[1][-1].const - lane0.const
    if step not in STRIDES or forms[1][-1].terms != lane0.terms:
        return None
    if step > 1 and n < MIN_STRIDED_LANES:
        return None
    for k, fs in enumerate(forms):
        if fs[-1].terms != lane0.terms or fs[-1].const != lane0.const + step * k:
            return None
    return loads, step


def _unwritten(op, loads, noalias) -> bool:
    """Whether nothing between the first of `loads` and `op` may write their memref."""
    (buffer, shared), _ = root(loads[0].operands[0], noalias)
    if buffer is None or shared:
        return False
    ops = [o.operation for o in op.block.operations]
    start = min(ops.index(ld) for ld in loads)
    return not any(
        other.regions or _may_write(other, buffer, noalias)
        for other in ops[start : ops.index(op.operation)]
    )


def _pair_loop(op, loads, memo, noalias):
    """(IV, first value) of the loop that reads the other half of a stride-2 build's span,
    or None. Such a loop (a 2x2 max pool's window column `rx`: lanes `A[.., 2 x + rx]`) runs
    twice, its IV enters the lanes' last index with coefficient 1 and no other index, so its
    two iterations read the even and the odd elements of one span of 2n: two loads there and
    an even and an odd shuffle serve both, one picked by the IV (after LLVM unrolls the loop,
    the two iterations' loads are the same and the pick is a constant). Only loops around the
    build (none but `scf.for`s of at least one iteration between), its indices defined
    outside but for the IV, and the loop writing nothing of the memref."""
    forms = [value_linear(i, _leaf, memo) for i in list(loads[0].operands)[1:]]
    parent = op.operation.parent
    while parent is not None and parent.name == "scf.for":
        bounds = scf_bounds(parent)
        if bounds is None or bounds[1] - bounds[0] < 1:
            return None
        iv = parent.regions[0].blocks[0].arguments[0]
        if (
            bounds[2] == 1
            and bounds[1] - bounds[0] == 2
            and forms[-1].terms.get(iv) == 1
            and all(iv not in f.terms for f in forms[:-1])
        ):
            outside = all(a == iv or defined_outside(a, parent) for f in forms for a in f.terms)
            if outside and _unrolled(parent) and _loop_unwritten(parent, loads[0], noalias):
                return iv, bounds[0]
            return None
        parent = parent.parent
    return None


def _sibling_halves(plans, memo, noalias) -> dict:
    """id(build) -> 0 or 1 for two stride-2 builds of one block that are the even and the odd
    elements of one span (a window column unrolled: lanes `A[.., 2 x]` and `A[.., 2 x + 1]`):
    each reads the span's two halves whole, so the second reads what the first did."""
    rows: dict = {}
    for op, loads, step in plans:
        if step != 2:
            continue
        forms = [value_linear(i, _leaf, memo) for i in list(loads[0].operands)[1:]]
        key = (
            op.operation.block,
            loads[0].operands[0],
            len(loads),
            tuple(f.key() for f in forms[:-1]),
            frozenset(forms[-1].terms.items()),
        )
        rows.setdefault(key, {})[forms[-1].const] = (op, loads)
    halves: dict = {}
    for starts in rows.values():
        for const, (even, even_loads) in sorted(starts.items()):
            odd = starts.get(const + 1)
            if odd is None or id(even) in halves or id(odd[0]) in halves:
                continue
            ops = [o.operation for o in even.operation.block.operations]
            later = max((even, odd[0]), key=lambda o: ops.index(o.operation))
            if _unwritten(later, even_loads + odd[1], noalias):
                halves[id(even)], halves[id(odd[0])] = 0, 1
    return halves


def _unrolled(loop) -> bool:
    """Whether LLVM unrolls the pair loop whole (`UNROLLED_BAND_OPS`): rolled, each iteration
    would make both shuffles and pick one, and no loads would be shared."""
    return 2 * _value_ops(loop.regions[0].blocks[0]) <= UNROLLED_BAND_OPS


def _value_ops(block) -> float:
    """Stores and ops on values other than indices and constants in `block`, an inner loop
    counted unrolled (what LLVM's unroller weighs once the index arithmetic has folded)."""
    count = 0.0
    for op in block.operations:
        op = op.operation
        if op.name == "scf.for":
            trips = trip_count(op)
            count += math.inf if trips is None else trips * _value_ops(op.regions[0].blocks[0])
        elif op.name in STORES or any(not isinstance(r.type, ir.IndexType) for r in op.results):
            count += op.name != "arith.constant"
    return count


def _loop_unwritten(loop, load, noalias) -> bool:
    """Whether nothing in `loop` may write `load`'s memref."""
    (buffer, shared), _ = root(load.operands[0], noalias)
    if buffer is None or shared:
        return False
    return not any(_may_write(other, buffer, noalias) for other in walk_all(loop))


def _may_write(op, buffer, noalias) -> bool:
    """Whether `op` may write `buffer`: a call, or a store to it or to a buffer not told apart."""
    if op.name.startswith(("func.call", "llvm.call")):
        return True
    if op.name not in STORES:
        return False
    (target, target_shared), _ = root(op.operands[1], noalias)
    return target is None or target_shared or target == buffer


def _rewrite(op, loads, step: int, half=None):
    """`half`: None (the build alone), 0 or 1 (the even or odd elements of a span whose other
    half a sibling build reads), or (IV, first) (the pair loop's iteration picks)."""
    n = len(loads)
    first = loads[0]
    memref, indices = first.operands[0], list(first.operands)[1:]
    with ir.InsertionPoint(op.operation), op.location:
        row = ir.VectorType.get([n], ir.MemRefType(memref.type).element_type)
        if half is not None:
            op.result.replace_all_uses_with(_half(row, memref, indices, half))
            op.operation.erase()
            return
        lo = vector.load(row, memref, indices)
        if step == 1:
            op.result.replace_all_uses_with(lo)
        else:
            # lanes 0 .. n-1 are elements 2k of the span; the second load starts at its n-1-th
            shift = arith.constant(ir.IndexType.get(), n - 1)
            hi_index = arith.addi(indices[-1], shift)
            hi = vector.load(row, memref, indices[:-1] + [hi_index])
            mask = [2 * k if 2 * k < n else 2 * k + 1 for k in range(n)]
            op.result.replace_all_uses_with(vector.shuffle(lo, hi, mask))
    op.operation.erase()


def _half(row, memref, indices, half):
    """Lanes 2k + h of the span that starts h before the lanes' first index: its two halves
    loaded whole and the even or odd elements shuffled out; h is 0 or 1, or for a pair loop
    (IV, first) its IV less its first value, both shuffles made and one picked."""
    n = ir.VectorType(row).shape[0]
    index = ir.IndexType.get()
    if isinstance(half, int):
        start = arith.subi(indices[-1], arith.constant(index, half)) if half else indices[-1]
    else:
        iv, first = half
        start = arith.subi(indices[-1], iv)
        if first:
            start = arith.addi(start, arith.constant(index, first))
    lo = vector.load(row, memref, indices[:-1] + [start])
    hi = vector.load(row, memref, indices[:-1] + [arith.addi(start, arith.constant(index, n))])
    even = [2 * k for k in range(n)]
    if isinstance(half, int):
        return vector.shuffle(lo, hi, [k + half for k in even])
    iv, first = half
    is_first = arith.cmpi(arith.CmpIPredicate.eq, iv, arith.constant(index, first))
    return arith.select(
        is_first, vector.shuffle(lo, hi, even), vector.shuffle(lo, hi, [k + 1 for k in even])
    )
