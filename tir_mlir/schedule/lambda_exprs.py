"""Evaluate a Python lambda on symbolic integers, giving affine expressions.

`transform_layout(..., lambda i, j: (i // 4, j, i % 4))` and
`set_store_predicate(..., lambda vi: vi == 0)` are called on `Sym` placeholders: arithmetic
builds `ir.AffineExpr`s over dims 0..n-1, comparisons build `Constraint`s (expr >= 0 or
expr == 0), and `&` joins constraints.
"""

import contextlib
import contextvars
import inspect
from dataclasses import dataclass
from typing import Callable, Iterator, List

from mlir import ir

from tir_mlir.ir.affine_exprs import const_of, dims_of
from tir_mlir.errors import ScheduleError
from tir_mlir.schedule.handles import ExprRV, RVExpr
from tir_mlir.schedule.safe_lambda import SafeLambda, parse_lambda


# how a sampled value (an ExprRV, or an expression of them: `j1 * j2`) in a map is read: the
# schedule applying the map sets it (`sampled_values`)
_VALUE_OF: contextvars.ContextVar = contextvars.ContextVar("value_of", default=None)


@contextlib.contextmanager
def sampled_values(value_of: Callable) -> Iterator[None]:
    """Within: maps may use the schedule's sampled values, read by `value_of(rv)`."""
    token = _VALUE_OF.set(value_of)
    try:
        yield
    finally:
        _VALUE_OF.reset(token)


class _Sizes:
    """The function's sizes a map may name (name -> its index value) and those it named, in
    order: symbol k of the maps is `used[k]`."""

    def __init__(self, named: dict):
        self.named, self.used = named, []

    def symbol(self, name: str) -> ir.AffineExpr:
        if name not in self.named:
            raise ScheduleError(
                f"the index map names {name!r}, which is no size of the function "
                f"(sizes: {', '.join(self.named) or 'none'})"
            )
        if name not in self.used:
            self.used.append(name)
        return ir.AffineExpr.get_symbol(self.used.index(name))

    def values(self) -> list:
        return [self.named[n] for n in self.used]


_SIZES: contextvars.ContextVar = contextvars.ContextVar("sizes", default=None)


@contextlib.contextmanager
def function_sizes(named: dict) -> Iterator[_Sizes]:
    """Within: a map may name the function's sizes (`n`), as a free name of its text or an
    object named so (TVM's `tir.Var` of a buffer's shape, `Size("n")`); each becomes an affine
    symbol, symbol k standing for the k-th size named (`sizes.values()[k]`)."""
    table = _Sizes(named)
    token = _SIZES.set(table)
    try:
        yield table
    finally:
        _SIZES.reset(token)


def size_names() -> List[str]:
    """The sizes the maps evaluated so far named, by symbol position (none outside
    `function_sizes`)."""
    table = _SIZES.get()
    return list(table.used) if table is not None else []


def size_values() -> list:
    """The index values of `size_names()`, by symbol position."""
    table = _SIZES.get()
    return table.values() if table is not None else []


@dataclass(frozen=True)
class Size:
    """A size of the function by its name, for a map written as a Python lambda:
    `lambda i, j: i * Size("n") + j`."""

    name: str
    dtype: str = "int32"


def _size(name: str) -> ir.AffineExpr:
    table = _SIZES.get()
    if table is None:
        raise ScheduleError(f"the size {name!r} can be named only in the map of a transform_layout")
    return table.symbol(name)


def _is_size(x) -> bool:
    """A named integer variable: our Size, or TVM's tir.Var (a name and an int dtype, no
    value)."""
    return (
        isinstance(x, Size)
        or isinstance(getattr(x, "name", None), str)
        and not hasattr(x, "value")
        and str(getattr(x, "dtype", "")).startswith(("int", "uint"))
    )


def _e(x) -> ir.AffineExpr:
    if isinstance(x, Sym):
        return x.expr
    if _is_size(x):
        return _size(x.name)
    if isinstance(x, (ExprRV, RVExpr)):
        value_of = _VALUE_OF.get()
        if value_of is None:
            raise ScheduleError(f"the sampled value {x!r} is read only by the schedule sampling it")
        return _e(x.evaluate(value_of))
    if isinstance(x, int) and not isinstance(x, bool):
        if not -(2**63) <= x < 2**63:
            raise ScheduleError(f"integer {x} does not fit in 64 bits")
        return ir.AffineExpr.get_constant(x)
    value = getattr(x, "value", None)  # an integer constant object (TVM's tir.const(...))
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and str(getattr(x, "dtype", "")).startswith(("int", "uint"))
    ):
        return _e(value)
    raise ScheduleError(f"expected an integer expression, got {x!r}")


def _const(x) -> int:
    c = const_of(_e(x))
    if c is None or c <= 0:
        raise ScheduleError("// and % need a positive constant divisor")
    return c


@dataclass(frozen=True)
class Constraint:
    expr: ir.AffineExpr
    is_eq: bool

    def __and__(self, other):
        return Conj([self]) & other


class Conj(list):
    def __and__(self, other):
        return Conj(list(self) + (list(other) if isinstance(other, list) else [other]))


class Sym:
    dtype = "int32"  # (TVM's index variables' dtype: maps may ask, `tir.const(0, i.dtype)`)

    def __init__(self, expr: ir.AffineExpr):
        self.expr = expr

    def __add__(self, o):
        return Sym(self.expr + _e(o))

    def __radd__(self, o):
        return Sym(_e(o) + self.expr)

    def __sub__(self, o):
        return Sym(self.expr - _e(o))

    def __rsub__(self, o):
        return Sym(_e(o) - self.expr)

    def __neg__(self):
        return Sym(self.expr * -1)

    def __mul__(self, o):
        a, b = self.expr, _e(o)
        if dims_of(a) and dims_of(b):  # (a size may multiply a variable: semi-affine)
            raise ScheduleError("a product of two variables is not affine")
        return Sym(a * b)

    __rmul__ = __mul__

    def __floordiv__(self, o):
        return Sym(ir.AffineExpr.get_floor_div(self.expr, _const(o)))

    def __mod__(self, o):
        return Sym(ir.AffineExpr.get_mod(self.expr, _const(o)))

    def __lt__(self, o):
        return Constraint(_e(o) - self.expr - 1, False)

    def __le__(self, o):
        return Constraint(_e(o) - self.expr, False)

    def __gt__(self, o):
        return Constraint(self.expr - _e(o) - 1, False)

    def __ge__(self, o):
        return Constraint(self.expr - _e(o), False)

    def __eq__(self, o):
        return Constraint(self.expr - _e(o), True)  # noqa: E704

    # unhashable (== builds a constraint); typeshed types __hash__ as a method
    __hash__ = None  # pyright: ignore[reportAssignmentType]


def call(fn: Callable, n: int) -> list:
    """fn(d0, ..., d{n-1}) with symbolic arguments; the result as a list."""
    syms = [Sym(ir.AffineExpr.get_dim(k)) for k in range(n)]
    # `lambda *indices, k: ...`: the last dims by name
    kwonly = [] if isinstance(fn, SafeLambda) else _keyword_only(fn)
    if kwonly and len(kwonly) <= n:
        syms, kw = syms[: n - len(kwonly)], dict(zip(kwonly, syms[n - len(kwonly) :]))
    else:
        kw = {}
    try:
        if isinstance(fn, SafeLambda):  # its other names: the function's sizes
            out = fn(*syms, free=_FreeSizes())
        else:
            out = fn(*syms, **kw)
    except TypeError as e:
        raise ScheduleError(f"cannot evaluate the function symbolically: {e}")
    return list(out) if isinstance(out, (tuple, list)) else [out]


class _FreeSizes(dict):
    """A lambda text's free names, read as the function's sizes."""

    def __contains__(self, name) -> bool:
        return _SIZES.get() is not None  # (an unknown name: refused naming the sizes)

    def __getitem__(self, name):
        return Sym(_size(name))


AXIS_SEPARATOR = "axis_separator"  # TVM's IndexMap.AXIS_SEPARATOR (te.AXIS_SEPARATOR)


def split_separators(fn: Callable, n: int):
    """(axis separators, fn without them) for an index map whose results may hold
    AXIS_SEPARATOR markers (`lambda i, j: [i, AXIS_SEPARATOR, j]`: separator [1])."""
    out = call(fn, n)
    seps, kept = [], 0
    for x in out:
        if isinstance(x, str) and x == AXIS_SEPARATOR:
            seps.append(kept)
        else:
            kept += 1
    if not seps:
        return [], fn

    def plain(*args, **kwargs):
        res = fn(*args, **kwargs)
        return [
            x
            for x in (res if isinstance(res, (list, tuple)) else [res])
            if not (isinstance(x, str) and x == AXIS_SEPARATOR)
        ]

    plain.param_names = _names(fn, n)
    return seps, plain


def _keyword_only(fn) -> list:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind is p.KEYWORD_ONLY]


def exprs(fn: Callable, n: int) -> List[ir.AffineExpr]:
    return [_e(x) for x in call(fn, n)]


def constraints(fn: Callable, n: int) -> List[Constraint]:
    out = call(fn, n)
    if not all(isinstance(c, Constraint) for c in out):
        raise ScheduleError("the predicate must be comparisons joined with &")
    return out


def _py(e: ir.AffineExpr, names) -> str:
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineConstantExpr):
        return str(e.value)
    if isinstance(e, ir.AffineDimExpr):
        return names[e.position]
    if not isinstance(e, ir.AffineBinaryExpr):
        raise TypeError(f"unknown affine expression {e}")
    op = {
        ir.AffineAddExpr: "+",
        ir.AffineMulExpr: "*",
        ir.AffineFloorDivExpr: "//",
        ir.AffineModExpr: "%",
    }[type(e)]
    return f"({_py(e.lhs, names)} {op} {_py(e.rhs, names)})"


def _names(fn: Callable, n: int) -> list:
    if len(getattr(fn, "param_names", ())) == n:  # a wrapper naming its parameters
        return list(fn.param_names)
    if isinstance(fn, SafeLambda):
        return fn.params if len(fn.params) == n else [f"v{k}" for k in range(n)]
    code = getattr(fn, "__code__", None)
    names = list(code.co_varnames[:n]) if code and code.co_argcount == n else []
    return names or [f"v{k}" for k in range(n)]


def lambda_text(fn, n: int, predicate: bool = False) -> str:
    """A canonical `lambda ...: ...` text for fn (recorded in traces, JSON-safe); a str is
    taken as such a text already."""
    if isinstance(fn, str):
        fn = parse_lambda(fn)
    names = _names(fn, n)
    if predicate:
        body = " & ".join(
            f"({_py(c.expr, names)} {'==' if c.is_eq else '>='} 0)" for c in constraints(fn, n)
        )
    else:
        from tir_mlir.printer.affine_text import affine_text  # TVM's precedence

        results = exprs(fn, n)
        body = "(" + ", ".join(affine_text(e, names, size_names())[0] for e in results) + ",)"
    return f"lambda {', '.join(names)}: {body}"


def from_text(fn):
    """The callable for a lambda text (as recorded by lambda_text; parsed, never executed),
    or fn itself."""
    if isinstance(fn, str):
        return parse_lambda(fn)
    if not callable(fn):
        raise ScheduleError(f"expected a lambda or its text, got {type(fn).__name__}")
    return fn
