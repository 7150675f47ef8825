"""Stage `index-constants` (CPU, scf level, last before `scf-to-llvm`): the constant part of a
memory access's outer indices moves into its innermost index, so that the access's address is
one shared sum plus a constant. The moved index is out of its dimension's range, so such an
access reads a 1-D view of its buffer at the address, spelled out (A: 4x112x112, 50176 floats):

    memref.load %A[%c, %h + 1, %w]         %f = memref.reinterpret_cast %A to offset: [0],
                                     =>             sizes: [50176], strides: [1]
                                           memref.load %f[%c * 12544 + %h * 112 + (%w + 112)]

An unrolled loop over an outer dimension (channels, rows) leaves `%c + k` in the index of every
copy. `finalize-memref-to-llvm` multiplies each index by its stride, and when `%c + k` has
several uses (the same channel indexes the input and the output) LLVM does not distribute the
multiplication (`(x + k) * s` becomes `x * s + k * s` only for a single use): every copy then
computes its own address, one register each, and a copy count past the register file spills
them (a 2x2 max pool unrolled over 16 channels x 8 rows kept 16 channel addresses per row).
With the constants moved, the copies share `%c * s + %h * s' + %w` and each adds its constant,
which x86 folds into the access's displacement, as TVM's flattened indices do.

An access qualifies when its memref has static strides and a unit innermost stride and is not a
`memref.get_global` (a constant global's loads fold by index).

Why a view: `memref.load`/`memref.store` require every index in its dimension's range, and
`finalize-memref-to-llvm` lowers them with `nuw` on each index's product and on their sum, and
an `inbounds|nuw` GEP: the constant moved as a multi-dimensional index (`%A[%c, %h, %w + 112]`,
or `%w - 112` from a `%h - 1`, whose unsigned sum wraps) breaks that promise, and the address
may be poison (a `vector.load`'s out-of-range elements are unspecified). The view spans the
buffer's elements at its offset with unit stride, so the address of an in-range access is in
range of it. The address is an `affine.apply` of the indices (the innermost one plus the
constant an `arith.addi`, as it was), which `lower-affine` expands in the order
`finalize-memref-to-llvm` adds a multi-dimensional access's terms, after the canonicalization
that precedes the LLVM conversion: spelled as `arith` ops here, that canonicalization would fold
`(%x * 8) * 1024` into `%x * 8192` and hand LLVM other sums than the untouched accesses'. So
LLVM sees the sums it saw with the constant in the innermost index, without their `nuw` (a
term may be negative when the constant is).
"""

from mlir import ir
from mlir.dialects import affine, arith, memref

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
    """(the memref operand's position, [(index, stride)] of every dimension with the constants
    peeled off, the constant moved) of an access to rewrite, or None: one whose outer indices
    have no constant part."""
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
    peeled = [_peel(op.operands[at + 1 + d]) for d in range(len(strides))]
    if not any(k for _, k in peeled[:-1]):
        return None
    terms = [(x, stride) for (x, _), stride in zip(peeled, strides)]
    return at, terms, sum(k * stride for (_, k), stride in zip(peeled, strides))


def _view(buffer: ir.Value, loc) -> ir.Value:
    """A 1-D unit-stride view of the elements of `buffer` (static strides, a unit innermost
    one), at its offset: from its first element to its last (a dynamic dimension's extent read
    with `memref.dim`)."""
    mtype = ir.MemRefType(buffer.type)
    strides, offset = mtype.get_strides_and_offset()
    dynamic = ir.ShapedType.get_dynamic_size()
    sizes, offsets = [], []
    if any(n == 0 for n in mtype.shape):
        span = 0
    else:
        span = 1 + sum((n - 1) * s for n, s in zip(mtype.shape, strides) if n != dynamic)
    if not mtype.has_static_shape:
        total = index_const(span, loc)
        for d, (n, s) in enumerate(zip(mtype.shape, strides)):
            if n == dynamic:
                last = arith.subi(memref.dim(buffer, index_const(d, loc)), index_const(1, loc))
                total = arith.addi(total, arith.muli(last, index_const(s, loc)))
        sizes.append(arith.maxsi(total, index_const(0, loc)))
        span = dynamic
    if mtype.is_dynamic_stride_or_offset(offset):
        offsets.append(memref.ExtractStridedMetadataOp(buffer).results[1])
    layout = None if offset == 0 else ir.StridedLayoutAttr.get(offset, [1])
    flat = ir.MemRefType.get([span], mtype.element_type, layout, mtype.memory_space)
    return memref.reinterpret_cast(flat, buffer, offsets, sizes, [], [offset], [span], [1])


def _address(terms, moved: int, loc) -> ir.Value:
    """`affine.apply` of the outer indices times their strides plus the innermost index plus
    `moved` (that last sum an `arith.addi`, as the innermost index was)."""
    *outer, (inner, _) = terms
    if moved:
        inner = arith.AddIOp(inner, index_const(moved, loc)).result
    expr = ir.AffineExpr.get_dim(len(outer))
    for d, (_, stride) in reversed(list(enumerate(outer))):
        expr = ir.AffineExpr.get_dim(d) * stride + expr
    dims = [x for x, _ in outer] + [inner]
    return affine.apply(ir.AffineMap.get(len(dims), 0, [expr]), dims)


def _rewrite(op, at: int, terms, moved: int):
    """Replace `op` by the same access of the 1-D view at the address."""
    with ir.InsertionPoint(op), op.location:
        view = _view(op.operands[at], op.location)
        address = _address(terms, moved, op.location)
        new = ir.Operation.create(
            op.name,
            results=[r.type for r in op.results],
            operands=[*list(op.operands)[:at], view, address],
            attributes={a.name: a.attr for a in op.attributes},
        )
    for old, result in zip(op.results, new.results):
        old.replace_all_uses_with(result)
    op.erase()


class IndexConstants:
    name = "index-constants"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            plans = [(op, _plan(op)) for op in walk_all(f)]
            for op, plan in plans:
                if plan is not None:
                    _rewrite(op.operation, *plan)
