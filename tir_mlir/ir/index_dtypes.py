"""The TensorIR dtype (int32 or int64) of an `index` value, read from the IR.

Loop vars, iter vars and index constants are all MLIR `index`; TensorIR types them int32 or
int64 (`T.int64(4)` shapes, Relax-made programs). The dtype is recorded where a value is
defined (docs/design.md, "Index dtypes"): `tir.index_dtype` on an `affine.for` (its IV), on a
`tir.block` (one per iter var, for both regions' arguments) and on an index `arith.constant`.
Index arithmetic takes the widest dtype of its operands, as TVM's binary ops do.
"""

from typing import Optional

from mlir import ir

from tir_mlir.ir.affine_exprs import dims_of
from tir_mlir.dialect.buffers import buffer_attrs
from tir_mlir.dialect.ops import (
    INDEX_DTYPE,
    Block,
    Loop,
    index_dtype_attr,
    index_dtype_value,
    str_attr,
)

INDEX_ARITH = (
    "arith.addi",
    "arith.subi",
    "arith.muli",
    "arith.floordivsi",
    "arith.divsi",
    "arith.remsi",
    "arith.maxsi",
    "arith.minsi",
    "arith.ceildivsi",
    "tir.call",
    "arith.select",
    "affine.apply",
)


def wider(*dtypes: str) -> str:
    return "int64" if "int64" in dtypes else "int32"


def index_dtype(v: ir.Value) -> str:
    """ "int32" or "int64" for an index value (iteratively: index trees can be deep)."""
    stack = [v]
    while stack:
        x = stack.pop()
        d = _defined(x)
        if d == "int64":
            return d
        if d is None:
            op = x.owner.operation
            stack.extend(o for o in op.operands if isinstance(o.type, ir.IndexType))
    return "int32"


def _defined(v: ir.Value):
    """The dtype recorded where v is defined; None for index arithmetic (look at operands)."""
    if isinstance(v, ir.BlockArgument):
        owner = ir.BlockArgument(v).owner.owner
        if owner is None:
            return "int32"
        owner = owner.operation if hasattr(owner, "operation") else owner
        if Loop.is_loop(owner):
            return Loop(owner).index_dtype
        if Block.is_block(owner):
            dtypes = Block(owner).index_dtypes
            return dtypes[v.arg_number] if v.arg_number < len(dtypes) else "int32"
        if owner.name == "func.func" and isinstance(v.type, ir.IndexType):
            # a symbolic var or integer scalar parameter: its `tir.dtype` (docs/symbolic.md)
            dtype = str_attr(buffer_attrs(v), "tir.dtype", "int32")
            return dtype if dtype in ("int32", "int64") else "int32"
        return "int32"
    op = v.owner.operation
    if INDEX_DTYPE in op.attributes:
        return index_dtype_value(op.attributes[INDEX_DTYPE])
    if op.name in ("arith.index_cast", "arith.index_castui"):
        src = op.operands[0].type
        return "int64" if isinstance(src, ir.IntegerType) and src.width == 64 else "int32"
    if op.name in INDEX_ARITH:
        return None
    return "int32"


def buffer_attr(dim_dtypes) -> Optional[ir.Attribute]:
    """`tir.index_dtype` of a buffer (arg attr / alloc attr): "int64" when every dimension is
    an int64, else one string per dimension; None when all are int32 (nothing recorded)."""
    dim_dtypes = list(dim_dtypes)
    if all(d == "int32" for d in dim_dtypes):
        return None
    if all(d == dim_dtypes[0] for d in dim_dtypes):
        return index_dtype_attr(dim_dtypes[0])
    return ir.ArrayAttr.get([index_dtype_attr(d) for d in dim_dtypes])


def buffer_dim_dtypes(attr, rank: int) -> tuple:
    """The per-dimension dtypes a buffer's `tir.index_dtype` (or None) stands for."""
    if attr is None:
        return ("int32",) * rank
    if isinstance(attr, ir.ArrayAttr):
        return tuple(index_dtype_value(a) for a in attr)
    return (index_dtype_value(attr),) * rank


def buffer_dims(buf: ir.Value) -> tuple:
    """Per-dimension dtypes of a buffer: a function argument or a `memref.alloc(a)`."""
    attrs = buffer_attrs(buf)
    return buffer_dim_dtypes(
        attrs[INDEX_DTYPE] if INDEX_DTYPE in attrs else None, len(ir.MemRefType(buf.type).shape)
    )


def expr_dtype(e: ir.AffineExpr, dim_dtypes, default: str = "int32") -> str:
    """The dtype of an affine expression over index values of `dim_dtypes`: int64 when it uses
    an int64 one (TVM widens the constants to match); a constant expression has the `default`
    dtype of where it stands (iter var, buffer dimension)."""
    used = dims_of(e)
    return wider(*(dim_dtypes[p] for p in used)) if used else default


def binding_dtypes(bindings: ir.AffineMap, dims) -> list:
    """Iter var dtypes a block's bindings imply: an iter var bound to an expression of int64
    loop vars is an int64 (as TVM's split/fuse/blockize/cache_* make them); one bound to a
    constant takes the widest dtype of the block's dims."""
    dim_dtypes = [index_dtype(d) for d in dims]
    widest = wider(*dim_dtypes)
    return [expr_dtype(e, dim_dtypes, widest) for e in bindings.results]


def mark_constants(v: ir.Value) -> ir.Value:
    """Give the index constants of an int64 index expression tree the int64 dtype (a rewrite
    that builds `v_k * 4` over int64 iter vars must print `v_k * T.int64(4)`, as TVM's does)."""
    if not isinstance(v.type, ir.IndexType) or index_dtype(v) != "int64":
        return v
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, ir.BlockArgument):
            continue
        op = x.owner.operation
        if op.name == "arith.constant" and isinstance(x.type, ir.IndexType):
            if INDEX_DTYPE not in op.attributes:
                op.attributes[INDEX_DTYPE] = index_dtype_attr("int64")
        elif op.name in INDEX_ARITH:
            stack.extend(o for o in op.operands if isinstance(o.type, ir.IndexType))
    return v
