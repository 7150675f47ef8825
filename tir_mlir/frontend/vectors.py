"""Vector dtypes (`float32x4`, `int8x4`...) in expressions: `T.Broadcast(x, 4)`, `T.Ramp(b, s, 4)`,
and vector loads/stores `A[i * 4:i * 4 + 4]` (TVM's spelling of `A[T.Ramp(i * 4, 1, 4)]`);
`T.reinterpret("int32", v)` (the same bits as another dtype of the same width, `int8x4` ->
`int32`) and `T.vectorlow` / `T.vectorhigh` (a vector's first / second half), the pieces of
TVM's x86 / ARM / Hexagon tensor intrinsics.

A vector value is an MLIR `vector<4xf32>`: arith ops work on it lane by lane, `T.Broadcast` is
`vector.broadcast`, `T.Ramp` a `tir.call "ramp"` (expanded by the lowering), and a contiguous
access along the last dimension is `vector.load` / `vector.store`. `T.reinterpret`,
`T.vectorlow` and `T.vectorhigh` are `tir.call`s of those names whose result type is the dtype
they name (a bitcast and a half-slice when lowered).
"""

from dataclasses import dataclass
from typing import Any

from mlir import ir

from tir_mlir.ir.affine_exprs import const_of
from tir_mlir.dtypes import split_lanes
from tir_mlir.frontend.expr_host import ExprHost
from tir_mlir.frontend import ast as A
from tir_mlir.frontend.affine import AffineBuilder, NotAffine
from tir_mlir.frontend.values import Lit, Val


@dataclass(eq=False)
class Lanes:
    """A contiguous run of `lanes` indices from `base`: the last index of a vector access."""

    base: Any
    lanes: int


def total_bits(dtype: str) -> int:
    """Bits of a whole value: `int8x4` and `int32` both 32."""
    base, lanes = split_lanes(dtype)
    return (1 if base == "bool" else int("".join(c for c in base if c.isdigit()))) * lanes


class VectorExprs(ExprHost):
    """Mixin of ExprBuilder (uses its op/materialize/convert/fail)."""

    def splat(self, v: ir.Value, dtype: str, pos) -> ir.Value:
        """A scalar value of dtype's element, repeated to dtype's lanes."""
        return self.op("vector.broadcast", [v], dtype, pos)

    def _call_broadcast(self, name, args, kwargs, pos):
        self._arity(name, args, 2, pos, kwargs)
        x = self.materialize(args[0], pos)
        lanes = self._lanes(args[1], name, pos)
        if split_lanes(x.dtype)[1] > 1 or x.dtype == "index":
            x = x if x.dtype != "index" else self.materialize(x, pos, "int32")
            if split_lanes(x.dtype)[1] > 1:
                self.fail(f"T.{name} of a vector value ({x.dtype})", pos)
        d = f"{x.dtype}x{lanes}"
        return Val(self.splat(x.value, d, pos), d)

    def _call_ramp(self, name, args, kwargs, pos):
        self._arity(name, args, 3, pos, kwargs)
        lanes = self._lanes(args[2], name, pos)
        base = args[0]
        if isinstance(base, Val) and base.dtype == "index":  # a loop var: TVM's int32
            base = self.materialize(base, pos, "int32")
        b, s, d = self.unify(base, args[1], pos)
        if not d.startswith(("int", "uint")):
            self.fail(f"T.{name} needs integer base and stride, found {d}", pos)
        return Val(self.call_op("ramp", [b.value, s.value], f"{d}x{lanes}", pos), f"{d}x{lanes}")

    def _scalar_or_vector(self, x, pos) -> Val:
        """x as a value; a loop variable (index) as TVM's int32."""
        v = self.materialize(x, pos)
        return self.materialize(v, pos, "int32") if v.dtype == "index" else v

    def _call_reinterpret(self, name, args, kwargs, pos):
        self._arity(name, args, 2, pos, kwargs)
        dtype = self.dtype_arg(args[0], pos)
        x = self._scalar_or_vector(args[1], pos)
        if total_bits(dtype) != total_bits(x.dtype):
            self.fail(
                f"T.reinterpret from {x.dtype} ({total_bits(x.dtype)} bits) to {dtype} "
                f"({total_bits(dtype)} bits): the widths must be equal",
                pos,
            )
        return Val(self.call_op("reinterpret", [x.value], dtype, pos), dtype)

    def _call_vector_half(self, name, args, kwargs, pos):
        """`T.vectorlow("int8x8", v)`: the first half of the int8x16 v (vectorhigh: the second)."""
        self._arity(name, args, 2, pos, kwargs)
        dtype = self.dtype_arg(args[0], pos)
        x = self._scalar_or_vector(args[1], pos)
        base, lanes = split_lanes(x.dtype)
        if split_lanes(dtype) != (base, lanes // 2) or lanes % 2:
            self.fail(f"T.{name} of a {x.dtype} is a {base}x{lanes // 2}, not {dtype}", pos)
        return Val(self.call_op(name, [x.value], dtype, pos), dtype)

    def _lanes(self, x, name, pos) -> int:
        if not (isinstance(x, Lit) and type(x.value) is int and x.value >= 1):
            self.fail(f"T.{name} needs a positive constant number of lanes", pos)
        return x.value

    def slice_lanes(self, node: A.Slice, lo) -> Lanes:
        """`A[lo:hi]` in an expression: a vector access of hi - lo (a constant) lanes."""
        if node.lo is None or node.hi is None or node.step is not None:
            self.fail("a vector access needs lo:hi (no step)", node.pos)
        ab = AffineBuilder(self.env)
        try:
            span = ab.expr(node.hi)[0] - ab.expr(node.lo)[0]
        except NotAffine as e:
            self.fail(f"a vector access needs affine bounds: {e.args[0]}", e.args[1] or node.pos)
        n = const_of(ir.AffineExpr.simplify_affine_expr(span, len(ab.dims), 0))
        if n is None or n < 1:
            self.fail("a vector access needs a constant number of lanes (hi - lo)", node.pos)
        return Lanes(lo, n)

    def ramp_lanes(self, x, pos):
        """`A[T.Ramp(b, 1, n)]`: the ramp op becomes a contiguous vector access."""
        if not isinstance(x, Val) or isinstance(x.value, ir.BlockArgument):
            return x
        op = x.value.owner
        if op.name != "tir.call" or ir.StringAttr(op.attributes["callee"]).value != "ramp":
            return x
        base, stride = op.operands
        s = stride.owner
        if not (s.name == "arith.constant" and ir.IntegerAttr(s.attributes["value"]).value == 1):
            self.fail("a T.Ramp index needs stride 1 (a gather is not supported)", pos)
        lanes = ir.VectorType(x.value.type).shape[0]
        base_dtype = split_lanes(x.dtype)[0]
        op.erase()
        s.erase()
        return Lanes(Val(base, base_dtype), lanes)
