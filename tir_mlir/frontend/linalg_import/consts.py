"""Transposes of constants, evaluated at import.

torch-mlir writes every `nn.Linear` as a `linalg.transpose` of its weight constant into a
matmul. Kept as a block, the program would transpose the weight on every call, and a schedule
that inlines it reads the weight across its rows (`w[j, k]` in a loop vectorized over `j`:
a gather). A transpose of a constant is itself a constant: its elements are computed here,
once, and the matmul reads them in the order it iterates.

Only a pure permutation is folded: a `linalg.generic` of one constant input and one output,
both indexed by permutations of all its (parallel) dimensions, whose body yields the input
element unchanged.
"""

import numpy as np
from mlir import ir

from tir_mlir.frontend.linalg_import.linalg_ops import indexing_maps, iterator_types, n_inputs


def transpose_axes(op) -> list | None:
    """The axes `op` permutes its one input by (`np.transpose`'s), when it is a transpose."""
    if n_inputs(op) != 1 or len(op.results) != 1 or "R" in iterator_types(op):
        return None
    block = op.regions[0].blocks[0]
    body = list(block.operations)
    if len(body) != 1 or body[0].operation.operands[0] != block.arguments[0]:
        return None
    src, dst = (_permutation(m) for m in indexing_maps(op))
    if src is None or dst is None:
        return None
    # output axis k iterates dimension dst[k], which is input axis src.index(dst[k])
    return [src.index(d) for d in dst]


def transposed(data: ir.DenseElementsAttr, axes: list) -> ir.DenseElementsAttr | None:
    """The constant `data` transposed (None for an element type numpy lacks, bf16)."""
    try:
        values = np.array(data)
    except (TypeError, ValueError, RuntimeError):
        return None
    if values.shape != tuple(ir.ShapedType(data.type).shape):
        return None
    return ir.DenseElementsAttr.get(  # pyright: ignore[reportCallIssue]
        np.ascontiguousarray(np.transpose(values, axes)),  # pyright: ignore[reportArgumentType]
        type=ir.ShapedType(data.type).element_type,
    )


def _permutation(m: ir.AffineMap) -> list | None:
    dims = [e for e in (r.maybe_downcast() for r in m.results) if isinstance(e, ir.AffineDimExpr)]
    if len(dims) != len(m.results):
        return None
    positions = [e.position for e in dims]
    return positions if sorted(positions) == list(range(m.n_dims)) else None
