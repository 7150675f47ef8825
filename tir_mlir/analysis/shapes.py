"""Buffer shapes as `Int`s (docs/symbolic.md): a static dimension is an int; a dynamic one
(`memref<?x128xf32>`) is the SymExpr its definition states: the `tir.match_shape` of a
parameter, or the size operand of a `memref.alloc`. And back: the dynamic sizes an
allocation of a symbolic shape takes, as values at the top level of the function."""

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import affine

from tir_mlir.analysis.symbolic import Int, SymExpr

MATCH_SHAPE = "tir.match_shape"


def buffer_shape(buf: ir.Value) -> list[Int]:
    """The shape of a buffer (a memref value): ints, SymExprs for its dynamic dimensions."""
    mtype = ir.MemRefType(buf.type)
    shape: list[Int] = list(mtype.shape)
    dynamic = [k for k, s in enumerate(mtype.shape) if ir.ShapedType.is_dynamic_size(s)]
    if not dynamic:
        return shape
    sizes = _dynamic_sizes(buf)
    if sizes is None or len(sizes) != len(dynamic):
        raise ValueError(
            f"the dynamic sizes of {buf.get_name()} are not stated "
            f"(no tir.match_shape or alloc operands)"
        )
    for k, s in zip(dynamic, sizes):
        shape[k] = s
    return shape


def _dynamic_sizes(buf: ir.Value):
    owner = buf.owner
    if isinstance(owner, ir.Block):
        if owner.owner.operation.name != "func.func":
            return None
        for op in owner.operations:
            op = op.operation
            if op.name == MATCH_SHAPE and op.operands[0] == buf:
                amap = ir.AffineMapAttr(op.attributes["shape"]).value
                full = SymExpr.from_map(amap, list(op.operands)[1:])
                mshape = ir.MemRefType(buf.type).shape
                return [s for s, m in zip(full, mshape) if ir.ShapedType.is_dynamic_size(m)]
        return None
    if owner.name in ("memref.alloc", "memref.alloca"):
        return [size_of(v) for v in owner.operands]
    return None


def size_of(value: ir.Value) -> Int:
    """A size value as an expression of symbols: an `affine.apply` over symbols (what
    `size_operands` makes) is its expression, any other value a symbol of its own."""
    owner = value.owner
    if not isinstance(owner, ir.Block) and owner.name == "affine.apply":
        amap = ir.AffineMapAttr(owner.attributes["map"]).value
        if not amap.n_dims:
            return SymExpr.from_map(amap, list(owner.operands))[0]
    return SymExpr.symbol(value)


def is_dynamic(shape: Sequence[Int]) -> bool:
    return any(isinstance(s, SymExpr) for s in shape)


def memref_type(shape: Sequence[object], element: ir.Type, layout=None) -> ir.MemRefType:
    """The memref type of that shape: `?` for each dimension that is not an int (a SymExpr, an
    affine size)."""
    dims = [s if isinstance(s, int) else ir.ShapedType.get_dynamic_size() for s in shape]
    return (
        ir.MemRefType.get(dims, element, layout)
        if layout is not None
        else ir.MemRefType.get(dims, element)
    )


def size_operands(
    func: ir.Operation, shape: Sequence[Int]
) -> tuple[list[ir.Value], ir.Operation | None]:
    """The dynamic-size operands of an allocation of `shape` in `func`, and the last
    top-level op they need before them (None: the arguments only). A dimension that is one
    symbol is that value; another expression is an `affine.apply` made at the top level
    right after the definitions of its symbols (a symbol, as MLIR requires)."""
    body = func.regions[0].blocks[0]
    values = []

    def tops() -> list:
        return [o.operation for o in body.operations]

    def position(v: ir.Value) -> int:
        owner = v.owner
        if isinstance(owner, ir.Block):
            return -1
        return next(k for k, o in enumerate(tops()) if o == owner.operation)

    for s in shape:
        if isinstance(s, int):
            continue
        if len(s.symbols) == 1 and str(s.expr) == "s0":
            value = s.symbols[0]
        else:
            after = max((position(v) for v in s.symbols), default=-1)
            top = tops()
            amap, operands = s.to_map()
            ip = (
                ir.InsertionPoint(top[after + 1])
                if after + 1 < len(top)
                else ir.InsertionPoint(body)
            )
            value = affine.AffineApplyOp(amap, operands, ip=ip).result
        values.append(value)
    # (positions only now: each affine.apply made above shifted the ops after it)
    last = max((position(v) for v in values), default=-1)
    return values, (tops()[last] if last >= 0 else None)
