"""Stage `index-constants` (CPU, scf level, last before `scf-to-llvm`): the constant part of a
memory access's outer indices moves into its innermost index, so that the access's address is
one shared sum plus a constant.

    memref.load %A[%c, %h + 1, %w]           memref.load %A[%c, %h, %w + 112]    (A: ?x112x112)
    memref.load %A[%c + 11, %h, %w]    =>    memref.load %A[%c, %h, %w + 137984]

An unrolled loop over an outer dimension (channels, rows) leaves `%c + k` in the index of every
copy. `finalize-memref-to-llvm` multiplies each index by its stride, and when `%c + k` has
several uses (the same channel indexes the input and the output) LLVM does not distribute the
multiplication (`(x + k) * s` becomes `x * s + k * s` only for a single use): every copy then
computes its own address, one register each, and a copy count past the register file spills
them (a 2x2 max pool unrolled over 16 channels x 8 rows kept 16 channel addresses per row).
With the constant in the innermost index (stride 1), the copies share `%c * s + %h * s' + %w`
and each adds its constant, which x86 folds into the access's displacement, as TVM's flattened
indices do.

An access qualifies when its memref has static strides and a unit innermost stride and is not a
`memref.get_global` (a constant global's loads fold by index). The moved index is out of its
dimension's range, but the linear address is the same: the accesses are lowered to one GEP each.
"""

from mlir import ir
from mlir.dialects import arith

from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.common import constant_int, functions, index_const

# op name -> position of the memref operand (the indices follow it).
ACCESSES = {"memref.load": 0, "memref.store": 1, "vector.load": 0, "vector.store": 1}


def _peel(value: ir.Value) -> tuple:
    """(x, k) with value == x + k, peeling `arith.addi`/`arith.subi` of constants."""
    k = 0
    while not isinstance(value.owner, ir.Block):
        op = value.owner.operation
        if op.name not in ("arith.addi", "arith.subi"):
            break
        lhs, rhs = op.operands
        c = constant_int(rhs)
        if c is not None:
            k += c if op.name == "arith.addi" else -c
            value = lhs
        elif op.name == "arith.addi" and constant_int(lhs) is not None:
            k += constant_int(lhs) or 0
            value = rhs
        else:
            break
    return value, k


def _strides(t: ir.Type):
    """The static strides of memref type `t` whose innermost one is 1, else None."""
    if not isinstance(t, ir.MemRefType) or t.rank < 2:
        return None
    m = ir.MemRefType(t)
    strides, _ = m.get_strides_and_offset()
    if strides[-1] != 1 or any(m.is_dynamic_stride_or_offset(s) for s in strides):
        return None
    return strides


def _plan(op):
    """(the outer index operands' new values as [(position, x)], the innermost's position, its
    new value as (x, k): x + k) of an access to rewrite, or None."""
    at = ACCESSES.get(op.name)
    if at is None:
        return None
    buffer = op.operands[at]
    strides = _strides(buffer.type)
    if strides is None:
        return None
    if (
        not isinstance(buffer.owner, ir.Block)
        and buffer.owner.operation.name == "memref.get_global"
    ):
        return None
    first, inner = at + 1, at + len(strides)
    moved, outer = 0, []
    for d in range(len(strides) - 1):
        x, k = _peel(op.operands[first + d])
        if k:
            moved += k * strides[d]
            outer.append((first + d, x))
    if not outer:
        return None
    x, k = _peel(op.operands[inner])
    return outer, inner, (x, k + moved)


def _rewrite(op, outer, inner: int, new):
    for position, x in outer:
        op.operands[position] = x
    x, k = new
    if k:
        with ir.InsertionPoint(op), op.location:
            x = arith.AddIOp(x, index_const(k, op.location)).result
    op.operands[inner] = x


class IndexConstants:
    name = "index-constants"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            plans = [(op, _plan(op)) for op in walk_all(f)]
            for op, plan in plans:
                if plan is not None:
                    _rewrite(op, *plan)
