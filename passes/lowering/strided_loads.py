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

A `vector.from_elements` is rewritten when every lane is a `memref.load` of one memref (last
dimension of unit stride) in its block, the lanes' indices equal in every dimension but the last
(as linear forms), and the last one the first lane's plus s times the lane, s 1 (2 with at
least 4 lanes); and from the first of those loads to the build nothing in the block may write
that memref (a store to another `noalias` argument or allocation is fine) or holds a region or
a call.
"""

from mlir import ir
from mlir.dialects import arith, vector

from tir_mlir.analysis.linear import Linear, value_linear
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.buffer_roots import noalias_args, root
from tir_mlir.passes.lowering.common import functions

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
            noalias = noalias_args(f)
            memo: dict = {}
            for op in [o for o in walk_all(f) if o.name == "vector.from_elements"]:
                plan = _plan(op, memo)
                if plan is not None and _unwritten(op, plan[0], noalias):
                    _rewrite(op, *plan)


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
    for other in ops[start : ops.index(op.operation)]:
        if other.regions or other.name.startswith(("func.call", "llvm.call")):
            return False
        if other.name in STORES:
            (target, target_shared), _ = root(other.operands[1], noalias)
            if target is None or target_shared or target == buffer:
                return False
    return True


def _rewrite(op, loads, step: int):
    n = len(loads)
    first = loads[0]
    memref, indices = first.operands[0], list(first.operands)[1:]
    with ir.InsertionPoint(op.operation), op.location:
        row = ir.VectorType.get([n], ir.MemRefType(memref.type).element_type)
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
