"""The programs many test files use, generated from their parameters instead of pasted.

`matmul(n)` is the TVMScript text of TVM's textbook matmul with T.init (block "C", loops i, j,
k); `mm_relu(n)` adds the ReLU consumer (block "Y" into an intermediate, then block "C");
`unary(fn, n)` is B[i] = T.fn(A[i]). Text
rather than a parsed module: tests parse it (through tir_mlir or TVM), format it, or write it
to a file for the CLI.
"""

from typing import Optional, Sequence


def _buffer(name: str, shape: Sequence[int], dtype: str, extra: str = "") -> str:
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    return f'{name}: T.Buffer(({dims}), "{dtype}"{extra})'


def matmul(
    n: int = 16,
    m: Optional[int] = None,
    k: Optional[int] = None,
    dtype: str = "float32",
    noalias: bool = False,
    c_axis_separators: Optional[Sequence[int]] = None,
) -> str:
    """C[n, m] = A[n, k] @ B[k, m] (m and k default to n), block "C" with T.init; `noalias`
    adds T.func_attr({"tir.noalias": True}); `c_axis_separators` gives C's."""
    m = n if m is None else m
    k = n if k is None else k
    sep = (
        ""
        if c_axis_separators is None
        else f", axis_separators=[{', '.join(str(s) for s in c_axis_separators)}]"
    )
    attr = '    T.func_attr({"tir.noalias": True})\n' if noalias else ""
    return f"""
@T.prim_func
def main({_buffer("A", (n, k), dtype)}, {_buffer("B", (k, m), dtype)}, {_buffer("C", (n, m), dtype, sep)}):
{attr}    for i, j, k in T.grid({n}, {m}, {k}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.{dtype}(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def mm_relu(
    n: int = 16, m: Optional[int] = None, k: Optional[int] = None, dtype: str = "float32"
) -> str:
    """Y[n, m] = A[n, k] @ B[k, m] (block "Y", with T.init) into an intermediate, then
    C = max(Y, 0) (block "C")."""
    m = n if m is None else m
    k = n if k is None else k
    return f"""
@T.prim_func
def main({_buffer("A", (n, k), dtype)}, {_buffer("B", (k, m), dtype)}, {_buffer("C", (n, m), dtype)}):
    Y = T.alloc_buffer(({n}, {m}))
    for i, j, k in T.grid({n}, {m}, {k}):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.{dtype}(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid({n}, {m}):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.{dtype}(0))
"""


def unary(fn: str, n: int, dtype: str = "float32") -> str:
    """B[i] = T.fn(A[i]) over n elements (block "B", loop i)."""
    return f"""
@T.prim_func
def main({_buffer("A", (n,), dtype)}, {_buffer("B", (n,), dtype)}):
    for i in T.serial({n}):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.{fn}(A[vi])
"""
