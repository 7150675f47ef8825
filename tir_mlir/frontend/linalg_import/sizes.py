"""The dynamic sizes of a linalg function (`tensor<?x128xf32>`) as expressions of size vars.

Each dynamic dimension of an argument is a size var (it becomes an implicit var of the
prim_func, `n = T.int32()`, bound by the argument's `T.match_buffer` shape: docs/symbolic.md).
Every other dynamic size is an expression of them: the index values of the function's top
level (`tensor.dim`, `arith` on sizes, `affine.apply`) evaluate to one, and so do the sizes
of the tensors ops make from their operands (`tensor.empty(%d)`, a collapse's product).

A size is an `int` or an `ir.AffineExpr` whose symbol k is var k. Two vars are one size when
a linalg op iterates them with one loop (linalg requires the sizes a loop indexes to agree) or
a `cf.assert` states they are equal (torch-mlir's shape checks): union-find, resolved once
the whole function is planned, so the kernel has one implicit var per distinct size.
"""

from mlir import ir

from tir_mlir.analysis.symbolic import substitute

Size = int | ir.AffineExpr

# index arithmetic on sizes -> how its affine expression is made (an operand that is not a
# constant where affine needs one is refused)
_BINARY = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divsi": ir.AffineExpr.get_floor_div,  # sizes are never negative
    "arith.divui": ir.AffineExpr.get_floor_div,
    "arith.floordivsi": ir.AffineExpr.get_floor_div,
    "arith.ceildivsi": ir.AffineExpr.get_ceil_div,
    "arith.ceildivui": ir.AffineExpr.get_ceil_div,
    "arith.remsi": ir.AffineExpr.get_mod,
    "arith.remui": ir.AffineExpr.get_mod,
}
_SAME = ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci")
# what a size value may be made by, for the error about one that is not
_MADE_BY = "tensor.dim, arith.constant, index casts, +, -, * and / by constants, affine.apply"


class SizeError(Exception):
    """A dynamic size the import cannot express (`.op` is where)."""

    def __init__(self, message: str, op):
        super().__init__(message)
        self.op = op


class Sizes:
    def __init__(self):
        self.parent: list[int] = []  # union-find over the vars
        self.origin: list[tuple] = []  # var -> (argument position, dimension)
        self.values: dict = {}  # ir.Value -> Size (memo)

    # --- vars -------------------------------------------------------------------------------
    def new_var(self, arg: int, dim: int) -> ir.AffineExpr:
        self.parent.append(len(self.parent))
        self.origin.append((arg, dim))
        return ir.AffineSymbolExpr.get(len(self.parent) - 1)

    def _find(self, k: int) -> int:
        while self.parent[k] != k:
            self.parent[k] = self.parent[self.parent[k]]
            k = self.parent[k]
        return k

    def unify(self, a: Size, b: Size):
        """Record that sizes `a` and `b` are equal, when both are vars (anything else is not
        a fact the kernel needs: its loops take one of them)."""
        ka, kb = _var(a), _var(b)
        if ka is None or kb is None:
            return
        ra, rb = self._find(ka), self._find(kb)
        if ra != rb:  # the earlier argument's dimension represents both
            self.parent[max(ra, rb)] = min(ra, rb)

    def representatives(self) -> list[int]:
        """The distinct sizes: one var each, in argument order (the implicit vars)."""
        return [k for k in range(len(self.parent)) if self._find(k) == k]

    def canonical(self, size: Size) -> Size:
        """`size` over the distinct sizes: symbol j is representative j (an int when that
        makes it constant)."""
        if isinstance(size, int):
            return size
        reps = self.representatives()
        subst = [
            ir.AffineSymbolExpr.get(reps.index(self._find(k))) for k in range(len(self.parent))
        ]
        return _fold(substitute(size, [], subst))

    # --- index values -----------------------------------------------------------------------
    def of_value(self, v: ir.Value, shape_of) -> Size:
        """The size an index (or integer) value of the function's top level holds;
        `shape_of(tensor value, op)` is the planned shape of a tensor."""
        if v not in self.values:
            self.values[v] = self._evaluate(v, shape_of)
        return self.values[v]

    def _evaluate(self, v: ir.Value, shape_of) -> Size:
        owner = v.owner
        if isinstance(owner, ir.Block):
            raise SizeError(
                "a size that is a function argument (scalar parameters are not supported yet)",
                owner.owner,
            )
        op = owner.operation
        name = op.name
        if name == "arith.constant":
            attr = op.attributes["value"]
            if isinstance(attr, ir.IntegerAttr):
                return attr.value
        elif name in ("tensor.dim", "memref.dim"):
            dim = self.of_value(op.operands[1], shape_of)
            if not isinstance(dim, int):
                raise SizeError(f"'{name}' of a dynamic dimension number", op)
            return shape_of(op.operands[0], op)[dim]
        elif name in _SAME:
            return self.of_value(op.operands[0], shape_of)
        elif name in _BINARY:
            a, b = (self.of_value(x, shape_of) for x in op.operands)
            out = _affine(name, a, b)
            if out is not None:
                return out
            raise SizeError(
                f"the size computed by '{name}' is not affine in the dynamic "
                f"sizes (a product of two sizes, or division by one)",
                op,
            )
        elif name == "affine.apply":
            amap = ir.AffineMapAttr(op.attributes["map"]).value
            operands = [self.of_value(x, shape_of) for x in op.operands]
            exprs = [_expr(s) for s in operands]
            return _fold(substitute(amap.results[0], exprs[: amap.n_dims], exprs[amap.n_dims :]))
        raise SizeError(
            f"a dynamic size computed by '{name}' (sizes may be made by {_MADE_BY})", op
        )


def is_dynamic(size: Size) -> bool:
    return not isinstance(size, int)


def _var(s: Size) -> int | None:
    if isinstance(s, int):
        return None
    e = s.maybe_downcast()
    return e.position if isinstance(e, ir.AffineSymbolExpr) else None


def _expr(s: Size) -> ir.AffineExpr:
    return ir.AffineConstantExpr.get(s) if isinstance(s, int) else s


def _fold(e: ir.AffineExpr) -> Size:
    """An expression, or its value when it is constant."""
    e = ir.AffineExpr.simplify_affine_expr(e, 0, _n_symbols(e))
    c = e.maybe_downcast()
    return c.value if isinstance(c, ir.AffineConstantExpr) else e


def _n_symbols(e: ir.AffineExpr) -> int:
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineSymbolExpr):
        return e.position + 1
    if not isinstance(e, ir.AffineBinaryExpr):
        return 0  # a constant or a dim
    return max(_n_symbols(e.lhs), _n_symbols(e.rhs))


def _affine(name: str, a: Size, b: Size) -> Size | None:
    """`a <op> b` when it is affine: a product needs a constant side, a division or
    remainder a constant divisor."""
    if name == "arith.muli" and is_dynamic(a) and is_dynamic(b):
        return None
    if name not in ("arith.addi", "arith.subi", "arith.muli") and is_dynamic(b):
        return None
    return _fold(_BINARY[name](_expr(a), _expr(b)))
