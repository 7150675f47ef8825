"""Accesses through a view of an intermediate buffer become accesses of the buffer itself.

A block's `T.match_buffer` of a region, and tensorize's views of the impl's buffers (TVM's
form), are `memref.subview`s; `compact-buffers` shrinks a buffer only when loads and stores
are its sole users, so before it a view used only by loads and stores is folded away:

    V = memref.subview %buf[o0, o1][1, 16][1, 1]      (a view of buf[o0, o1:o1 + 16])
    memref.load V[j]                               => memref.load %buf[o0, o1 + j]

Only views of `memref.alloc`/`memref.alloca` buffers with unit strides, whose dropped
dimensions are the leading ones (how T.match_buffer and tensorize build them); the others stay.
"""

from mlir import ir
from mlir.dialects import arith, memref

from tir_mlir.passes.lowering.common import walk

_ACCESS = (("memref.load", 0), ("memref.store", 1))


def fold_views(func) -> None:
    for op in [o for o in walk(func) if o.name == "memref.subview"]:
        src = op.operands[0]
        if isinstance(src.owner, ir.Block) or src.owner.name not in (
            "memref.alloc",
            "memref.alloca",
        ):
            continue
        uses = [(u.owner, u.operand_number) for u in op.results[0].uses]
        if not all((o.name, n) in _ACCESS for o, n in uses):
            continue
        if any(s != 1 for s in _static(op, "static_strides")):
            continue
        with ir.InsertionPoint(op), op.location:
            offsets = _offsets(op)
        lead = len(offsets) - ir.MemRefType(op.results[0].type).rank
        if any(s != 1 for s in _static(op, "static_sizes")[:lead]):
            continue
        for user, _ in uses:
            _rewrite(user, src, offsets, lead)
        op.erase()


def _static(op, key) -> list:
    return list(ir.DenseI64ArrayAttr(op.attributes[key]))


def _offsets(op) -> list:
    """The view's offsets as index values (static ones as constants)."""
    dynamic = iter(op.operands[1:])
    out = []
    for s in _static(op, "static_offsets"):
        if s == ir.ShapedType.get_dynamic_stride_or_offset():
            out.append(next(dynamic))
        else:
            out.append(arith.ConstantOp(ir.IndexType.get(), s).result)
    return out


def _rewrite(user, src, offsets, lead):
    is_load = user.name == "memref.load"
    idx = list(user.operands[1:] if is_load else user.operands[2:])
    with ir.InsertionPoint(user), user.location:
        new_idx = offsets[:lead] + [arith.AddIOp(o, i).result for o, i in zip(offsets[lead:], idx)]
        if is_load:
            user.results[0].replace_all_uses_with(memref.LoadOp(src, new_idx).result)
        else:
            memref.StoreOp(user.operands[0], src, new_idx)
    user.erase()
