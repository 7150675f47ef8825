"""TE expressions: what a `te.compute` lambda builds with Python operators.

A small immutable tree with a dtype on every node, following TVM's typing rules (a Python number
takes the dtype of the expression it meets; mixing two different dtypes is an error). Nothing
here knows MLIR: `text(names)` writes the expression as TVMScript, which create_prim_func feeds
to the TVMScript parser, so TE programs become the same `tir` dialect as everything else.
"""

from typing import Dict

from tir_mlir.dtypes import DTYPES, is_float


def _is_int(dtype):
    return dtype.startswith(("int", "uint"))


class Expr:
    dtype: str

    # arithmetic
    def __add__(self, o):
        return binary("+", self, o)

    def __radd__(self, o):
        return binary("+", o, self)

    def __sub__(self, o):
        return binary("-", self, o)

    def __rsub__(self, o):
        return binary("-", o, self)

    def __mul__(self, o):
        return binary("*", self, o)

    def __rmul__(self, o):
        return binary("*", o, self)

    def __truediv__(self, o):
        return binary("/", self, o)

    def __rtruediv__(self, o):
        return binary("/", o, self)

    def __floordiv__(self, o):
        return binary("//", self, o)

    def __rfloordiv__(self, o):
        return binary("//", o, self)

    def __mod__(self, o):
        return binary("%", self, o)

    def __rmod__(self, o):
        return binary("%", o, self)

    def __neg__(self):
        return binary("*", self, const(-1, self.dtype))

    def __lshift__(self, o):
        return binary("<<", self, o)

    def __rshift__(self, o):
        return binary(">>", self, o)

    def __and__(self, o):
        return _bitwise_or_logical("&", "and", self, o)

    def __or__(self, o):
        return _bitwise_or_logical("|", "or", self, o)

    def __xor__(self, o):
        return binary("^", self, o)

    def __invert__(self):
        return Not(self) if self.dtype == "bool" else binary("^", self, -1)

    # comparisons (`==` too: TE builds an expression, like TVM's `equal`)
    def __lt__(self, o):
        return compare("<", self, o)

    def __le__(self, o):
        return compare("<=", self, o)

    def __gt__(self, o):
        return compare(">", self, o)

    def __ge__(self, o):
        return compare(">=", self, o)

    def __eq__(self, o):
        return compare("==", self, o)

    def __ne__(self, o):
        return compare("!=", self, o)

    __hash__ = object.__hash__

    def equal(self, o):
        return compare("==", self, o)

    def astype(self, dtype):
        return self if dtype == self.dtype else Cast(check_dtype(dtype), self)

    def __bool__(self):
        raise TypeError(
            "a TE expression has no truth value: use te.all/te.any, & or |, "
            "or te.if_then_else instead of `and`/`or`/`if`"
        )

    def text(self, names: Dict) -> str:
        raise NotImplementedError


def check_dtype(dtype):
    if dtype not in DTYPES:
        raise TypeError(f"unknown dtype {dtype!r}")
    return dtype


class Const(Expr):
    def __init__(self, value, dtype):
        self.value, self.dtype = value, dtype

    def text(self, names):
        if self.dtype == "bool":
            return "True" if self.value else "False"
        if self.dtype == "int32":
            return str(int(self.value))
        if is_float(self.dtype):
            return f"T.{self.dtype}({float(self.value)!r})"
        return f"T.{self.dtype}({int(self.value)})"


def const(value, dtype=None) -> Expr:
    """`te.const(0, "float32")`; a Python int is int32 and a float float32 by default."""
    if isinstance(value, Expr):
        return value
    if dtype is None:
        dtype = (
            "bool"
            if isinstance(value, bool)
            else ("int32" if isinstance(value, int) else "float32")
        )
    check_dtype(dtype)
    if not isinstance(value, (bool, int, float)):
        raise TypeError(f"te.const expects a number, got {type(value).__name__}")
    return Const(float(value) if is_float(dtype) else int(value), dtype)


class Var(Expr):
    """A loop/axis variable, a thread index or a scalar parameter (`te.var`)."""

    def __init__(self, name, dtype="int32"):
        self.name, self.dtype = name, check_dtype(dtype)

    def text(self, names):
        if self not in names:
            raise ValueError(
                f"variable {self.name!r} is neither an axis of this compute nor a "
                "te.var of the arguments or of a shape"
            )
        return names[self]

    def __repr__(self):
        return self.name


class Binary(Expr):
    def __init__(self, op, a, b, dtype):
        self.op, self.a, self.b, self.dtype = op, a, b, dtype

    def text(self, names):
        a, b = self.a.text(names), self.b.text(names)
        if self.op == "/" and _is_int(self.dtype):
            return f"T.truncdiv({a}, {b})"
        return f"({a} {self.op} {b})"


class Not(Expr):
    def __init__(self, a):
        self.a, self.dtype = a, "bool"

    def text(self, names):
        return f"(not {self.a.text(names)})"


class Cast(Expr):
    def __init__(self, dtype, a):
        self.a, self.dtype = a, dtype

    def text(self, names):
        return f'T.Cast("{self.dtype}", {self.a.text(names)})'


class Call(Expr):
    """`T.<name>(args)`: math functions, if_then_else, Select, min/max."""

    def __init__(self, name, args, dtype):
        self.name, self.args, self.dtype = name, list(args), dtype

    def text(self, names):
        return f"T.{self.name}({', '.join(a.text(names) for a in self.args)})"


def match_dtypes(a, b):
    """Both operands as Exprs of one dtype, a Python number combined as TVM 0.21 does."""
    if not isinstance(a, Expr) and not isinstance(b, Expr):
        a = const(a)
    if not isinstance(a, Expr):
        b, a = _with_number(b, a)
    if not isinstance(b, Expr):
        a, b = _with_number(a, b)
    if a.dtype != b.dtype:
        if _is_int(a.dtype) and _is_int(b.dtype):  # int32 + int64 -> int64, like TVM
            wide = a.dtype if int(a.dtype[3:] or 0) >= int(b.dtype[3:] or 0) else b.dtype
            return a.astype(wide), b.astype(wide)
        raise TypeError(
            f"operands of different dtypes: {a.dtype} and {b.dtype} (use .astype(dtype))"
        )
    return a, b


def _with_number(e, x):
    """(e, x as a constant), as TVM 0.21 combines an expression with a Python number: an int
    is an int32 constant, so bool and narrower integers are cast to int32 (wider types and
    floats keep theirs); a float is a float32 constant, so all but float32/float64 are cast
    to float32."""
    if type(x) is bool:
        return e, const(x, e.dtype)
    if type(x) not in (int, float):
        raise TypeError(f"cannot use a {type(x).__name__} in a TE expression")
    d = e.dtype
    if type(x) is float:
        target = d if d in ("float32", "float64") else "float32"
    else:
        narrow = d == "bool" or _is_int(d) and int(d.lstrip("uint") or 32) < 32
        target = "int32" if narrow else d
    return (e if target == d else e.astype(target)), const(x, target)


def binary(op, a, b) -> Expr:
    a, b = match_dtypes(a, b)
    if op in ("<<", ">>", "&", "|", "^", "//", "%") and is_float(a.dtype):
        if op in ("//", "%"):
            return Call("floordiv" if op == "//" else "floormod", [a, b], a.dtype)
        raise TypeError(f"operator {op} needs integer operands, got {a.dtype}")
    return Binary(op, a, b, a.dtype)


def compare(op, a, b) -> Expr:
    a, b = match_dtypes(a, b)
    # TVM's create_prim_func prints `x >= c` as `c <= x`: keep its canonical direction
    if op in (">", ">="):
        return Binary("<" if op == ">" else "<=", b, a, "bool")
    return Binary(op, a, b, "bool")


def _bitwise_or_logical(bit_op, bool_op, a, b) -> Expr:
    return logical(bool_op, a, b) if a.dtype == "bool" else binary(bit_op, a, b)


def logical(op, a, b) -> Expr:
    a, b = (
        const(a, "bool") if isinstance(a, bool) else a,
        const(b, "bool") if isinstance(b, bool) else b,
    )
    if a.dtype != "bool" or b.dtype != "bool":
        raise TypeError(f"`{op}` needs boolean operands")
    return Binary(op, a, b, "bool")


def as_expr(x) -> Expr:
    return x if isinstance(x, Expr) else const(x)
