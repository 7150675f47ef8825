"""A recorded `lambda ...: ...` text (a trace's index map or store predicate) as a callable,
without executing it.

A trace is data: its lambdas are parsed by the TVMScript parser (Lark, never Python's `eval`)
and the syntax tree is interpreted over the few constructs an index map or predicate needs:
the parameters, integer literals, + - * // % unary -, comparisons and `&`, tuples and lists.
Anything else (names other than the parameters, attributes, calls, subscripts, strings) is
refused with a ScheduleError, so no text can reach Python objects.
"""
import re
from typing import List

from tir_mlir.errors import ScheduleError, TIRParseError
from tir_mlir.frontend import ast as A

_HEADER = re.compile(r"\s*lambda\s*((?:[A-Za-z_]\w*\s*(?:,\s*[A-Za-z_]\w*\s*)*,?)?)\s*:(.*)\Z",
                     re.S)
_BINOPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
           "//": lambda a, b: a // b, "%": lambda a, b: a % b, "&": lambda a, b: a & b}
_COMPARES = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
             ">=": lambda a, b: a >= b, "==": lambda a, b: a == b}
MAX_TEXT = 100_000


class SafeLambda:
    """`lambda i, j: (j, i)` parsed: call it with one value per parameter."""

    def __init__(self, text: str, params: List[str], body):
        self.text, self.params, self.body = text, params, body

    def __call__(self, *args):
        if len(args) != len(self.params):
            raise TypeError(f"the lambda takes {len(self.params)} arguments, got {len(args)}")
        try:
            return _eval(self.body, dict(zip(self.params, args)))
        except RecursionError:
            raise ScheduleError("the lambda is nested too deeply") from None

    def __repr__(self):
        return self.text


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
            raise ScheduleError(f"unknown name {node.id!r} in the lambda (only its parameters "
                                f"may be used)")
        return env[node.id]
    if isinstance(node, A.Const):
        if type(node.value) is not int:
            raise ScheduleError(f"only integer literals are allowed in the lambda, got "
                                f"{node.value!r}")
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
    raise ScheduleError(f"{what!r} is not allowed in an index map or predicate (only "
                        f"parameters, integers, + - * // %, comparisons and &)")
