"""A decorated Python function or class -> its IRModule, PrimFunc or Macro, never run.

The definition's source is read from its file (`inspect`), dedented, placed at its line in the
file (so errors name the file's line), parsed with the TVMScript grammar, and its free names
looked up in the scope where the decorator was applied: the caller's locals (a factory's
arguments), then the function's closure and globals.
"""

import collections
import inspect

from tir_mlir.diagnostics import source_line
from tir_mlir.errors import SourceLoc, TIRError, TIRParseError, TVMScriptError
from tir_mlir.frontend import ast as A
from tir_mlir.frontend.parser import build, parse_ast
from tir_mlir.script.prim_func import PrimFunc
from tir_mlir.script.resolve import make_macro_def, resolve_definition


def scope_of(obj, frame):
    """The names visible to a definition: the frame it was decorated in, its closure, globals."""
    maps = [frame.f_locals] if frame is not None else []
    code = getattr(obj, "__code__", None)
    if code is not None and obj.__closure__:
        maps.append(
            {n: c.cell_contents for n, c in zip(code.co_freevars, obj.__closure__) if _filled(c)}
        )
    maps.append(frame.f_globals if frame is not None else getattr(obj, "__globals__", {}))
    return collections.ChainMap(*maps)


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:  # a closure variable not assigned yet
        return False
    return True


def _source(obj):
    """(file name, statements) of a function or class definition, at its place in its file."""
    try:
        filename = inspect.getsourcefile(obj) or "<unknown>"
        lines, start = inspect.getsourcelines(obj)
    except (OSError, TypeError) as e:
        raise TIRParseError(
            f"cannot read the source of {getattr(obj, '__name__', obj)!r} "
            f"({e}); define TVMScript in a file, or use tir_mlir.parse(text)"
        ) from None
    first = lines[0]
    indent = len(first) - len(first.lstrip(" \t"))
    text = "\n" * (max(start, 1) - 1) + "".join(
        line[indent:] if line[:indent].strip() == "" else line.lstrip() for line in lines
    )
    try:
        stmts = parse_ast(text, filename)
    except TIRParseError as e:
        if e.loc is not None and indent:
            raise TIRParseError(
                e.message, SourceLoc(e.loc.file, e.loc.line, e.loc.col + indent)
            ) from None
        raise
    defs = [s for s in stmts if isinstance(s, (A.FuncDef, A.ClassDef))]
    if len(defs) != 1:
        raise TIRParseError(
            f"expected one definition in the source of {obj.__name__!r}",
            SourceLoc(filename, start, 1),
        )
    return filename, defs[0]


def define_func(fn, frame):
    filename, f = _source(fn)
    f = resolve_definition(f, scope_of(fn, frame), filename)
    return PrimFunc(build([f], filename).module)


def define_module(cls, frame):
    filename, c = _source(cls)
    c = resolve_definition(c, scope_of(cls, frame), filename)
    return build([c], filename)


def define_macro(fn, frame):
    filename, f = _source(fn)
    return make_macro_def(f, scope_of(fn, frame), filename)


def script_error(e: TIRError) -> TIRError:
    """`e`, raised while defining a decorated function or class, as the TVMScriptError (a
    SyntaxError) Python shows with the source line and a caret; unchanged without a location."""
    if e.loc is None or isinstance(e, TVMScriptError):
        return e
    return TVMScriptError(e.message, e.loc, e.notes, text=source_line(e.loc, {}))
