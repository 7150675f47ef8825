"""TVM's fixed-point multiplications of quantized kernels (QNN requantize):

    T.q_multiply_shift(x, y, q, s)
    T.q_multiply_shift_per_axis(x, y, ls, rs, q, is_lshift_required, is_rshift_required)

`x * y` with y a Q`q` fixed-point multiplier, shifted left by `s` (right where negative; the
per-axis form takes the left and right shifts `ls`, `rs` as values and says, as constant bools,
which of them can be non-zero), rounded to nearest: int32 in, int32 out. Each is a `tir.call` of
its TVM name over the int32 operands (a `tir.call`'s operands share one type: the two flags,
constants, are its FIXED_POINT_FLAGS attributes), expanded by the lowering.
"""

from mlir import ir

from tir_mlir.dialect.expr_ops import FIXED_POINT_FLAGS
from tir_mlir.frontend.expr_host import ExprHost
from tir_mlir.frontend.values import Lit, Val

# name -> its arguments' dtypes
SIGNATURES = {
    "q_multiply_shift": ("int32",) * 4,
    "q_multiply_shift_per_axis": ("int32",) * 5 + ("bool",) * 2,
}


class FixedPointExprs(ExprHost):
    """Mixin of ExprBuilder (uses its _arity/materialize/call_op/fail)."""

    def _call_q_multiply_shift(self, name, args, kwargs, pos):
        sig = SIGNATURES[name]
        self._arity(name, args, len(sig), pos, kwargs, ("dtype",))
        if "dtype" in kwargs and self.dtype_arg(kwargs["dtype"][0], kwargs["dtype"][1]) != "int32":
            self.fail(f"T.{name} computes int32 only", kwargs["dtype"][1])
        values, flags = [], []
        for x, dtype in zip(args, sig):
            if dtype == "bool":
                if not (isinstance(x, Lit) and isinstance(x.value, bool)):
                    self.fail(
                        f"T.{name}: is_lshift_required / is_rshift_required are True or False",
                        pos,
                    )
                flags.append(x.value)
                continue
            v = self.materialize(x, pos, dtype if isinstance(x, Lit) else None)
            if v.dtype != dtype:
                self.fail(f"T.{name} takes {', '.join(sig)} arguments, found {v.dtype}", pos)
            values.append(v.value)
        v = self.call_op(name, values, "int32", pos)
        for key, flag in zip(FIXED_POINT_FLAGS, flags):
            v.owner.attributes[key] = ir.BoolAttr.get(flag)
        return Val(v, "int32")
