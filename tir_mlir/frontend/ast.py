"""Typed syntax tree of a TVMScript program, built from the Lark parse while it parses.

`ToAst` runs as the LALR parser's callbacks (Lark `transformer=`), so the tree is built bottom-up
with no recursion however deep the program nests. Every node has `pos = (line, col)`, 1-based,
of its first token.
"""

import re
import unicodedata
import dataclasses
from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple, cast

from lark import Token, Transformer

Pos = Tuple[int, int]


class Node:
    __slots__ = ()


@dataclass(eq=False)
class Name(Node):
    id: str
    pos: Pos


@dataclass(eq=False)
class Attr(Node):
    value: Any
    attr: str
    pos: Pos

    def dotted(self) -> Optional[str]:
        """`T.axis.spatial` for a chain of names, else None (iterative: chains can be long)."""
        parts, node = [self.attr], self.value
        while isinstance(node, Attr):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, Name):
            return None
        parts.append(node.id)
        return ".".join(reversed(parts))


@dataclass(eq=False)
class Const(Node):
    """int, float, bool, str or None literal."""

    value: Any
    pos: Pos


@dataclass(eq=False)
class BinOp(Node):
    op: str
    lhs: Any
    rhs: Any
    pos: Pos


@dataclass(eq=False)
class UnaryOp(Node):
    op: str  # "-", "+", "~", "not"
    operand: Any
    pos: Pos


@dataclass(eq=False)
class Compare(Node):
    """a < b <= c: ops[i] compares operands[i] with operands[i + 1]."""

    ops: List[str]
    operands: List[Any]
    pos: Pos


@dataclass(eq=False)
class Call(Node):
    func: Any
    args: List[Any]
    kwargs: List[Tuple[str, Any, Pos]]
    pos: Pos

    def kw(self, name, default=None):
        for k, v, _ in self.kwargs:
            if k == name:
                return v
        return default


@dataclass(eq=False)
class Subscript(Node):
    value: Any
    indices: List[Any]
    pos: Pos


@dataclass(eq=False)
class Slice(Node):
    lo: Any
    hi: Any
    step: Any
    pos: Pos


@dataclass(eq=False)
class Tuple_(Node):
    items: List[Any]
    pos: Pos


@dataclass(eq=False)
class List_(Node):
    items: List[Any]
    pos: Pos


@dataclass(eq=False)
class Dict_(Node):
    items: List[Tuple[Any, Any]]
    pos: Pos


# --- statements -------------------------------------------------------------------------------
@dataclass(eq=False)
class ExprStmt(Node):
    value: Any
    pos: Pos


@dataclass(eq=False)
class Assign(Node):
    target: Any
    value: Any
    pos: Pos


@dataclass(eq=False)
class AnnAssign(Node):
    target: Any
    annotation: Any
    value: Any
    pos: Pos


@dataclass(eq=False)
class AugAssign(Node):
    target: Any
    op: str
    value: Any
    pos: Pos


@dataclass(eq=False)
class Pass(Node):
    pos: Pos


@dataclass(eq=False)
class Return(Node):
    value: Any
    pos: Pos


@dataclass(eq=False)
class Import(Node):
    pos: Pos


@dataclass(eq=False)
class For(Node):
    target: Any
    iter: Any
    body: List[Any]
    pos: Pos


@dataclass(eq=False)
class With(Node):
    item: Any
    target: Any
    body: List[Any]
    pos: Pos


@dataclass(eq=False)
class If(Node):
    cond: Any
    body: List[Any]
    orelse: List[Any]
    pos: Pos


@dataclass(eq=False)
class Param(Node):
    name: str
    annotation: Any
    pos: Pos


@dataclass(eq=False)
class FuncDef(Node):
    name: str
    params: List[Param]
    returns: Any
    body: List[Any]
    pos: Pos
    decorators: List[Any] = field(default_factory=list)


@dataclass(eq=False)
class ClassDef(Node):
    name: str
    body: List[Any]
    pos: Pos
    decorators: List[Any] = field(default_factory=list)


def dotted_name(node) -> Optional[str]:
    """`T.axis.spatial` for a Name or a chain of Attrs over one, else None."""
    if isinstance(node, Name):
        return node.id
    if isinstance(node, Attr):
        return node.dotted()
    return None


def pos_of(x) -> Optional[Pos]:
    if isinstance(x, Token):
        return cast(Pos, (x.line, x.column))  # (the lexer sets both)
    return getattr(x, "pos", None)


def _pos(x) -> Pos:
    """The position of a parse-tree child: a lexer token or a node built below has one."""
    return cast(Pos, pos_of(x))


def names_used(node):
    """Every Name node in a syntax tree (statements or expressions), in no particular order."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Name):
            yield n
        elif isinstance(n, (list, tuple)):
            stack.extend(n)
        elif isinstance(n, Node) and dataclasses.is_dataclass(n):
            stack.extend(getattr(n, f.name) for f in dataclasses.fields(n))


def _first_pos(children, default=(0, 0)):
    for c in children:
        p = pos_of(c)
        if p:
            return p
    return default


_SIMPLE_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "\n": "",
}
_ESCAPE = re.compile(
    r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}"
    r"|N\{[^}]*\}|[xuUN]|.|\n)"
)


def _unescape(body: str, tok) -> str:
    """Python's string escapes, decoded by hand: the parser never evaluates program text."""

    def one(m):
        e = m[1]
        if e in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[e]
        if e[0] in "xuU" and len(e) > 1:
            code = int(e[1:], 16)
        elif e[0] in "01234567":
            code = int(e, 8)
        elif e[0] == "N" and len(e) > 1:
            try:
                return unicodedata.lookup(e[2:-1])
            except KeyError:
                raise LiteralError(
                    f"unknown character name in escape \\{e[:60]}", pos_of(tok)
                ) from None
        elif e in "xuUN":
            raise LiteralError(f"truncated \\{e} escape in a string", pos_of(tok))
        else:
            return "\\" + e  # unknown escapes stay as written, as in Python
        if code > 0x10FFFF:
            raise LiteralError(f"escape \\{e} is not a Unicode character", pos_of(tok))
        return chr(code)

    return _ESCAPE.sub(one, body)


def _string(tok: Token) -> str:
    s = str(tok)
    raw = s[0] in "rR"
    if s[0] in "rRuU":  # u"..." is a plain str, as in Python 3
        s = s[1:]
    q = 3 if s[:3] in ('"""', "'''") else 1
    body = s[q:-q]
    return body if raw else _unescape(body, tok)


class LiteralError(Exception):
    """A number or string token that Python itself would reject (`09`, `1__0`, `"\\x4"`); raised while the
    parser runs and reported by the parser at `pos`."""

    def __init__(self, message, pos):
        super().__init__(message)
        self.pos = pos


_DIGITS = r"\d(?:_?\d)*"
_PY_NUMBER = re.compile(
    rf"0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+"  # hex, octal, binary
    rf"|(?:(?:{_DIGITS})?\.{_DIGITS}|{_DIGITS}\.)(?:[eE][+-]?{_DIGITS})?"  # point float
    rf"|{_DIGITS}[eE][+-]?{_DIGITS}"  # exponent float
    rf"|[1-9](?:_?\d)*|0(?:_?0)*"
)  # decimal integer
MAX_INT_BITS = 64  # uint64 is the widest TensorIR integer


def _number(tok: Token):
    if not _PY_NUMBER.fullmatch(str(tok)):
        raise LiteralError(
            f"invalid number literal {str(tok)[:40]!r} (as in Python: no leading "
            f"zeros, single underscores between digits)",
            pos_of(tok),
        )
    digits = len(str(tok))
    if digits > 1000 and not any(c in str(tok).lower() for c in ".e") or digits > 5000:
        raise LiteralError(f"number literal of {digits} characters is too long", pos_of(tok))
    v = _number_value(tok)
    if isinstance(v, int) and v >= 1 << MAX_INT_BITS:
        raise LiteralError(f"integer literal {str(tok)[:40]} does not fit in 64 bits", pos_of(tok))
    return v


def _number_value(tok: Token):
    s = str(tok).replace("_", "")
    low = s.lower()
    if low.startswith(("0x", "0o", "0b")):
        return int(s, 0)
    if any(c in low for c in ".e"):
        return float(s)
    return int(s)


class ToAst(Transformer):
    """Lark callbacks: parse tree -> the nodes above (run inside the LALR parser)."""

    # --- expressions --------------------------------------------------------------------------
    def name(self, c):
        return Name(str(c[0]), _pos(c[0]))

    def number(self, c):
        return Const(_number(c[0]), _pos(c[0]))

    def string(self, c):
        return Const("".join(_string(t) for t in c), _pos(c[0]))

    def const(self, c):
        return Const({"True": True, "False": False, "None": None}[str(c[0])], _pos(c[0]))

    def getattr(self, c):
        return Attr(c[0], str(c[1]), _pos(c[0]))

    def binop(self, c):
        return BinOp(str(c[1]), c[0], c[2], _pos(c[0]))

    boolop = binop  # `and` / `or`

    def unary(self, c):
        return UnaryOp(str(c[0]), c[1], _pos(c[0]))

    def compare(self, c):
        return Compare([str(t) for t in c[1::2]], list(c[0::2]), _pos(c[0]))

    def tuple(self, c):
        items = [x for x in c if x is not None]
        return Tuple_(items, _first_pos(items))

    def list(self, c):
        items = [x for x in c if x is not None]
        return List_(items, _first_pos(items))

    def dict(self, c):
        items = [x for x in c if x is not None]
        return Dict_(items, _first_pos([k for k, _ in items]))

    def dict_item(self, c):
        return (c[0], c[1])

    def kwarg(self, c):
        return ("kw", str(c[0]), c[1], _pos(c[0]))

    def arguments(self, c):
        """Also `subscripts` and `parameters`: the items given (None for an absent optional)."""
        return [x for x in c if x is not None]

    subscripts = parameters = arguments

    def call(self, c):
        args, kwargs = [], []
        for a in c[1] or []:
            if isinstance(a, tuple) and a and a[0] == "kw":
                kwargs.append(a[1:])
            else:
                args.append(a)
        return Call(c[0], args, kwargs, _pos(c[0]))

    def subscript(self, c):
        return Subscript(c[0], c[1], _pos(c[0]))

    def slice(self, c):
        colon = [i for i, x in enumerate(c) if isinstance(x, Token) and x.type == "COLON"]
        parts = [x for x in c if not (isinstance(x, Token) and x.type == "COLON")]
        lo, hi = parts[0], parts[1]
        step = parts[2] if len(parts) > 2 else None
        return Slice(lo, hi, step, _pos(lo) or _pos(c[colon[0]]))

    # --- statements ---------------------------------------------------------------------------
    def start(self, c):
        return [s for x in c if x is not None and not isinstance(x, Token) for s in _stmts(x)]

    def simple_stmt(self, c):
        return [s for x in c if x is not None for s in _stmts(x)]

    def suite(self, c):
        return [s for x in c if not isinstance(x, Token) for s in _stmts(x)]

    def expr_stmt(self, c):
        return ExprStmt(c[0], _pos(c[0]))

    def assign(self, c):
        # a = b = v: one Assign per target, like Python
        *targets, value = c
        if len(targets) > 1:
            return [Assign(t, value, _pos(t)) for t in targets]
        return Assign(targets[0], value, _pos(targets[0]))

    def annassign(self, c):
        return AnnAssign(c[0], c[1], c[2], _pos(c[0]))

    def augassign(self, c):
        return AugAssign(c[0], str(c[1])[:-1], c[2], _pos(c[0]))

    def pass_stmt(self, c):
        return Pass(_pos(c[0]))

    def return_stmt(self, c):
        return Return(c[1], _pos(c[0]))

    def import_stmt(self, c):
        return Import(_pos(c[0]))

    def for_stmt(self, c):
        return For(c[1], c[3], c[4], _pos(c[0]))

    def with_stmt(self, c):
        return With(c[1], c[3], c[4], _pos(c[0]))

    def if_stmt(self, c):
        cond, body, rest = c[1], c[2], c[3:]
        # elif chains become nested Ifs in the else branch, built from the last one backwards
        orelse = []
        if len(rest) >= 2 and isinstance(rest[-2], Token) and rest[-2].type == "ELSE":
            orelse = rest[-1]
            rest = rest[:-2]
        elifs = [x for x in rest if isinstance(x, If)]
        for e in reversed(elifs):
            e.orelse = orelse
            orelse = [e]
        return If(cond, body, orelse, _pos(c[0]))

    def elif_clause(self, c):
        return If(c[1], c[2], [], _pos(c[0]))

    def param(self, c):
        return Param(str(c[0]), c[1], _pos(c[0]))

    def funcdef(self, c):
        seen = set()
        for p in c[2] or []:
            if p.name in seen:  # as Python refuses it (TVM too)
                raise LiteralError(f"duplicate argument {p.name!r} in function definition", p.pos)
            seen.add(p.name)
        return FuncDef(str(c[1]), c[2] or [], c[3], c[4], _pos(c[0]))

    def classdef(self, c):
        return ClassDef(str(c[1]), c[-1], _pos(c[0]))

    def decorator(self, c):
        return c[1]

    def decorated(self, c):
        *decorators, target = c
        target.decorators = decorators
        return target


def _stmts(x):
    return x if isinstance(x, list) else [x]
