"""What a name or an expression stands for while a program is being built.

- `Val`: an MLIR value with its TensorIR dtype ("index" for loop and iter vars; whether
  TensorIR sees one as an int32 or an int64 is read from the IR: tir_mlir/ir/index_dtypes.py);
- `Lit`: a Python literal not yet materialized, so `vi + 1` gets an index constant and
  `A[i] * 2` an f32 one (dtype None until something types it; `T.float32(0)` sets it);
- `Buffer`: a memref value with its name, shape and dtype;
- `Handle`: a `T.handle` parameter waiting for its `T.match_buffer`;
- `ConstData`: a `T.allocate_const` waiting for its `T.decl_buffer`.
`Env` is the chain of scopes (function, loop, block bodies).
"""

from dataclasses import dataclass
from typing import Any, Optional, Tuple

from mlir import ir

from tir_mlir.analysis.symbolic import Int


@dataclass(eq=False)
class Val:
    value: ir.Value
    dtype: str
    dom: Optional[Tuple[int, int]] = None  # (min, extent) of a loop/iter var


@dataclass(eq=False)
class Lit:
    value: Any  # int, float or bool
    dtype: Optional[str] = None


@dataclass(eq=False)
class Buffer:
    name: str
    value: ir.Value
    shape: Tuple[Int, ...]  # a SymExpr for a dimension over the function's symbols
    dtype: str
    dim_dtypes: Tuple[str, ...] = ()  # dtype of each dimension (T.int64(4) -> "int64")
    pos: Optional[Tuple[int, int]] = None  # where it is declared (for related-location notes)

    def declared(self):
        """The note pointing at the declaration, for errors about this buffer."""
        return (f"buffer {self.name!r} declared here", self.pos)


@dataclass(eq=False)
class Handle:
    name: str


@dataclass(eq=False)
class ConstData:
    """The data of a `T.allocate_const`, waiting for the T.decl_buffer that indexes it."""

    name: str
    op: Any  # its memref.alloc (tir.const_data)
    shape: Tuple[int, ...]
    dtype: str


class Env:
    """Lexical scopes: name -> Val | Lit | Buffer | Handle."""

    def __init__(self):
        self.scopes = [{}]

    def push(self):
        self.scopes.append({})

    def pop(self):
        self.scopes.pop()

    def __setitem__(self, name, value):
        self.scopes[-1][name] = value

    def get(self, name):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def names(self):
        return {n for s in self.scopes for n in s}
