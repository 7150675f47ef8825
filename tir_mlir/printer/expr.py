"""SSA expression trees -> TVMScript expressions, inlined recursively from each use.

Expressions are built right before the statement that uses them (design.md), so printing a
value means printing the op that defines it, operand by operand. Values with `tir.let_name`
and block/loop arguments print as their names.
"""

from mlir import ir

from tir_mlir.dialect.expr_ops import BINARY as BINARY_OPS
from tir_mlir.dialect.expr_ops import CALLS, CASTS, FIXED_POINT_FLAGS, MATH_SAME
from tir_mlir.dtypes import dtype_of
from tir_mlir.errors import TIRError
from tir_mlir.ir.index_dtypes import index_dtype
from tir_mlir.printer.affine_text import affine_text
from tir_mlir.printer.extern_calls import extern_text
from tir_mlir.printer.literals import float_text, int_text
from tir_mlir.printer.precedence import ADD, AND, ATOM, CMP, MUL, NEG, NOT, OR, wrap
from tir_mlir.ir.regions import index_affine

# (operator, precedence) of each binary op.
BINARY = {op: (sym, ADD if sym in ("+", "-") else MUL) for op, sym in BINARY_OPS.items()}
CMPI = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">=", 6: "<", 7: "<=", 8: ">", 9: ">="}
CMPF = {
    1: "==",
    2: ">",
    3: ">=",
    4: "<",
    5: "<=",
    6: "!=",
    8: "==",
    9: ">",
    10: ">=",
    11: "<",
    12: "<=",
    13: "!=",
}


def value_dtype(v: ir.Value, buffers) -> str:
    """TensorIR dtype of an SSA value (unsigned when its op or buffer says so; an index
    value is an int32 or an int64, tir_mlir/ir/index_dtypes.py)."""
    if isinstance(v.type, ir.IndexType):
        return index_dtype(v)
    if not isinstance(v, ir.BlockArgument):
        op = v.owner.operation
        if "tir.dtype" in op.attributes:
            return ir.StringAttr(op.attributes["tir.dtype"]).value
        if op.name == "memref.load" and op.operands[0] in buffers:
            return buffers[op.operands[0]].dtype
    return dtype_of(v.type)


class ExprPrinter:
    def __init__(self, namer, buffers):
        self.namer = namer
        self.buffers = buffers

    def text(self, v: ir.Value) -> str:
        return self.expr(v)[0]

    def expr(self, v: ir.Value) -> tuple:
        """(text, precedence) of a value."""
        if v in self.namer:
            return self.namer[v], ATOM
        if isinstance(v, ir.BlockArgument):
            raise TIRError(f"value {v.get_name()} has no name in scope")
        return self.op_expr(v.owner.operation, v)

    def load(self, buf: ir.Value, indices, lanes=0) -> str:
        """`A[i, j]`; with `lanes`, a vector access `A[i, b:b + lanes]` (TVM's slice form)."""
        items = [self.text(i) for i in indices]
        if lanes:
            items[-1] = f"{items[-1]}:{self.slice_end(indices[-1], lanes)}"
        idx = ", ".join(items) if items else "()"
        return f"{self.namer[buf]}[{idx}]"

    def slice_end(self, start: ir.Value, extent: int) -> str:
        """`b + n` of a slice `b:b + n`, simplified like TVM (`vi * 4 + 4`)."""
        form = index_affine(start)
        if form is None:
            return f"{self.text(start)} + {extent}"
        e, values = form
        e = ir.AffineExpr.simplify_affine_expr(e + extent, len(values), 0)
        return affine_text(e, [self.text(v) for v in values], (), index_dtype(start))[0]

    def op_expr(self, op: ir.Operation, v: ir.Value) -> tuple:
        name = op.name
        args = list(op.operands)
        if name == "arith.constant":
            return self._constant(op, v)
        if name in BINARY:
            sym, prec = BINARY[name]
            return self._binary(sym, prec, *args)
        if name == "tir.call":
            callee = ir.StringAttr(op.attributes["callee"]).value
            if callee == "floormod":
                return self._binary("%", MUL, *args)
            if callee == "floordiv":
                return self._binary("//", MUL, *args)
            if callee == "ramp":
                lanes = ir.VectorType(v.type).shape[0]
                return f"T.Ramp({self.text(args[0])}, {self.text(args[1])}, {lanes})", ATOM
            if callee in ("reinterpret", "vectorlow", "vectorhigh"):  # named by their dtype
                dtype = value_dtype(v, self.buffers)
                return f'T.{callee}("{dtype}", {self.text(args[0])})', ATOM
            if callee == "q_multiply_shift_per_axis":  # its two flags: attributes
                flags = [
                    f"T.bool({ir.BoolAttr(op.attributes[k]).value})" for k in FIXED_POINT_FLAGS
                ]
                text = ", ".join([self.text(a) for a in args] + flags)
                return f"T.{callee}({text})", ATOM
            return self._call(callee, args)
        if name == "tir.extern":
            return extern_text(self, op, v)
        if name in CALLS:
            return self._call(CALLS[name], args)
        if name.startswith("math.") and name[5:] in MATH_SAME:
            return self._call(name[5:], args)
        if name == "memref.load":
            return self.load(args[0], args[1:]), ATOM
        if name == "vector.load":
            return self.load(args[0], args[1:], ir.VectorType(v.type).shape[0]), ATOM
        if name == "vector.broadcast":
            return f"T.Broadcast({self.text(args[0])}, {ir.VectorType(v.type).shape[0]})", ATOM
        if name == "arith.cmpi" or name == "arith.cmpf":
            if "tir.cast" in op.attributes:
                return f'T.Cast("bool", {self.text(args[0])})', ATOM
            pred = ir.IntegerAttr(op.attributes["predicate"]).value
            sym = (CMPI if name == "arith.cmpi" else CMPF).get(pred)
            if sym is None:
                raise TIRError(f"cannot print {name} predicate {pred}")
            return self._binary(sym, CMP, *args)
        if name in ("arith.andi", "arith.ori", "arith.xori"):
            return self._logic(name, args, v)
        if name == "arith.negf":
            return f"-{wrap(self.expr(args[0]), NEG, right=False)}", NEG
        if name in CASTS:
            return self._cast(name, args[0], v)
        if name == "scf.if":
            return self._if_then_else(op)
        if name == "arith.ceildivsi":  # T.ceildiv(n, m): TVM 0.21 holds (n + m - 1) // m
            a = wrap(self.expr(args[0]), ADD, right=False)
            b = wrap(self.expr(args[1]), ADD, right=True)
            return f"({a} + {b} - 1) // {wrap(self.expr(args[1]), MUL, right=True)}", MUL
        if name == "affine.apply":  # a size over the function's symbols
            amap = ir.AffineMapAttr(op.attributes["map"]).value
            names = [self.text(a) for a in args]
            return affine_text(
                amap.results[0], names[: amap.n_dims], names[amap.n_dims :], index_dtype(v)
            )
        raise TIRError(f"the printer does not know how to print '{name}'")

    def _constant(self, op, v):
        attr = op.attributes["value"]
        dtype = value_dtype(v, self.buffers)
        if isinstance(attr, ir.FloatAttr):
            exact = op.attributes["tir.f64"] if "tir.f64" in op.attributes else attr
            text = float_text(ir.FloatAttr(exact).value, dtype)
        else:
            value = ir.IntegerAttr(attr).value
            text = int_text(value != 0 if dtype == "bool" else value, dtype)
        return text, (NEG if text.startswith("-") else ATOM)

    def _binary(self, sym, prec, a, b):
        # A left operand of the same precedence prints without parentheses: a chain of them
        # (a sum of 10,000 terms) is walked in a loop, not by recursion, which has its depth
        # limit and, through the bindings' C calls, the C stack's.
        rights = [(sym, b)]
        while a not in self.namer and not isinstance(a, ir.BlockArgument):
            op = a.owner.operation
            if op.name not in BINARY or BINARY[op.name][1] != prec:
                break
            a, r = op.operands
            rights.append((BINARY[op.name][0], r))
        text = wrap(self.expr(a), prec, right=False)
        for s, r in reversed(rights):
            text += f" {s} {wrap(self.expr(r), prec, right=True)}"
        return text, prec

    def _call(self, fn, args):
        return f"T.{fn}({', '.join(self.text(a) for a in args)})", ATOM

    def _logic(self, name, args, v):
        if dtype_of(v.type) != "bool":
            if name == "arith.xori" and self._is_all_ones(args[1]):
                return self._call("bitwise_not", args[:1])
            fn = {
                "arith.andi": "bitwise_and",
                "arith.ori": "bitwise_or",
                "arith.xori": "bitwise_xor",
            }[name]
            return self._call(fn, args)
        if name == "arith.xori":
            other = [a for a in args if self._is_true(a)]
            if other:
                rest = args[1] if args[0] == other[0] else args[0]
                return f"not {wrap(self.expr(rest), NOT, right=False)}", NOT
            return self._binary("!=", CMP, *args)
        if any(self._is_constant(a) for a in args):
            # TVM's `and`/`or` would fold a constant operand away; it prints the call instead.
            return self._call("And" if name == "arith.andi" else "Or", args)
        sym, prec = ("and", AND) if name == "arith.andi" else ("or", OR)
        return self._binary(sym, prec, *args)

    @staticmethod
    def _is_constant(v):
        return not isinstance(v, ir.BlockArgument) and v.owner.operation.name == "arith.constant"

    @staticmethod
    def _is_all_ones(v):
        """The constant `~x` is built with (-1, or the unsigned maximum)."""
        if isinstance(v, ir.BlockArgument) or v.owner.operation.name != "arith.constant":
            return False
        value = ir.IntegerAttr(v.owner.operation.attributes["value"]).value
        return value == -1 or value == (1 << ir.IntegerType(v.type).width) - 1

    @staticmethod
    def _is_true(v):
        if isinstance(v, ir.BlockArgument):
            return False
        op = v.owner.operation
        return op.name == "arith.constant" and ir.IntegerAttr(op.attributes["value"]).value != 0

    def _cast(self, name, x, v):
        target = value_dtype(v, self.buffers)
        if "tir.implicit" in v.owner.attributes:
            return self.expr(x)  # a step of a cast the front end did in two
        if name.startswith("arith.index_cast") and (
            isinstance(v.type, ir.IndexType) or target == index_dtype(x)
        ):
            return self.expr(x)  # index <-> its own int32/int64 is no cast in TensorIR
        return f'T.Cast("{target}", {self.text(x)})', ATOM

    def _if_then_else(self, op):
        if len(op.results) != 1:
            raise TIRError("scf.if with results must yield exactly one value")
        cond = self.text(op.operands[0])
        branches = []
        for region in op.regions:
            ops = list(region.blocks[0].operations)
            branches.append(self.text(ops[-1].operands[0]))
        return f"T.if_then_else({cond}, {branches[0]}, {branches[1]})", ATOM
