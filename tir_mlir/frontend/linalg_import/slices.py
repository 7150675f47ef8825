"""`tensor.extract_slice`, `tensor.insert_slice` and `tensor.concat` as copy blocks.

Each is one block copying elements between two buffers with affine indices (static offsets,
sizes and strides only):
- extract_slice: over the slice, `dst[i, j] = src[o0 + s0 * i, o1 + s1 * j]`;
- insert_slice: over the inserted tensor, `dst[o0 + s0 * i, ...] = src[i, ...]` (after the
  destination's contents are in `dst`: written in place, or copied first, by the planner);
- concat: one block per input, `dst[..., off + i, ...] = src_k[..., i, ...]` along the
  concatenated dimension, `off` the sizes of the inputs before it.
A rank-reducing slice drops unit dimensions; which ones does not matter here, since a dropped
dimension and a kept one of size 1 both index its offset.
"""

from mlir import ir

SLICE_OPS = ("tensor.extract_slice", "tensor.insert_slice", "tensor.concat")


def is_static(op) -> bool:
    """No dynamic offsets, sizes or strides (operands beyond the tensors)."""
    tensors = {"tensor.extract_slice": 1, "tensor.insert_slice": 2}.get(op.name)
    return tensors is None or len(op.operands) == tensors


def copy_indices(op, part: int, shapes) -> tuple:
    """(iteration shape, source index exprs, destination index exprs) of the block copying
    input `part` of `op` (dims d0... range over the iteration shape); `shapes`: the sizes of
    the concatenated tensors (only the last may be dynamic along the concatenated
    dimension)."""
    if op.name == "tensor.concat":
        dim = ir.IntegerAttr(op.attributes["dim"]).value
        shape = shapes[part]
        d = _dims(len(shape))
        off = sum(s[dim] for s in shapes[:part])
        return shape, d, [e + off if k == dim else e for k, e in enumerate(d)]
    offsets, sizes, strides = (
        list(ir.DenseI64ArrayAttr(op.attributes[f"static_{a}"]))
        for a in ("offsets", "sizes", "strides")
    )
    if op.name == "tensor.extract_slice":
        shape = ir.ShapedType(op.results[0].type).shape
        d = _dims(len(shape))
        return shape, _strided(d, shape, offsets, sizes, strides), d
    shape = ir.ShapedType(op.operands[0].type).shape  # insert_slice: the source
    d = _dims(len(shape))
    return shape, d, _strided(d, shape, offsets, sizes, strides)


def _dims(n: int) -> list:
    return [ir.AffineExpr.get_dim(i) for i in range(n)]


def _strided(d, shape, offsets, sizes, strides) -> list:
    """The full-rank index `offset + stride * i` of each dimension of the sliced tensor
    (iterated by `d` over `shape`, its unit dimensions maybe dropped)."""
    out, k = [], 0
    for j, size in enumerate(sizes):
        dropped = size == 1 and len(sizes) - j > len(shape) - k
        if dropped:
            out.append(ir.AffineExpr.get_constant(offsets[j]))
        else:
            out.append(d[k] * strides[j] + offsets[j])
            k += 1
    return [ir.AffineExpr.simplify_affine_expr(e, len(d), 0) for e in out]
