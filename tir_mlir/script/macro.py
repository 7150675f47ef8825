"""`T.macro`: a statement fragment expanded where it is called, as TVM does.

A hygienic macro (the default) has its free names resolved where it was defined, and its own
local names (loop vars, lets, `with ... as` targets) renamed when they would capture a name in
an argument; its parameters are replaced by the argument expressions. `T.macro(hygienic=False)`
resolves its free names where it is called. Expansion is on the syntax tree, before the builder
runs; macros may call macros (up to MAX_EXPANSION levels deep).
"""

from dataclasses import dataclass
from typing import Any, Dict

from tir_mlir.errors import SourceLoc, TIRParseError
from tir_mlir.frontend import ast as A
from tir_mlir.script.captures import MacroRef, bound_names, resolve, transform

MAX_EXPANSION = 32


@dataclass(eq=False)
class Macro:
    """A parsed `@T.macro` definition (its free names resolved already when hygienic)."""

    func: A.FuncDef
    hygienic: bool
    filename: str

    @property
    def name(self):
        return self.func.name

    def __repr__(self):
        return f"<T.macro {self.name}>"


def make_macro(f: A.FuncDef, captures: Dict[str, Any], hygienic: bool, filename: str) -> Macro:
    if hygienic:
        bound = bound_names(f.body, [p.name for p in f.params])
        f = A.FuncDef(
            f.name,
            f.params,
            f.returns,
            resolve(f.body, captures, bound, filename),
            f.pos,
            f.decorators,
        )
    return Macro(f, hygienic, filename)


def expand(stmts, captures, bound, filename, depth=0):
    """`stmts` with every `macro(args)` statement replaced by the macro's body."""
    out = []
    for s in stmts:
        call = s.value if isinstance(s, A.ExprStmt) else None
        if isinstance(call, A.Call) and isinstance(call.func, MacroRef):
            if depth >= MAX_EXPANSION:
                raise TIRParseError(
                    f"macro {call.func.name!r} expands more than "
                    f"{MAX_EXPANSION} levels deep (recursive macro?)",
                    SourceLoc(filename, *call.pos),
                )
            body = _instantiate(call.func.macro, call, captures, bound, filename)
            out += expand(body, captures, bound | bound_names(body), filename, depth + 1)
            continue
        for field in ("body", "orelse"):
            if getattr(s, field, None):
                s = _replace(s, field, expand(getattr(s, field), captures, bound, filename, depth))
        out.append(s)
    return out


def _replace(s, field, value):
    kwargs = dict(s.__dict__)
    kwargs[field] = value
    return type(s)(**kwargs)


def _bind_args(macro, call, filename):
    params = [p.name for p in macro.func.params]
    if len(call.args) > len(params):
        raise TIRParseError(
            f"macro {macro.name!r} takes {len(params)} arguments, got {len(call.args)}",
            SourceLoc(filename, *call.pos),
        )
    args = dict(zip(params, call.args))
    for k, v, p in call.kwargs:
        if k not in params or k in args:
            what = "an unexpected" if k not in params else "a repeated"
            raise TIRParseError(
                f"macro {macro.name!r} got {what} argument {k!r}", SourceLoc(filename, *p)
            )
        args[k] = v
    missing = [p for p in params if p not in args]
    if missing:
        raise TIRParseError(
            f"macro {macro.name!r} is missing argument {missing[0]!r}",
            SourceLoc(filename, *call.pos),
        )
    return args


def _instantiate(macro, call, captures, bound, filename):
    args = _bind_args(macro, call, filename)
    body = macro.func.body
    rename = {}
    if macro.hygienic:
        taken = _names_in(list(args.values()))  # a local must not capture an argument
        for name in sorted(bound_names(body) - set(args)):
            new, k = name, 0
            while new in taken:
                k += 1
                new = f"{name}_{k}"
            taken.add(new)
            if new != name:
                rename[name] = new

    def fn(node):
        if isinstance(node, A.Name):
            if node.id in args:
                return transform(args[node.id], lambda n: None)
            if node.id in rename:
                return A.Name(rename[node.id], node.pos)
        if isinstance(node, A.Attr) and isinstance(node.value, A.Name) and node.value.id in args:
            return A.Attr(transform(args[node.value.id], lambda n: None), node.attr, node.pos)
        return None

    body = transform(body, fn)
    if not macro.hygienic:
        body = resolve(body, captures, bound | bound_names(body), filename)
    return body


def _names_in(nodes):
    out = set()

    def fn(node):
        if isinstance(node, A.Name):
            out.add(node.id)
        return None

    transform(nodes, fn)
    return out
