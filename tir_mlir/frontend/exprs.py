"""Expressions -> arith/math/memref ops (docs/design.md, "Expressions").

Evaluation is iterative (an explicit post-order stack), so a 5000-term sum builds without
Python recursion. Literals stay `Lit` until an operation gives them a type; two literals fold
in Python. Only the lazy forms (`T.if_then_else`, `T.let`) recurse, and their nesting is bounded.
"""

import difflib
import math
from typing import NoReturn, Tuple

from mlir import ir

from tir_mlir.dialect.ops import INDEX_DTYPE, index_dtype_attr
from tir_mlir.dtypes import (
    DTYPES,
    FLOAT_MAX,
    is_dtype,
    is_float,
    is_unsigned,
    mlir_type,
    split_lanes,
)
from tir_mlir.errors import SourceLoc, TIRParseError
from tir_mlir.frontend import ast as A
from tir_mlir.frontend import intrinsics as I
from tir_mlir.frontend.extern_calls import POINTER, BufferStrides, ExternCalls
from tir_mlir.frontend.fixed_point import FixedPointExprs
from tir_mlir.frontend.vectors import Lanes, VectorExprs
from tir_mlir.frontend.values import Buffer, Handle, Lit, Val
from tir_mlir.ir.index_dtypes import index_dtype, wider

MAX_LAZY_NESTING = 64

CMPI = {"==": 0, "!=": 1, "<": 2, "<=": 3, ">": 4, ">=": 5}
CMPI_UNSIGNED = {"<": 6, "<=": 7, ">": 8, ">=": 9}
CMPF = {"==": 1, ">": 2, ">=": 3, "<": 4, "<=": 5, "!=": 13}
INT_OPS = {
    "+": "arith.addi",
    "-": "arith.subi",
    "*": "arith.muli",
    "/": "arith.divsi",
    "//": "arith.floordivsi",
    "&": "arith.andi",
    "|": "arith.ori",
    "^": "arith.xori",
    "<<": "arith.shli",
    ">>": "arith.shrsi",
}
UINT_OPS = {"/": "arith.divui", "//": "arith.divui", ">>": "arith.shrui"}
FLOAT_OPS = {
    "+": "arith.addf",
    "-": "arith.subf",
    "*": "arith.mulf",
    "/": "arith.divf",
    "**": "math.powf",
}
INT_BITS = {"bool": 1, "index": 64}
INDEX_LIT_DTYPES = (None, "int32", "int64")  # literals that may become index constants


def bits(dtype: str) -> int:
    """Bits of a dtype's element (`int8x4`: 8)."""
    dtype = split_lanes(dtype)[0]
    if dtype in INT_BITS:
        return INT_BITS[dtype]
    return int("".join(c for c in dtype if c.isdigit()))


def is_int(dtype: str) -> bool:
    return dtype == "index" or dtype.startswith(("int", "uint"))


def mtype(dtype: str) -> ir.Type:
    if dtype == POINTER:
        return ir.Type.parse("!llvm.ptr")
    return ir.IndexType.get() if dtype == "index" else mlir_type(dtype)


def check_dtype(name, pos, fail):
    """A dtype name, given as a string or as the value of `T.float32` (("dtype", name))."""
    if isinstance(name, tuple):
        name = name[1]
    if not is_dtype(name):
        near = difflib.get_close_matches(str(name), DTYPES, 1)
        hint = (
            f" (did you mean {near[0]!r}?)" if near else f" (expected one of {', '.join(DTYPES)})"
        )
        fail(f"unknown dtype {name!r}{hint}", pos)
    return name


def fits(value: int, dtype: str) -> bool:
    if dtype == "bool":
        return value in (0, 1)
    b = bits(dtype)
    if is_unsigned(dtype):
        return 0 <= value < (1 << b)
    return -(1 << (b - 1)) <= value < (1 << (b - 1))


class Fail:
    """Mixin for the builders of one file (`self.filename`): source positions (line, col) as
    MLIR locations and as TIRParseErrors."""

    filename: str

    def fail(self, message, pos, notes=()) -> NoReturn:
        """Raise at `pos`; `notes` are (message, pos) pairs for related locations."""
        raise TIRParseError(
            message, self.source_loc(pos), [(m, self.source_loc(p)) for m, p in notes]
        )

    def source_loc(self, pos):
        return SourceLoc(self.filename, pos[0], pos[1]) if pos else None

    def loc(self, pos):
        return ir.Location.file(self.filename, pos[0], pos[1])


class ExprBuilder(Fail, ExternCalls, VectorExprs, FixedPointExprs):
    """Builds expression ops at the current insertion point. `env` resolves names."""

    def __init__(self, filename, env):
        self.filename = filename
        self.env = env
        self.lazy_depth = 0
        self.subscript_slices = set()  # ids of Slice nodes that are subscript indices

    # --- helpers ------------------------------------------------------------------------------
    def op(self, name, operands, dtype, pos, attrs=None):
        """One op with one result of `dtype` (None: no result)."""
        attributes = dict(attrs or {})
        if dtype and is_unsigned(dtype):
            attributes["tir.dtype"] = ir.StringAttr.get(dtype)
        o = ir.Operation.create(
            name,
            results=[mtype(dtype)] if dtype else [],
            operands=list(operands),
            attributes=attributes,
            loc=self.loc(pos),
        )
        return o.result if dtype else o

    def call_op(self, callee, operands, dtype, pos):
        return self.op("tir.call", operands, dtype, pos, {"callee": ir.StringAttr.get(callee)})

    def constant(self, value, dtype, pos, idx="int32") -> ir.Value:
        """An arith.constant; an index one remembers its TensorIR dtype `idx` when int64; a
        vector dtype's is the scalar broadcast (`T.Broadcast(T.int8(1), 4)`, as TVM prints)."""
        base, _ = split_lanes(dtype)
        if base != dtype:
            return self.splat(self.constant(value, base, pos), dtype, pos)
        t = mtype(dtype)
        extra = {}
        if dtype == "index" and idx != "int32":
            extra[INDEX_DTYPE] = index_dtype_attr(idx)
        if is_float(dtype):
            if math.isfinite(float(value)) and abs(float(value)) > FLOAT_MAX[dtype]:
                self.fail(
                    f"literal {value} does not fit in {dtype} (largest: "
                    f'{FLOAT_MAX[dtype]:g}); write T.{dtype}("inf") for infinity',
                    pos,
                )
            attr = ir.FloatAttr.get(t, float(value))
            if math.isfinite(value) and attr.value != float(value):
                # TVM keeps the literal's double; remember it so the printer can too.
                extra["tir.f64"] = ir.FloatAttr.get(ir.F64Type.get(), float(value))
        else:
            if isinstance(value, float):
                if not math.isfinite(value):
                    self.fail(f"cannot convert {value} to {dtype}", pos)
                value = int(value)
            value = int(value)
            if not fits(value, "int64" if dtype == "index" else dtype):
                self.fail(f"literal {value} does not fit in {dtype}", pos)
            if is_unsigned(dtype) and value >= (1 << (bits(dtype) - 1)):
                value -= 1 << bits(dtype)  # same bits, signless storage
            attr = ir.IntegerAttr.get(t, value)
        return self.op("arith.constant", [], dtype, pos, {"value": attr, **extra})

    def lit_dtype(self, lit: Lit) -> str:
        if lit.dtype:
            return lit.dtype
        if isinstance(lit.value, bool):
            return "bool"
        return "float32" if isinstance(lit.value, float) else "int32"

    def materialize(self, x, pos, dtype=None, idx="int32") -> Val:
        """A Val for x; a Lit gets `dtype` (or its own / default type). An integer literal
        made an index gets the TensorIR dtype `idx` (or its own T.int64, the wider)."""
        if isinstance(x, Val):
            return x if dtype is None else Val(self.convert(x.value, x.dtype, dtype, pos), dtype)
        if isinstance(x, Lit):
            own = self.lit_dtype(x)
            if dtype == "index" and _int_lit(x):
                return Val(
                    self.constant(x.value, "index", pos, wider(idx, x.dtype or idx)), "index"
                )
            if x.dtype and dtype and dtype != own:
                return Val(self.convert(self.constant(x.value, own, pos), own, dtype, pos), dtype)
            d = dtype or own
            if not is_float(d) and isinstance(x.value, float) and not x.dtype:
                self.fail(f"float literal {x.value} used where {d} is expected", pos)
            return Val(self.constant(x.value, d, pos), d)
        self.fail(f"expected a value, found {describe(x)}", pos)

    def convert(self, v: ir.Value, src: str, dst: str, pos) -> ir.Value:
        """Cast between dtypes (and index), as T.Cast does; a scalar to a vector dtype is
        broadcast, vectors convert lane by lane."""
        if src == dst:
            return v
        (sbase, slanes), (dbase, dlanes) = split_lanes(src), split_lanes(dst)
        if dbase != dst and sbase == src:
            return self.splat(self.convert(v, src, dbase, pos), dst, pos)
        if (sbase != src) != (dbase != dst) or slanes != dlanes:
            self.fail(f"cannot cast {src} to {dst} (lanes differ)", pos)
        op = self.op
        if src == "index":
            if is_int(dst) and dst != "bool":
                return op("arith.index_cast", [v], dst, pos)
            via = index_dtype(v)  # T.Cast("float32", i) of an int64 i goes through i64
            return self.convert(op("arith.index_cast", [v], via, pos), via, dst, pos)
        if dst == "index":
            if src == "bool" or is_float(src):
                return op("arith.index_cast", [self.convert(v, src, "int64", pos)], "index", pos)
            name = "arith.index_castui" if is_unsigned(src) else "arith.index_cast"
            return op(name, [v], "index", pos)
        if dst == "bool":
            # `x != 0`, marked so that it prints back as the cast it is in TVM.
            zero = self.constant(0, src, pos)
            cast = ir.UnitAttr.get()
            if is_float(src):
                return op(
                    "arith.cmpf",
                    [v, zero],
                    "bool",
                    pos,
                    {"predicate": _i64(CMPF["!="]), "tir.cast": cast},
                )
            return op(
                "arith.cmpi",
                [v, zero],
                "bool",
                pos,
                {"predicate": _i64(CMPI["!="]), "tir.cast": cast},
            )
        sb, db = bits(src), bits(dst)
        if is_float(src) and is_float(dst):
            if sb == db:  # float16 <-> bfloat16, through float32 (one Cast in TVM)
                wide = self.convert(v, src, "float32", pos)
                wide.owner.attributes["tir.implicit"] = ir.UnitAttr.get()
                return self.convert(wide, "float32", dst, pos)
            return op("arith.extf" if db > sb else "arith.truncf", [v], dst, pos)
        if is_float(dst):
            unsigned = is_unsigned(src) or src == "bool"
            return op("arith.uitofp" if unsigned else "arith.sitofp", [v], dst, pos)
        if is_float(src):
            return op("arith.fptoui" if is_unsigned(dst) else "arith.fptosi", [v], dst, pos)
        if sb == db:
            return v
        if db > sb:
            unsigned = is_unsigned(src) or src == "bool"
            return op("arith.extui" if unsigned else "arith.extsi", [v], dst, pos)
        return op("arith.trunci", [v], dst, pos)

    def promote(self, da: str, db: str, pos) -> str:
        """The common dtype of two operands (TVM's BinaryOpMatchTypes, simplified)."""
        if da == db:
            return da
        (ba, la), (bb, lb) = split_lanes(da), split_lanes(db)
        if ba != da or bb != db:  # a vector and a scalar (broadcast) of one element type
            if la != lb and ba != da and bb != db or ba != bb:
                self.fail(f"type mismatch: {da} and {db} (cast one with T.Cast)", pos)
            return da if ba != da else db
        if da == "bool" or db == "bool":
            return db if da == "bool" else da
        if is_float(da) or is_float(db):
            if is_float(da) and is_float(db):
                if bits(da) == bits(db):
                    return "float32"
                return da if bits(da) > bits(db) else db
            return da if is_float(da) else db
        if da == "index" or db == "index":
            return db if da == "index" else da
        if is_unsigned(da) != is_unsigned(db):
            self.fail(f"type mismatch: {da} and {db} (cast one with T.Cast)", pos)
        return da if bits(da) > bits(db) else db

    def unify(self, a, b, pos):
        """Two operands as Vals of one dtype."""
        if isinstance(a, Lit) and isinstance(b, Lit):
            d = self.promote(self.lit_dtype(a), self.lit_dtype(b), pos)
            return self.materialize(a, pos, d), self.materialize(b, pos, d), d
        for lit, other in ((a, b), (b, a)):
            if _int_lit(lit) and isinstance(other, Val) and other.dtype == "index":
                # `v_i * 4` / `v_i - T.int64(1)`: an index constant of the loop var's dtype
                c = self.materialize(lit, pos, "index", index_dtype(other.value))
                return (c, other, "index") if lit is a else (other, c, "index")
        if isinstance(a, Lit) and not a.dtype:
            d = self._lit_partner(a, b, pos)
            return self.materialize(a, pos, d), self.materialize(b, pos, d), d
        if isinstance(b, Lit) and not b.dtype:
            d = self._lit_partner(b, a, pos)
            return self.materialize(a, pos, d), self.materialize(b, pos, d), d
        a, b = self.materialize(a, pos), self.materialize(b, pos)
        d = self.promote(a.dtype, b.dtype, pos)
        if (
            d != "index"
            and is_int(d)
            and not is_unsigned(d)
            and bits(d) < 64
            and any(x.dtype == "index" and index_dtype(x.value) == "int64" for x in (a, b))
        ):
            d = "int64"  # an int64 loop var widens int32 data, as in TVM
        return self.materialize(a, pos, d), self.materialize(b, pos, d), d

    def _lit_partner(self, lit, other, pos):
        other = self.materialize(other, pos)
        if isinstance(lit.value, float) and not is_float(other.dtype):
            return "float32"
        if isinstance(lit.value, bool) or other.dtype != "bool":
            return other.dtype
        return "int32"

    # --- evaluation ---------------------------------------------------------------------------
    def eval(self, root):
        """Value of an expression: Val, Lit, Buffer, str, None, or a list (tuple/list)."""
        out = []
        stack: list = [(root, None)]  # (node, its number of children once they are queued)
        while stack:
            node, n = stack.pop()
            if n is None:
                kids = self._children(node)
                if kids is None:
                    out.append(self._leaf(node))
                    continue
                stack.append((node, len(kids)))
                stack.extend((k, None) for k in reversed(kids))
                continue
            args = out[len(out) - n :] if n else []
            del out[len(out) - n :]
            out.append(self._combine(node, args))
        return out[0]

    def _children(self, node):
        """Sub-expressions evaluated before `node`; None for leaves and lazy forms."""
        if isinstance(node, A.BinOp):
            return [node.lhs, node.rhs]
        if isinstance(node, A.UnaryOp):
            return [node.operand]
        if isinstance(node, A.Compare):
            return node.operands
        if isinstance(node, (A.Tuple_, A.List_)):
            return node.items
        if isinstance(node, A.Subscript):
            self.subscript_slices.update(id(i) for i in node.indices if isinstance(i, A.Slice))
            return [node.value] + node.indices
        if isinstance(node, A.Slice) and id(node) in self.subscript_slices:
            return [node.lo] if node.lo is not None else []
        if isinstance(node, A.Call):
            if I.callee(node) in ("if_then_else", "let", "address_of"):
                return None
            return node.args + [v for _, v, _ in node.kwargs]
        return None

    def _leaf(self, node):
        if isinstance(node, A.Const):
            v = node.value
            if isinstance(v, (bool, int, float)):
                return Lit(v)
            return v
        if isinstance(node, A.Name):
            v = self.env.get(node.id)
            if v is None:
                near = difflib.get_close_matches(node.id, sorted(self.env.names()), 1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                self.fail(f"undefined variable {node.id!r}{hint}", node.pos)
            return v
        if isinstance(node, A.Call):
            return self._lazy_call(node)
        if isinstance(node, A.Attr):
            buf = self._buffer_named(node.value)
            if buf is not None:
                return self.buffer_attr(buf, node.attr, node.pos)
            dotted = node.dotted()
            name = I.strip_prefix(dotted) if dotted else None
            if name is not None and is_dtype(name):
                return ("dtype", name)
            self.fail(f"{dotted or 'attribute access'} is not a value here", node.pos)
        if isinstance(node, A.Slice):
            self.fail(
                "a slice is only allowed in T.reads / T.writes regions and as the last "
                "index of a vector access (A[i * 4:i * 4 + 4])",
                node.pos,
            )
        if isinstance(node, A.Dict_):
            self.fail("a dictionary is not a value here", node.pos)
        self.fail(f"unsupported expression {type(node).__name__}", getattr(node, "pos", None))

    def _combine(self, node, args):
        if isinstance(node, A.BinOp):
            return self.binop(node.op, args[0], args[1], node.pos)
        if isinstance(node, A.UnaryOp):
            return self.unary(node.op, args[0], node.pos)
        if isinstance(node, A.Compare):
            result = None
            for i, cmp in enumerate(node.ops):
                c = self.compare(cmp, args[i], args[i + 1], node.pos)
                result = c if result is None else self.binop("and", result, c, node.pos)
            return result
        if isinstance(node, (A.Tuple_, A.List_)):
            return list(args)
        if isinstance(node, A.Subscript):
            return self.load(args[0], args[1:], node)
        if isinstance(node, A.Slice):
            return self.slice_lanes(node, args[0] if args else Lit(0))
        if isinstance(node, A.Call):
            n = len(node.args)
            kwargs = {k: (v, p) for (k, _, p), v in zip(node.kwargs, args[n:])}
            return self.call(node, args[:n], kwargs)
        raise AssertionError(node)

    # --- operators ----------------------------------------------------------------------------
    def binop(self, op, a, b, pos):
        for x in (a, b):
            if not isinstance(x, (Val, Lit)):
                self.fail(f"operator {op!r} needs numbers, found {describe(x)}", pos)
        if op in ("and", "or"):
            return self.logic(op, [a, b], pos)
        if op in ("/", "//", "%"):
            self.check_divisor(b, pos)
        if isinstance(a, Lit) and isinstance(b, Lit) and not a.dtype and not b.dtype:
            return fold(op, a.value, b.value, pos, self.fail)
        if (
            _int_lit(a)
            and _int_lit(b)
            and "int64" in (a.dtype, b.dtype)
            and op in ("+", "-", "*", "//", "%")
        ):
            # T.int64(2) * 3 folds to T.int64(6), like TVM's constant folding (shapes use it)
            r = fold(op, a.value, b.value, pos, self.fail)
            return (
                Lit(r.value, "int64")
                if fits(r.value, "int64")
                else self.fail(f"literal {r.value} does not fit in int64", pos)
            )
        if op == "**":
            self.fail(
                "operator '**' applies to Python numbers only; use T.pow(x, y) (as in TVM)", pos
            )
        va, vb, d = self.unify(a, b, pos)
        if op == "/" and not is_float(d):
            self.fail(
                "'/' on integers is ambiguous: use T.floordiv/T.floormod (// and %) or "
                "T.truncdiv/T.truncmod (as in TVM)",
                pos,
            )
        if is_float(d) and op in ("//", "%"):
            self.fail(
                f"'{op}' (floor division / modulo) needs integers, found {d} (as in TVM)", pos
            )
        if is_float(d):
            if op not in FLOAT_OPS:
                self.fail(f"operator {op!r} is not defined for {d}", pos)
            return Val(self.op(FLOAT_OPS[op], [va.value, vb.value], d, pos), d)
        if op == "%":
            return Val(self.call_op("floormod", [va.value, vb.value], d, pos), d)
        if op == "**":
            self.fail(f"operator '**' needs float operands, found {d}", pos)
        name = (UINT_OPS.get(op) if is_unsigned(d) else None) or INT_OPS[op]
        return Val(self.op(name, [va.value, vb.value], d, pos), d)

    def check_divisor(self, b, pos):
        """An integer constant divisor of 0 is an error, as in TVM (a float 0.0 gives inf)."""
        if (
            isinstance(b, Lit)
            and not isinstance(b.value, float)
            and b.value == 0
            and not (b.dtype and is_float(b.dtype))
        ):
            self.fail("division by zero", pos)

    def unary(self, op, x, pos):
        if op == "not":
            return self.logic("not", [x], pos)
        if not isinstance(x, (Val, Lit)):
            self.fail(f"operator {op!r} needs a number, found {describe(x)}", pos)
        if isinstance(x, Lit) and not x.dtype:
            if op == "~" and isinstance(x.value, float):
                self.fail("operator '~' needs an integer", pos)
            return Lit({"-": lambda v: -v, "+": lambda v: v, "~": lambda v: ~v}[op](x.value))
        if op == "+":
            self.fail(
                "unary + applies to Python numbers only, not to TensorIR expressions (as in TVM)",
                pos,
            )
        if op == "-" and _int_lit(x) and x.dtype == "int64":
            return Lit(-x.value, "int64")
        v = self.materialize(x, pos)
        if op == "~" and v.dtype == "bool":  # the bitwise not of one bit, as in TVM/numpy
            return self.logic("not", [v], pos)
        if op == "~":
            if not is_int(v.dtype):
                self.fail(f"operator '~' needs an integer, found {v.dtype}", pos)
            ones = self.constant(
                -1 if not is_unsigned(v.dtype) else (1 << bits(v.dtype)) - 1, v.dtype, pos
            )
            return Val(self.op("arith.xori", [v.value, ones], v.dtype, pos), v.dtype)
        if is_float(v.dtype):
            return Val(self.op("arith.negf", [v.value], v.dtype, pos), v.dtype)
        zero = self.constant(0, v.dtype, pos)
        return Val(self.op("arith.subi", [zero, v.value], v.dtype, pos), v.dtype)

    def compare(self, op, a, b, pos):
        for x in (a, b):
            if not isinstance(x, (Val, Lit)):
                self.fail(f"operator {op!r} needs numbers, found {describe(x)}", pos)
        if isinstance(a, Lit) and isinstance(b, Lit) and not a.dtype and not b.dtype:
            return Lit(fold(op, a.value, b.value, pos, self.fail))
        va, vb, d = self.unify(a, b, pos)
        if is_float(d):
            return Val(
                self.op(
                    "arith.cmpf", [va.value, vb.value], "bool", pos, {"predicate": _i64(CMPF[op])}
                ),
                "bool",
            )
        pred = CMPI_UNSIGNED.get(op, CMPI[op]) if is_unsigned(d) else CMPI[op]
        return Val(
            self.op("arith.cmpi", [va.value, vb.value], "bool", pos, {"predicate": _i64(pred)}),
            "bool",
        )

    def logic(self, op, xs, pos):
        for x in xs:
            if not (
                isinstance(x, Lit)
                and isinstance(x.value, bool)
                or isinstance(x, Val)
                and x.dtype == "bool"
            ):
                self.fail(f"'{op}' needs bool operands, found {describe(x)}", pos)
        if all(isinstance(x, Lit) for x in xs):
            vals = [x.value for x in xs]
            return Lit({"and": all, "or": any}[op](vals) if op != "not" else not vals[0])
        vs = [self.materialize(x, pos, "bool").value for x in xs]
        if op == "not":
            true = self.constant(1, "bool", pos)
            return Val(self.op("arith.xori", [vs[0], true], "bool", pos), "bool")
        return Val(self.op("arith.andi" if op == "and" else "arith.ori", vs, "bool", pos), "bool")

    # --- buffers ------------------------------------------------------------------------------
    def load(self, buf, indices, node):
        if isinstance(buf, BufferStrides):
            return self.stride(buf, indices, node.pos)
        if not isinstance(buf, Buffer):
            self.fail(f"only buffers can be indexed, found {describe(buf)}", node.pos)
        idx, lanes = self.access(buf, indices, node)
        if lanes:
            d = f"{buf.dtype}x{lanes}"
            return Val(self.op("vector.load", [buf.value] + idx, d, node.pos), d)
        return Val(self.op("memref.load", [buf.value] + idx, buf.dtype, node.pos), buf.dtype)

    def access(self, buf, indices, node):
        """(index values, lanes) of A[i, j] (lanes: 0, or n for a vector access whose last
        index is `b:b + n` or `T.Ramp(b, 1, n)`)."""
        if len(indices) == 1 and isinstance(indices[0], list):
            indices = indices[0]
        indices = list(indices)
        if indices:
            indices[-1] = self.ramp_lanes(indices[-1], node.pos)
        if any(isinstance(x, Lanes) for x in indices[:-1]):
            self.fail("a vector access runs along the last dimension only", node.pos)
        lanes = 0
        if indices and isinstance(indices[-1], Lanes):
            lanes = indices[-1].lanes
            indices[-1] = indices[-1].base
        return self.indices(buf, indices, node), lanes

    def indices(self, buf, indices, node):
        """Index values for A[i, j] (`A[()]` for a 0-d buffer), checked against the rank."""
        if len(indices) == 1 and isinstance(indices[0], list):
            indices = indices[0]
        if len(indices) != len(buf.shape):
            self.fail(
                f"buffer {buf.name!r} has {len(buf.shape)} dimension"
                f"{'s' if len(buf.shape) != 1 else ''} but is indexed with "
                f"{len(indices)} ind{'ices' if len(indices) != 1 else 'ex'}",
                node.pos,
                [buf.declared()],
            )
        return [self.index(x, node.pos) for x in indices]

    def index(self, x, pos) -> ir.Value:
        if isinstance(x, Lit) and not x.dtype:
            if not isinstance(x.value, int) or isinstance(x.value, bool):
                self.fail(f"an index must be an integer, found {describe(x)}", pos)
            return self.constant(x.value, "index", pos)
        if _int_lit(x):
            return self.constant(x.value, "index", pos, x.dtype or "int32")  # A[T.int64(0)]
        v = self.materialize(x, pos)
        if not is_int(v.dtype) or v.dtype == "bool":
            self.fail(f"an index must be an integer, found {v.dtype}", pos)
        return self.convert(v.value, v.dtype, "index", pos)

    # --- calls --------------------------------------------------------------------------------
    def _resolve(self, node):
        dotted = A.dotted_name(node.func)
        if dotted is None:
            self.fail("only T.* functions can be called", node.pos)
        name = I.strip_prefix(dotted)
        if name is None or not I.is_expr_intrinsic(name):
            if name == "meta_var":  # expanded before building (script/meta_var.py)
                self.fail(
                    "T.meta_var works in TVMScript in Python files (tir_mlir.script), "
                    "as `x = T.meta_var(value)` statements",
                    node.pos,
                )
            if name in I.STATEMENT_CALLS:
                self.fail(f"{dotted} cannot be used inside an expression", node.pos)
            near = difflib.get_close_matches(name or dotted, sorted(I.all_names()), 1)
            hint = f" (did you mean T.{near[0]}?)" if near else ""
            self.fail(f"unknown function {dotted!r}{hint}", node.pos)
        return name

    def _buffer_named(self, node):
        v = self.env.get(node.id) if isinstance(node, A.Name) else None
        return v if isinstance(v, Buffer) else None

    def call(self, node, args, kwargs):
        pos = node.pos
        if isinstance(node.func, A.Attr) and node.func.attr == "access_ptr":
            buf = self._buffer_named(node.func.value)
            if buf is not None:
                return self.buffer_access_ptr(buf, args, kwargs, pos)
        name = self._resolve(node)
        if is_dtype(name):
            return self._call_dtype(name, args, kwargs, pos)
        for table, kind in (
            (I.MATH_UNARY, "unary"),
            (I.MATH_BINARY, "binary"),
            (I.MATH_PREDICATE, "predicate"),
        ):
            if name in table:
                return self._call_math(table[name], kind, name, args, kwargs, pos)
        if name in I.CALL_UNARY or name in I.CALL_BINARY:
            n = 1 if name in I.CALL_UNARY else 2
            return self._call_math(None, "unary" if n == 1 else "binary", name, args, kwargs, pos)
        return getattr(self, "_call_" + I.EXPR_CALLS[name])(name, args, kwargs, pos)

    def _arity(self, name, args, n, pos, kwargs=None, allowed=()):
        if len(args) != n:
            self.fail(f"T.{name} takes {n} argument{'s' if n != 1 else ''}, got {len(args)}", pos)
        for k, (_, kpos) in (kwargs or {}).items():
            if k not in allowed:
                self.fail(f"T.{name} got an unexpected keyword argument {k!r}", kpos)

    def dtype_arg(self, x, pos) -> str:
        """A dtype given as an argument (`"int32x4"`, `T.int32`)."""
        return check_dtype(x, pos, self.fail)

    def _dtype_kw(self, kwargs):
        if "dtype" in kwargs:
            v, p = kwargs["dtype"]
            return check_dtype(v, p, self.fail)
        return None

    def _call_dtype(self, name, args, kwargs, pos):
        self._arity(name, args, 1, pos, kwargs)
        x = args[0]
        if isinstance(x, Lit) and isinstance(x.value, str) or isinstance(x, str):
            text = (x.value if isinstance(x, Lit) else x).strip().lower()
            if not is_float(name) or text.lstrip("+-") not in ("inf", "nan"):
                self.fail(f'T.{name} of a string takes "inf", "-inf" or "nan"', pos)
            return Lit(float(text), name)
        if isinstance(x, Lit):
            v = x.value
            if not is_float(name) and not x.dtype:
                if isinstance(v, float):
                    v = (
                        int(v)
                        if math.isfinite(v)
                        else self.fail(f"cannot convert {v} to {name}", pos)
                    )
                if not fits(int(v), name):
                    self.fail(f"literal {v} does not fit in {name}", pos)
                v = bool(v) if name == "bool" else int(v)
            return (
                Lit(float(v) if is_float(name) else v, name)
                if not x.dtype
                else self.materialize(x, pos, name)
            )
        return self.materialize(x, pos, name)

    def _call_cast(self, name, args, kwargs, pos):
        self._arity(name, args, 2, pos, kwargs)
        return self._call_dtype(check_dtype(args[0], pos, self.fail), args[1:], {}, pos)

    def _float_arg(self, name, x, pos):
        v = self.materialize(x, pos, "float32" if isinstance(x, Lit) and not x.dtype else None)
        if not is_float(v.dtype):
            self.fail(f"T.{name} needs a float argument, found {v.dtype}", pos)
        return v

    def _call_math(self, opname, kind, name, args, kwargs, pos):
        n = 1 if kind in ("unary", "predicate") else 2
        self._arity(name, args, n, pos, kwargs, ("dtype",))
        if n == 1:
            v = self._float_arg(name, args[0], pos)
            vals, d = [v.value], v.dtype
        else:
            for x in args:
                if not isinstance(x, (Val, Lit)):
                    self.fail(f"T.{name} needs numbers, found {describe(x)}", pos)
            if all(isinstance(x, Lit) and not x.dtype for x in args):
                args = [Lit(float(args[0].value), "float32"), args[1]]
            va, vb, d = self.unify(*args, pos)
            if not is_float(d):
                self.fail(f"T.{name} needs float arguments, found {d}", pos)
            vals = [va.value, vb.value]
        if kind == "predicate":
            return Val(self.op(opname, vals, "bool", pos), "bool")
        if opname is None:
            return Val(self.call_op(name, vals, d, pos), d)
        return Val(self.op(opname, vals, d, pos), d)

    def _call_abs(self, name, args, kwargs, pos):
        self._arity(name, args, 1, pos, kwargs)
        x = args[0]
        if isinstance(x, Lit) and not x.dtype:
            return Lit(abs(x.value))
        v = self.materialize(x, pos)
        if is_float(v.dtype):
            return Val(self.op("math.absf", [v.value], v.dtype, pos), v.dtype)
        if is_unsigned(v.dtype) or v.dtype == "bool":
            return v
        return Val(self.op("math.absi", [v.value], v.dtype, pos), v.dtype)

    def _call_minmax(self, name, args, kwargs, pos):
        self._arity(name, args, 2, pos, kwargs)
        a, b = args
        if isinstance(a, Lit) and isinstance(b, Lit) and not a.dtype and not b.dtype:
            return Lit((max if name == "max" else min)(a.value, b.value))
        va, vb, d = self.unify(a, b, pos)
        if is_float(d):
            opname = "arith.maximumf" if name == "max" else "arith.minimumf"
        else:
            opname = f"arith.{name}{'ui' if is_unsigned(d) or d == 'bool' else 'si'}"
        return Val(self.op(opname, [va.value, vb.value], d, pos), d)

    def _call_divmod(self, name, args, kwargs, pos):
        self._arity(name, args, 2, pos, kwargs)
        a, b = args
        if name == "Div":  # TVM's Div node: `/` on floats, truncdiv on integers
            if any(
                isinstance(x, Val)
                and is_float(x.dtype)
                or isinstance(x, Lit)
                and (is_float(x.dtype) if x.dtype else isinstance(x.value, float))
                for x in args
            ):
                return self.binop("/", a, b, pos)
        name = {
            "Div": "truncdiv",
            "Mod": "truncmod",
            "FloorDiv": "floordiv",
            "FloorMod": "floormod",
        }.get(name, name)
        if name == "floordiv":
            return self.binop("//", a, b, pos)
        if name == "floormod":
            return self.binop("%", a, b, pos)
        self.check_divisor(b, pos)
        if isinstance(a, Lit) and isinstance(b, Lit) and not a.dtype and not b.dtype:
            if not isinstance(a.value, int) or not isinstance(b.value, int) or b.value == 0:
                self.fail(f"T.{name} needs integers and a non-zero divisor", pos)
            q = abs(a.value) // abs(b.value) * (1 if (a.value >= 0) == (b.value >= 0) else -1)
            if name == "truncdiv":
                return Lit(q)
            if name == "truncmod":
                return Lit(a.value - q * b.value)
            return Lit(-(-a.value // b.value))
        va, vb, d = self.unify(a, b, pos)
        if not is_int(d):
            self.fail(f"T.{name} needs integer arguments, found {d}", pos)
        u = is_unsigned(d)
        opname = {
            "truncdiv": "arith.divui" if u else "arith.divsi",
            "truncmod": "arith.remui" if u else "arith.remsi",
            "ceildiv": "arith.ceildivui" if u else "arith.ceildivsi",
        }[name]
        return Val(self.op(opname, [va.value, vb.value], d, pos), d)

    def _call_bitwise(self, name, args, kwargs, pos):
        if name == "bitwise_not":
            self._arity(name, args, 1, pos, kwargs)
            return self.unary("~", args[0], pos)
        self._arity(name, args, 2, pos, kwargs)
        op = {
            "bitwise_and": "&",
            "bitwise_or": "|",
            "bitwise_xor": "^",
            "shift_left": "<<",
            "shift_right": ">>",
        }[name]
        return self.binop(op, args[0], args[1], pos)

    def _call_logic(self, name, args, kwargs, pos):
        self._arity(name, args, 1 if name == "Not" else 2, pos, kwargs)
        return self.logic(name.lower(), args, pos)

    def _call_likely(self, name, args, kwargs, pos):
        """T.likely(cond): a branch hint; the value is its argument's (`tir.call "likely"`)."""
        self._arity(name, args, 1, pos, kwargs)
        x = self.materialize(args[0], pos)
        return Val(self.call_op("likely", [x.value], x.dtype, pos), x.dtype)

    def _call_limit(self, name, args, kwargs, pos):
        self._arity(name, args, 1, pos, kwargs)
        d = check_dtype(args[0], pos, self.fail)
        if is_float(d):
            big = FLOAT_MAX[d]
            return Lit(big if name == "max_value" else -big, d)
        if d == "bool":
            return Lit(name == "max_value", d)
        b = bits(d)
        if is_unsigned(d):
            return Lit((1 << b) - 1 if name == "max_value" else 0, d)
        return Lit((1 << (b - 1)) - 1 if name == "max_value" else -(1 << (b - 1)), d)

    def _call_select(self, name, args, kwargs, pos):
        self._arity(name, args, 3, pos, kwargs)
        c = (
            self.materialize(args[0], pos, "bool")
            if isinstance(args[0], Lit)
            else self.materialize(args[0], pos)
        )
        if c.dtype != "bool":
            self.fail(f"T.{name} needs a bool condition, found {c.dtype}", pos)
        va, vb, d = self.unify(args[1], args[2], pos)
        return Val(self.op("arith.select", [c.value, va.value, vb.value], d, pos), d)

    # --- lazy forms: their operands are built inside regions ---------------------------------
    def _lazy_call(self, node):
        name = I.callee(node) or ""  # (a lazy form is a call of a T. name)
        if self.lazy_depth >= MAX_LAZY_NESTING:
            self.fail(f"T.{name} nested too deeply (more than {MAX_LAZY_NESTING} levels)", node.pos)
        self.lazy_depth += 1
        try:
            return getattr(self, "_lazy_" + name)(node)
        finally:
            self.lazy_depth -= 1

    def _lazy_if_then_else(self, node):
        from mlir.dialects import scf

        pos = node.pos
        kwargs = {k: (v, p) for k, v, p in node.kwargs}
        self._arity("if_then_else", node.args, 3, pos, kwargs, ("dtype",))
        dtype = self._dtype_kw({k: (self.eval(v), p) for k, (v, p) in kwargs.items()})
        c = self.eval(node.args[0])
        if not (
            isinstance(c, Val)
            and c.dtype == "bool"
            or isinstance(c, Lit)
            and isinstance(c.value, bool)
        ):
            self.fail(f"T.if_then_else needs a bool condition, found {describe(c)}", pos)
        cond = self.materialize(c, pos, "bool").value
        # Branches are built in a scratch scf.if first: the result type is known only after.
        scratch = scf.IfOp(cond, [], has_else=True, loc=self.loc(pos))
        branches = []
        for block, arg in zip(_if_blocks(scratch), node.args[1:3]):
            with ir.InsertionPoint(block):
                branches.append(self.eval(arg))
        for b in branches:
            if not isinstance(b, (Val, Lit)):
                self.fail(f"T.if_then_else branches must be values, found {describe(b)}", pos)
        if dtype is None:
            typed = [b.dtype if isinstance(b, Val) else b.dtype for b in branches]
            if typed[0] and typed[1]:
                dtype = self.promote(typed[0], typed[1], pos)
            else:
                dtype = (
                    typed[0]
                    or typed[1]
                    or self.lit_dtype(
                        branches[0] if isinstance(branches[0].value, float) else branches[1]
                    )
                )
        values = []
        for block, b in zip(_if_blocks(scratch), branches):
            with ir.InsertionPoint(block):
                values.append(self.materialize(b, pos, dtype).value)
        result = scf.IfOp(cond, [mtype(dtype)], has_else=True, loc=self.loc(pos))
        for src, dst, v in zip(_if_blocks(scratch), _if_blocks(result), values):
            with ir.InsertionPoint(dst):
                yield_op = scf.YieldOp([v], loc=self.loc(pos))
            for o in list(src.operations):
                o.operation.move_before(yield_op.operation)
        scratch.operation.erase()
        if is_unsigned(dtype):
            result.operation.attributes["tir.dtype"] = ir.StringAttr.get(dtype)
        return Val(result.results[0], dtype)

    def _lazy_let(self, node):
        pos = node.pos
        self._arity("let", node.args, 3, pos, {k: (v, p) for k, v, p in node.kwargs})
        var = node.args[0]
        if not isinstance(var, A.Name):
            self.fail("T.let needs a variable name as its first argument", pos)
        value = self.materialize(self.eval(node.args[1]), pos)
        owner = value.value.owner
        if isinstance(owner, ir.Operation) or hasattr(owner, "attributes"):
            owner.attributes["tir.let_name"] = ir.StringAttr.get(var.id)
        self.env.push()
        try:
            self.env[var.id] = value
            return self.eval(node.args[2])
        finally:
            self.env.pop()


def _if_blocks(op) -> Tuple[ir.Block, ir.Block]:
    """The then and else blocks of an scf.if made with an else (the bindings type else_block
    as optional)."""
    return op.regions[0].blocks[0], op.regions[1].blocks[0]


def _int_lit(x) -> bool:
    """An integer literal that may stand for an index: 4, T.int32(4), T.int64(4)."""
    return (
        isinstance(x, Lit)
        and isinstance(x.value, int)
        and not isinstance(x.value, bool)
        and x.dtype in INDEX_LIT_DTYPES
    )


def _i64(v):
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)


def describe(x) -> str:
    if isinstance(x, Val):
        return f"a {x.dtype} value"
    if isinstance(x, Lit):
        return f"the literal {x.value!r}"
    if isinstance(x, Buffer):
        return f"buffer {x.name!r}"
    if isinstance(x, Handle):
        return f"handle {x.name!r}"
    if isinstance(x, str):
        return f"the string {x!r}"
    if isinstance(x, list):
        return "a tuple"
    if isinstance(x, tuple):
        return f"dtype {x[1]}"
    return repr(x)


def fold(op, a, b, pos, fail):
    """Python arithmetic on two literals, bounded so folding never hangs or overflows."""
    try:
        if op == "**":
            if isinstance(b, int) and isinstance(a, int) and (b > 64 or b < 0):
                fail("integer power too large to fold", pos)
            r = a**b
        elif op in ("<<", ">>"):
            if not (isinstance(a, int) and isinstance(b, int)) or not 0 <= b <= 64:
                fail(f"bad shift {a} {op} {b}", pos)
            r = a << b if op == "<<" else a >> b
        elif op in ("&", "|", "^"):
            if not (isinstance(a, int) and isinstance(b, int)):
                fail(f"operator {op!r} needs integers", pos)
            r = {"&": a & b, "|": a | b, "^": a ^ b}[op]
        else:
            r = {
                "+": lambda: a + b,
                "-": lambda: a - b,
                "*": lambda: a * b,
                "/": lambda: a / b,
                "//": lambda: a // b,
                "%": lambda: a % b,
                "<": lambda: a < b,
                "<=": lambda: a <= b,
                ">": lambda: a > b,
                ">=": lambda: a >= b,
                "==": lambda: a == b,
                "!=": lambda: a != b,
            }[op]()
    except ZeroDivisionError:
        fail("division by zero", pos)
    except (ArithmeticError, TypeError, ValueError) as e:
        fail(f"cannot fold {a!r} {op} {b!r}: {e}", pos)
    if isinstance(r, complex):
        fail(f"{a!r} {op} {b!r} is not a real number", pos)
    if isinstance(r, int) and not isinstance(r, bool) and not fits(r, "int64"):
        fail(f"literal {r} does not fit in int64", pos)
    if op in CMPI:
        return r
    return Lit(r)
