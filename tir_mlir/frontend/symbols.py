"""Symbolic sizes and scalar parameters in TVMScript, as the IR holds them (docs/symbolic.md).

`n = T.int32()` declares an implicit var: a trailing `index` argument of the function bound by
the buffer shapes that use it. A scalar parameter `n: T.int32` is an `index` argument at its
place, `alpha: T.float32` an argument of its MLIR type. Until the function's arguments exist,
their names stand in the environment as `SymbolDecl`s, so that buffer shapes in the signature
and in `T.match_buffer` know which dimensions are dynamic.
"""

import dataclasses
from dataclasses import dataclass

from tir_mlir.frontend import ast as A
from tir_mlir.frontend.intrinsics import callee

INDEX_VAR_DTYPES = ("int32", "int64")  # integer vars / scalars held as `index` values
IMPLICIT = "tir.implicit"


@dataclass(eq=False)
class SymbolDecl:
    """A name that will be a function argument (an implicit var or a scalar parameter)."""

    name: str
    dtype: str


def var_decls(s) -> list:
    """`n = T.int32()` / `n, m = T.int64(), T.int64()` -> [(name, dtype, pos)], else []."""
    if not isinstance(s, A.Assign):
        return []
    targets = s.target.items if isinstance(s.target, A.Tuple_) else [s.target]
    values = s.value.items if isinstance(s.value, A.Tuple_) else [s.value]
    if len(targets) != len(values) or not all(
        isinstance(t, A.Name)
        and isinstance(v, A.Call)
        and not v.args
        and not v.kwargs
        and callee(v) in INDEX_VAR_DTYPES
        for t, v in zip(targets, values)
    ):
        return []
    return [(t.id, callee(v), t.pos) for t, v in zip(targets, values)]


def mentions(node, names) -> bool:
    """Whether the expression `node` uses one of `names`."""
    return any(n.id in names for n in A.names_used(node))


def has_call(node, name: str) -> bool:
    """Whether the expression `node` calls `T.<name>` anywhere."""
    stack = [node]
    while stack:
        n = stack.pop()
        if callee(n) == name:
            return True
        if isinstance(n, (list, tuple)):
            stack.extend(n)
        elif isinstance(n, A.Node) and dataclasses.is_dataclass(n):
            stack.extend(getattr(n, f.name) for f in dataclasses.fields(n))
    return False
