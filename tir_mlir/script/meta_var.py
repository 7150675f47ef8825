"""`x = T.meta_var(expr)`: a Python value that lives only in the parser, as in TVM.

    n = T.meta_var(N * 2)              # N captured: n is 16 below, never a TIR variable
    rows, cols = T.meta_var(SHAPE)

TVM evaluates `expr` as Python; tir-mlir runs no Python, so `expr` must be what a Python file's
top-level constants may be (pyfile.py): literals, captured constants, meta vars defined before,
and arithmetic on them. The statement is dropped and the names are replaced by their values in
the statements after it (in its block and the blocks nested there). Anything else is a located
error.
"""

import dataclasses

from tir_mlir.errors import SourceLoc, TIRParseError
from tir_mlir.frontend import ast as A
from tir_mlir.frontend.intrinsics import callee
from tir_mlir.script.captures import transform, value_node

BODIES = ("body", "orelse")


def _is_meta(s) -> bool:
    return isinstance(s, A.Assign) and callee(s.value) == "meta_var"


def _bind(s, env, filename):
    from tir_mlir.script.pyfile import _constant

    call = s.value
    if len(call.args) != 1 or call.kwargs:
        raise TIRParseError("T.meta_var takes one value", SourceLoc(filename, *call.pos))
    value = _constant(call.args[0], env)
    if value is None:
        raise TIRParseError(
            "T.meta_var: tir-mlir never runs Python, so the value must be "
            "literals, captured constants, meta vars and arithmetic on them",
            SourceLoc(filename, *call.args[0].pos),
        )
    targets = s.target.items if isinstance(s.target, A.Tuple_) else [s.target]
    if len(targets) > 1:
        if type(value) not in (tuple, list) or len(value) != len(targets):
            raise TIRParseError(
                f"T.meta_var: cannot unpack {value!r} into {len(targets)} names",
                SourceLoc(filename, *s.pos),
            )
        values = list(value)
    else:
        values = [value]
    for t, v in zip(targets, values):
        if not isinstance(t, A.Name):
            raise TIRParseError("T.meta_var binds names only", SourceLoc(filename, *s.pos))
        env[t.id] = v


def _substitute(node, env, filename):
    def fn(n):
        if isinstance(n, A.Name) and n.id in env:
            return value_node(env[n.id], n.pos, n.id, filename)
        return None

    return transform(node, fn)


def expand_meta_vars(stmts, filename, env=None):
    """`stmts` without their `T.meta_var` statements, the names replaced by the values."""
    env = dict(env or {})
    out = []
    for s in stmts:
        if _is_meta(s):
            _bind(s, env, filename)
            continue
        if env:
            s = _substitute(s, env, filename)
        # nested blocks see the meta vars bound so far, and their own
        nested = {
            f: expand_meta_vars(getattr(s, f), filename, env) for f in BODIES if getattr(s, f, None)
        }
        out.append(dataclasses.replace(s, **nested) if nested else s)
    return out
