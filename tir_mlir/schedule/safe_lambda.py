"""A recorded `lambda ...: ...` text (a trace's index map or store predicate) as a callable,
without executing it.

A trace is data: its lambdas are parsed by the TVMScript parser (Lark, never Python's `eval`)
and the syntax tree is interpreted over the few constructs an index map or predicate needs:
the parameters, integer literals, + - * // % unary -, comparisons and `&`, tuples and lists.
Anything else (names other than the parameters, attributes, calls, subscripts, strings) is
refused with a ScheduleError, so no text can reach Python objects.
"""

import math
import re
from typing import List

from tir_mlir.errors import ScheduleError, TIRParseError
from tir_mlir.frontend import ast as A

_HEADER = re.compile(
    r"\s*lambda\s*((?:[A-Za-z_]\w*\s*(?:,\s*[A-Za-z_]\w*\s*)*,?)?)\s*:(.*)\Z", re.S
)
_BINOPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "//": lambda a, b: a // b,
    "%": lambda a, b: a % b,
    "&": lambda a, b: a & b,
}
_COMPARES = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
}
MAX_TEXT = 100_000


class SafeLambda:
    """`lambda i, j: (j, i)` parsed: call it with one value per parameter."""

    def __init__(self, text: str, params: List[str], body):
        self.text, self.params, self.body = text, params, body

    def __call__(self, *args, free=None):
        """`free`: what the lambda's other names stand for (a mapping; none by default)."""
        if len(args) != len(self.params):
            raise TypeError(f"the lambda takes {len(self.params)} arguments, got {len(args)}")
        env = _Env(dict(zip(self.params, args)), free)
        try:
            return _eval(self.body, env)
        except RecursionError:
            raise ScheduleError("the lambda is nested too deeply") from None

    def __repr__(self):
        return self.text


class _Env(dict):
    """The parameters, then the free names (`free`, when given)."""

    def __init__(self, params: dict, free=None):
        super().__init__(params)
        self.free = free

    def __contains__(self, name) -> bool:
        return dict.__contains__(self, name) or (self.free is not None and name in self.free)

    def __getitem__(self, name):
        if dict.__contains__(self, name) or self.free is None:
            return dict.__getitem__(self, name)
        return self.free[name]


def parse_lambda(text: str) -> SafeLambda:
    """Parse `lambda p, q: expr` (ScheduleError naming the problem if it is anything else)."""
    from tir_mlir.frontend.parser import parse_ast

    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise ScheduleError("expected the text of a lambda")
    m = _HEADER.match(text)
    if m is None:
        raise ScheduleError(f"expected a lambda, got {text[:80]!r}")
    params = [p.strip() for p in m[1].split(",") if p.strip()]
    if len(set(params)) != len(params):
        raise ScheduleError(f"duplicate parameter in {text[:80]!r}")
    try:
        stmts = parse_ast(m[2].strip(), "<lambda>")
    except (TIRParseError, RecursionError) as e:
        raise ScheduleError(f"cannot parse the lambda {text[:80]!r}: {e}") from None
    if len(stmts) != 1 or not isinstance(stmts[0], A.ExprStmt):
        raise ScheduleError(f"the lambda's body must be one expression: {text[:80]!r}")
    return SafeLambda(text, params, stmts[0].value)


def _eval(node, env):
    if isinstance(node, A.Name):
        if node.id not in env:
            raise ScheduleError(
                f"unknown name {node.id!r} in the lambda (only its parameters may be used)"
            )
        return env[node.id]
    if isinstance(node, A.Const):
        if type(node.value) is not int:
            raise ScheduleError(
                f"only integer literals are allowed in the lambda, got {node.value!r}"
            )
        return node.value
    if isinstance(node, A.BinOp) and node.op in _BINOPS:
        return _BINOPS[node.op](_eval(node.lhs, env), _eval(node.rhs, env))
    if isinstance(node, A.UnaryOp) and node.op in ("-", "+"):
        v = _eval(node.operand, env)
        return -v if node.op == "-" else v
    if isinstance(node, A.Compare) and len(node.ops) == 1 and node.ops[0] in _COMPARES:
        a, b = (_eval(x, env) for x in node.operands)
        return _COMPARES[node.ops[0]](a, b)
    if isinstance(node, (A.Tuple_, A.List_)):
        return tuple(_eval(x, env) for x in node.items)
    what = getattr(node, "op", None) or type(node).__name__.rstrip("_").lower()
    raise ScheduleError(
        f"{what!r} is not allowed in an index map or predicate (only "
        f"parameters, integers, + - * // %, comparisons and &)"
    )


# --- printing a lambda from its parsed form ----------------------------------------------------
# A trace prints its lambdas as Python code (TVM's format, and `tir-mlir tune` writes it into a
# schedule script that is then run), so the text printed is never the text recorded: it is
# printed again from the syntax tree, over the constructs below only. Anything else is refused.

_DTYPE = re.compile(r"(?:u?int|float|bfloat)(?:8|16|32|64)|bool")
# (precedence of a printed node: Python's, higher binds tighter)
_CMP, _AND, _ADD, _MUL, _UNARY, _ATOM = range(6)
_LEVEL = {"&": _AND, "+": _ADD, "-": _ADD, "*": _MUL, "//": _MUL, "%": _MUL}


def canonical_text(text: str) -> str:
    """`text` (`lambda p, q: expr`) printed from its parse: parameters, integers, + - * // %,
    unary -, one comparison, &, tuples, lists, `T.ceildiv(a, b)` and typed constants
    `T.float32(7.0)`; a ScheduleError for anything else."""
    f = parse_lambda(text)
    params = set(f.params)
    try:
        body = _text(f.body, params, top=True)[0]
    except RecursionError:
        raise ScheduleError("the lambda is nested too deeply") from None
    return f"lambda{' ' if f.params else ''}{', '.join(f.params)}: {body}"


def _text(node, params, top: bool = False) -> tuple:
    """(text, precedence) of an allowed node; a tuple ends with a comma at the top (as TVM
    prints an index map's results), else only when it has one item."""
    if isinstance(node, A.Name) and (node.id in params or not node.id.startswith("_")):
        return node.id, _ATOM  # a parameter, or a size of the function (`n`)
    if isinstance(node, A.Const) and type(node.value) is int:
        return str(node.value), _ATOM if node.value >= 0 else _UNARY
    if isinstance(node, A.BinOp) and node.op in _LEVEL:
        level = _LEVEL[node.op]
        lhs, rhs = _text(node.lhs, params), _text(node.rhs, params)
        return (f"{_paren(lhs, level)} {node.op} {_paren(rhs, level + 1)}", level)
    if isinstance(node, A.UnaryOp) and node.op in ("-", "+"):
        return node.op + _paren(_text(node.operand, params), _UNARY), _UNARY
    if isinstance(node, A.Compare) and len(node.ops) == 1 and node.ops[0] in _COMPARES:
        a, b = (_text(x, params) for x in node.operands)
        return f"{_paren(a, _AND)} {node.ops[0]} {_paren(b, _AND)}", _CMP
    if isinstance(node, A.Tuple_):
        items = [_text(x, params)[0] for x in node.items]
        return "(" + ", ".join(items) + (
            "," if items and (top or len(items) == 1) else ""
        ) + ")", _ATOM
    if isinstance(node, A.List_):
        return "[" + ", ".join(_text(x, params)[0] for x in node.items) + "]", _ATOM
    if (
        isinstance(node, A.Call)
        and not node.kwargs
        and isinstance(node.func, A.Attr)
        and isinstance(node.func.value, A.Name)
        and node.func.value.id == "T"
    ):
        name, args = node.func.attr, node.args
        if name == "ceildiv" and len(args) == 2:
            return f"T.ceildiv({_text(args[0], params)[0]}, {_text(args[1], params)[0]})", _ATOM
        if _DTYPE.fullmatch(name) and len(args) == 1:
            return f"T.{name}({_number(args[0])})", _ATOM
    what = getattr(node, "op", None) or type(node).__name__.rstrip("_").lower()
    raise ScheduleError(
        f"{what!r} is not allowed in a recorded lambda (only parameters, "
        f"integers, + - * // %, comparisons, &, T.ceildiv and typed constants)"
    )


def _number(node) -> str:
    """A typed constant's literal: an int, finite float or bool, optionally negated."""
    sign = ""
    if isinstance(node, A.UnaryOp) and node.op == "-":
        sign, node = "-", node.operand
    if (
        isinstance(node, A.Const)
        and type(node.value) in (int, float, bool)
        and math.isfinite(node.value)
    ):
        return sign + repr(node.value)
    raise ScheduleError("a typed constant in a recorded lambda must be a number")


def _paren(t: tuple, level: int) -> str:
    return f"({t[0]})" if t[1] < level else t[0]


def constant_body(f: SafeLambda):
    """(dtype or None, value) when `f` returns one constant (`lambda i: (T.float32(7.0),)`,
    `lambda i: 7`: how a trace records a constant pad value), else None."""
    body = f.body
    if isinstance(body, A.Tuple_) and len(body.items) == 1:
        body = body.items[0]
    dtype = None
    if (
        isinstance(body, A.Call)
        and not body.kwargs
        and len(body.args) == 1
        and isinstance(body.func, A.Attr)
        and isinstance(body.func.value, A.Name)
        and body.func.value.id == "T"
        and _DTYPE.fullmatch(body.func.attr)
    ):
        dtype, body = body.func.attr, body.args[0]
    sign = 1
    if isinstance(body, A.UnaryOp) and body.op == "-":
        sign, body = -1, body.operand
    if (
        isinstance(body, A.Const)
        and type(body.value) in (int, float)
        and math.isfinite(body.value)
        and (dtype or type(body.value) is int)
    ):
        return dtype, sign * body.value
    return None
