"""A parsed TVMScript definition + captured values -> the statements the builder takes.

Shared by Python files read from disk (pyfile.py) and by the decorators (define.py): captured
names are substituted (captures.py), then macro calls expanded (macro.py).
"""

from tir_mlir.errors import SourceLoc, TIRParseError
from tir_mlir.frontend import ast as A
from tir_mlir.script.captures import bound_names, resolve_func
from tir_mlir.script.extract import MACRO_DECORATORS
from tir_mlir.script.macro import expand, make_macro
from tir_mlir.script.meta_var import expand_meta_vars


def _resolve_func(f, captures, filename):
    f = resolve_func(f, captures, filename)
    bound = bound_names(f.body, [p.name for p in f.params])
    body = expand_meta_vars(expand(f.body, captures, bound, filename), filename)
    return A.FuncDef(f.name, f.params, f.returns, body, f.pos, f.decorators)


def resolve_definition(s, captures, filename):
    """A FuncDef (prim_func) or ClassDef (ir_module) with captures substituted, macros
    expanded."""
    if isinstance(s, A.FuncDef):
        return _resolve_func(s, captures, filename)
    if isinstance(s, A.ClassDef):
        body = [
            _resolve_func(f, captures, filename) if isinstance(f, A.FuncDef) else f for f in s.body
        ]
        return A.ClassDef(s.name, body, s.pos, s.decorators)
    return s


def macro_options(f, filename):
    """None when `f` is not decorated with T.macro, else its `hygienic` flag."""
    for d in f.decorators:
        target = d.func if isinstance(d, A.Call) else d
        if A.dotted_name(target) not in MACRO_DECORATORS:
            continue
        hygienic = True
        for k, v, p in d.kwargs if isinstance(d, A.Call) else []:
            if k != "hygienic" or not (isinstance(v, A.Const) and isinstance(v.value, bool)):
                raise TIRParseError(
                    "@T.macro takes only hygienic=True or hygienic=False", SourceLoc(filename, *p)
                )
            hygienic = v.value
        if isinstance(d, A.Call) and d.args:
            raise TIRParseError(
                "@T.macro takes keyword arguments only", SourceLoc(filename, *d.pos)
            )
        return hygienic
    return None


def make_macro_def(f, captures, filename):
    hygienic = macro_options(f, filename)
    if hygienic is None:
        raise ValueError(f"{f.name} is not a T.macro definition")
    return make_macro(f, captures, hygienic, filename)
