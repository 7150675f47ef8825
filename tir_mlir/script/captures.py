"""Values from the enclosing Python scope, substituted into a TVMScript definition by name.

A name the definition uses but never binds (Python's rule: not a parameter, not assigned, not a
loop or `with ... as` target) is looked up among the captured values. Constants become literals
in the syntax tree: int, float, bool, str (dtypes), numpy scalars and tuples/lists of them.
A `T.macro` becomes a `MacroRef` for macro.py to expand. A symbolic var made outside the
definition (`n = T.int32()` at module level, as TVM allows) stays a name, and each function
using it declares it (`n = T.int32()` first in its body: an implicit var of that function,
docs/symbolic.md). Anything else is a located error that names the kind of value found. Captured objects are only type-checked, never called: no user
code runs (not even a `__eq__` or a metaclass property).
"""

import dataclasses
from dataclasses import dataclass
from typing import Any, Dict, Set, TypeGuard, Union

from tir_mlir.errors import SourceLoc, TIRParseError
from tir_mlir.frontend import ast as A

# Names that stay names: the TVMScript namespaces and the Python builtins the grammar uses.
NAMESPACES = {
    "T",
    "I",
    "tir",
    "tvm",
    "ty",
    "range",
    "min",
    "max",
    "abs",
    "len",
    "float",
    "int",
    "bool",
}
MAX_DEPTH = 16  # nesting of captured tuples/lists


@dataclass(eq=False)
class MacroRef(A.Node):
    """A call target resolved to a T.macro (expanded by macro.py before building)."""

    macro: Any
    name: str
    pos: A.Pos


@dataclass(frozen=True)
class SizeVar:
    """The value of `T.int32()` / `T.int64()` (no arguments) outside a definition."""

    dtype: str


@dataclass(frozen=True)
class Unreadable:
    """A top-level name of a Python file whose value only running the file would give."""

    line: int


def kind_of(value) -> str:
    """The type name of `value`, read without running anything the value's class defines."""
    return type.__dict__["__name__"].__get__(type(value), type)


def _numpy_scalars():
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is a core dependency
        return {}
    ints = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
    return {
        **{t: int for t in ints},
        np.float16: float,
        np.float32: float,
        np.float64: float,
        np.bool_: bool,
    }


_NUMPY = _numpy_scalars()
CAPTURABLE = "int, float, bool, str, or a tuple/list of them, or a T.macro"


def _one_of(t, types) -> bool:
    """`t in types` by identity: `==` or `hash` on a class may run its metaclass's code."""
    return any(t is x for x in types)


def _is_sequence(value) -> TypeGuard[Union[tuple, list]]:
    """A tuple or a list, its type found by identity (as `_one_of`)."""
    return _one_of(type(value), (tuple, list))


def _numpy_kind(t):
    """The Python type of numpy scalar type `t` (found by identity), else None."""
    return next((kind for x, kind in _NUMPY.items() if t is x), None)


def is_macro(value) -> bool:
    """`isinstance(value, Macro)` without reading `value.__class__` (a property may run)."""
    from tir_mlir.script.macro import Macro

    return type(value) is Macro


def value_node(value, pos, name, filename, depth=0):
    """The literal node for a captured constant; TIRParseError for any other value."""
    t = type(value)
    if _one_of(t, (bool, int, float, str)):
        return A.Const(value, pos)
    if t is SizeVar:
        raise TIRParseError(
            f"{name!r} holds a symbolic var inside a tuple or list: use the var by its own name",
            SourceLoc(filename, *pos),
        )
    if t is Unreadable:
        raise TIRParseError(
            f"{name!r} is assigned at line {value.line} by an expression that "
            "only running the file would evaluate (tir-mlir reads literals and "
            "arithmetic on them)",
            SourceLoc(filename, *pos),
        )
    kind = _numpy_kind(t)
    if kind is not None:
        return A.Const(kind(value), pos)
    if _one_of(t, (tuple, list)) and depth < MAX_DEPTH:
        items = [value_node(v, pos, name, filename, depth + 1) for v in value]
        return (A.Tuple_ if t is tuple else A.List_)(items, pos)
    raise TIRParseError(
        f"{name!r} is a {kind_of(value)} in the enclosing Python scope; "
        f"TVMScript can use {CAPTURABLE}",
        SourceLoc(filename, *pos),
    )


def _targets(node, out):
    if isinstance(node, A.Name):
        out.add(node.id)
    elif isinstance(node, (A.Tuple_, A.List_)):
        for x in node.items:
            _targets(x, out)


def bound_names(stmts, params=()) -> Set[str]:
    """Every name a body binds anywhere (Python makes such a name local to the whole body)."""
    out, stack = set(params), list(stmts)
    while stack:
        s = stack.pop()
        if isinstance(s, (A.Assign, A.AnnAssign, A.AugAssign, A.For)):
            _targets(s.target, out)
        elif isinstance(s, A.With) and s.target is not None:
            _targets(s.target, out)
        for body in ("body", "orelse"):
            stack += getattr(s, body, None) or []
    return out


def transform(node: Any, fn) -> Any:
    """A copy of the tree with `fn(node)` in place of every node for which it is not None."""
    if isinstance(node, list):
        return [transform(x, fn) for x in node]
    if isinstance(node, tuple):
        return tuple(transform(x, fn) for x in node)
    if not isinstance(node, A.Node) or not dataclasses.is_dataclass(node):
        return node
    new = fn(node)
    if new is not None:
        return new
    return type(node)(
        **{f.name: transform(getattr(node, f.name), fn) for f in dataclasses.fields(node)}
    )


def resolve(
    stmts, captures: Dict[str, Any], bound: Set[str], filename: str, size_vars: dict | None = None
):
    """`stmts` with every free name found in `captures` replaced (see the module comment);
    the symbolic vars used are added to `size_vars` (name -> dtype, in order of use)."""

    def fn(node):
        if isinstance(node, A.Attr) and node.dotted() is not None:
            return node  # T.float32, A.shape: dotted names stay
        if isinstance(node, A.Call) and isinstance(node.func, A.Name):
            value = _lookup(node.func.id)
            if is_macro(value):
                return A.Call(
                    MacroRef(value, node.func.id, node.func.pos),
                    transform(node.args, fn),
                    transform(node.kwargs, fn),
                    node.pos,
                )
            if value is not _MISSING and not _is_constant(value):
                raise TIRParseError(
                    f"{node.func.id!r} is a {kind_of(value)} in the enclosing Python scope; "
                    "TVMScript calls only T. functions and T.macro definitions",
                    SourceLoc(filename, *node.func.pos),
                )
            return None
        if (
            isinstance(node, A.Subscript)
            and isinstance(node.value, A.Name)
            and len(node.indices) == 1
        ):
            seq, k = _lookup(node.value.id), _int_literal(node.indices[0])
            if _is_sequence(seq) and k is not None:  # FACTORS[0], SHAPE[-1]
                if not -len(seq) <= k < len(seq):
                    raise TIRParseError(
                        f"index {k} is out of range for {node.value.id!r} "
                        f"(a {kind_of(seq)} of {len(seq)})",
                        SourceLoc(filename, *node.pos),
                    )
                return value_node(seq[k], node.pos, node.value.id, filename)
            return None
        if isinstance(node, A.Name):
            value = _lookup(node.id)
            if value is _MISSING:
                return None
            if type(value) is SizeVar:
                if size_vars is not None:
                    size_vars.setdefault(node.id, value.dtype)
                return node
            if is_macro(value):
                raise TIRParseError(
                    f"macro {node.id!r} can only be called, as a statement",
                    SourceLoc(filename, *node.pos),
                )
            return value_node(value, node.pos, node.id, filename)
        return None

    def _lookup(name):
        if name in bound or name in NAMESPACES or name not in captures:
            return _MISSING
        return captures[name]

    try:
        return transform(transform(stmts, fn), _concatenate)
    except RecursionError:
        raise TIRParseError("program nested too deeply", SourceLoc(filename, 1, 1)) from None


def _concatenate(node):
    """`SHAPE + (4,)` on captured tuples (or lists) -> one literal tuple, as Python gives."""
    if not (isinstance(node, A.BinOp) and node.op == "+"):
        return None
    lhs, rhs = transform(node.lhs, _concatenate), transform(node.rhs, _concatenate)
    if type(lhs) is type(rhs) and isinstance(lhs, (A.Tuple_, A.List_)):
        return type(lhs)(lhs.items + rhs.items, node.pos)
    return A.BinOp(node.op, lhs, rhs, node.pos)


def _int_literal(node):
    """The int an index literal writes (`0`, `-1`), else None."""
    if isinstance(node, A.UnaryOp) and node.op == "-":
        k = _int_literal(node.operand)
        return None if k is None else -k
    return node.value if isinstance(node, A.Const) and type(node.value) is int else None


def _is_constant(value) -> bool:
    t = type(value)
    return _one_of(t, (bool, int, float, str, tuple, list)) or _numpy_kind(t) is not None


_MISSING = object()


def resolve_func(f: A.FuncDef, captures, filename) -> A.FuncDef:
    """A prim_func or macro definition with its captured names substituted (not its
    decorators: they were checked when the definition was found)."""
    bound = bound_names(f.body, [p.name for p in f.params])
    size_vars = {}
    params = [
        A.Param(p.name, resolve(p.annotation, captures, bound, filename, size_vars), p.pos)
        for p in f.params
    ]
    body = resolve(f.body, captures, bound, filename, size_vars)
    decls = [
        A.Assign(
            A.Name(name, f.pos),
            A.Call(A.Attr(A.Name("T", f.pos), dtype, f.pos), [], [], f.pos),
            f.pos,
        )
        for name, dtype in size_vars.items()
    ]
    return A.FuncDef(f.name, params, f.returns, decls + body, f.pos, f.decorators)
