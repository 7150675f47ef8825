"""TE tensors and operations: `placeholder`, `compute`, `reduce_axis` and the reducers.

`compute` calls the user's lambda once with axis variables (TE programs are Python the user
runs) and keeps the expression tree; create_prim_func turns the operations into TensorIR.
"""

import inspect
from typing import List

from tir_mlir.dtypes import is_float
from tir_mlir.te.expr import Call, Const, Expr, Var, as_expr, check_dtype, const, match_dtypes


class IterVar(Expr):
    """An axis: `var` over range(extent); kind "S" (spatial), "R" (reduce) or a thread tag.
    In an expression it stands for its variable, as in TVM."""

    def __init__(self, var, extent, kind):
        self.var, self.extent, self.kind, self.dtype = var, extent, kind, var.dtype

    def text(self, names):
        return self.var.text(names)

    @property
    def dom(self):
        return (0, self.extent)

    def __repr__(self):
        return f"IterVar({self.var.name}, {self.extent}, {self.kind})"


class Tensor:
    def __init__(self, op, shape, dtype):
        self.op, self.shape, self.dtype = op, tuple(shape), dtype

    @property
    def name(self):
        return self.op.name

    @property
    def ndim(self):
        return len(self.shape)

    def __getitem__(self, indices):
        indices = indices if isinstance(indices, tuple) else (indices,)
        if len(indices) != len(self.shape):
            raise IndexError(
                f"{self.name} has {len(self.shape)} dimensions, indexed with {len(indices)}"
            )
        return Read(self, [_index(i) for i in indices])

    def __call__(self, *indices):
        """`A(i, j)`: `A[i, j]`, as TVM's Tensor takes it."""
        return self[indices]

    def __repr__(self):
        return f"Tensor({self.name}, {self.shape}, {self.dtype})"


def _index(i):
    if isinstance(i, IterVar):
        return i.var
    e = as_expr(i)
    if not e.dtype.startswith(("int", "uint")):
        raise TypeError(f"a tensor index must be an integer, got {e.dtype}")
    return e


class Read(Expr):
    def __init__(self, tensor, indices):
        self.tensor, self.indices, self.dtype = tensor, indices, tensor.dtype

    def text(self, names):
        return f"{names[self.tensor]}[{', '.join(i.text(names) for i in self.indices)}]"


class PlaceholderOp:
    tensor: Tensor  # set by placeholder() once the op exists

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, shape, dtype
        self.input_tensors = []

    def output(self, k=0):
        return self.tensor


class ComputeOp:
    """`axis`, `reduce_axis` (IterVars), `body` (an Expr or a Reduce)."""

    tensor: Tensor  # set by compute() once the op exists

    def __init__(self, name, axis, reduce_axis, body, tag=""):
        self.name, self.axis, self.reduce_axis, self.body, self.tag = (
            name,
            axis,
            reduce_axis,
            body,
            tag,
        )

    @property
    def input_tensors(self) -> List[Tensor]:
        """The tensors the body reads, in order of first appearance."""
        out, stack = [], [self.body]
        while stack:
            e = stack.pop(0)
            if isinstance(e, Read):
                if e.tensor not in out:
                    out.append(e.tensor)
                stack[:0] = e.indices
            else:
                stack[:0] = _children(e)
        return out

    def output(self, k=0):
        return self.tensor


def _children(e):
    if isinstance(e, Reduce):
        return [e.source] + [x for x in (e.init, e.where) if x is not None]
    return [getattr(e, f) for f in ("a", "b") if isinstance(getattr(e, f, None), Expr)] + list(
        getattr(e, "args", [])
    )


def _shape(shape) -> tuple:
    """A shape: positive ints and symbolic integer vars (`te.var("n")`)."""
    shape = shape if isinstance(shape, (tuple, list)) else (shape,)
    for d in shape:
        if isinstance(d, Var) and d.dtype in ("int32", "int64"):
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise TypeError(f"shape dimensions must be ints or te.var, got {d!r}")
        if d <= 0:
            raise ValueError(f"shape dimensions must be positive, got {d}")
    return tuple(shape)


def placeholder(shape, dtype="float32", name="placeholder") -> Tensor:
    op = PlaceholderOp(name, _shape(shape), check_dtype(dtype))
    op.tensor = Tensor(op, op.shape, dtype)
    return op.tensor


def reduce_axis(dom, name="rv") -> IterVar:
    lo, hi = dom if isinstance(dom, (tuple, list)) else (0, dom)
    if lo != 0:
        raise ValueError("te.reduce_axis with a non-zero lower bound is not supported")
    return IterVar(Var(name), _shape((hi,))[0], "R")


def thread_axis(tag="", name=""):
    """`te.thread_axis("threadIdx.x")`: what `bind` binds a loop to."""
    return IterVar(Var(name or tag), None, tag)


def var(name="tindex", dtype="int32") -> Var:
    return Var(name, dtype)


class Reduce(Expr):
    """`te.sum(source, axis=k)`: combine(acc, source) over `axis`, from `identity`."""

    def __init__(self, reducer, source, axis, init=None, where=None):
        self.reducer, self.source, self.axis, self.init = reducer, source, axis, init
        self.where = where  # the points combined: `where=k > i`
        self.dtype = source.dtype

    def text(self, names):
        raise TypeError("a reduction must be the whole body of te.compute")


class CommReducer:
    """`te.comm_reducer(lambda x, y: x * y, lambda t: te.const(1, t), name="prod")`."""

    def __init__(self, fcombine, fidentity, name="reduce"):
        self.fcombine, self.fidentity, self.name = fcombine, fidentity, name

    def combine(self, acc: Expr, value: Expr) -> Expr:
        return as_expr(self.fcombine(acc, value))

    def identity(self, dtype) -> Expr:
        return as_expr(self.fidentity(dtype))

    def __call__(self, expr, axis, where=None, init=None):
        if not isinstance(axis, (IterVar, list, tuple)):  # te.max(a, b): elementwise
            a, b = match_dtypes(expr, axis)
            return self.combine(a, b)
        axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
        for a in axes:
            if not (isinstance(a, IterVar) and a.kind == "R"):
                raise TypeError(f"axis must be te.reduce_axis values, got {a!r}")
        return Reduce(
            self,
            as_expr(expr),
            axes,
            None if init is None else as_expr(init),
            None if where is None else as_expr(where),
        )


def comm_reducer(fcombine, fidentity, name="reduce") -> CommReducer:
    return CommReducer(fcombine, fidentity, name)


def _limit(which):
    return lambda dtype: Call(which, [_DtypeName(dtype)], dtype)


class _DtypeName(Expr):
    def __init__(self, dtype):
        self.dtype = dtype

    def text(self, names):
        return f'"{self.dtype}"'


sum = comm_reducer(lambda x, y: x + y, lambda t: const(0, t), name="sum")
max = comm_reducer(
    lambda x, y: Call("max", match_dtypes(x, y), x.dtype), _limit("min_value"), name="max"
)
min = comm_reducer(
    lambda x, y: Call("min", match_dtypes(x, y), x.dtype), _limit("max_value"), name="min"
)


def if_then_else(cond, t, f) -> Expr:
    cond = as_expr(cond)
    if cond.dtype != "bool":
        raise TypeError("te.if_then_else needs a boolean condition")
    t, f = match_dtypes(t, f)
    return Call("if_then_else", [cond, t, f], t.dtype)


def all(*conds) -> Expr:
    out = None
    for c in conds:
        out = as_expr(c) if out is None else out & c
    return out if out is not None else const(True)


def any(*conds) -> Expr:
    out = None
    for c in conds:
        out = as_expr(c) if out is None else out | c
    return out if out is not None else const(False)


def compute(shape, fcompute, name="compute", tag="", attrs=None) -> Tensor:
    shape = _shape(shape)
    code = fcompute.__code__
    params = code.co_varnames[: code.co_argcount]
    if code.co_flags & inspect.CO_VARARGS and len(params) <= len(shape):
        # `lambda *i: A(*i) + 1`: the remaining dimensions' vars, named as TVM names them
        params = (*params, *(f"i{k}" for k in range(len(params), len(shape))))
    if len(params) != len(shape):
        raise ValueError(
            f"te.compute: the lambda takes {len(params)} arguments for a "
            f"{len(shape)}-dimensional shape"
        )
    axis = [IterVar(Var(p), n, "S") for p, n in zip(params, shape)]
    body = fcompute(*[a.var for a in axis])
    body = as_expr(body)
    reduce_axes = body.axis if isinstance(body, Reduce) else []
    op = ComputeOp(name, axis, reduce_axes, body, tag)
    op.tensor = Tensor(op, shape, body.dtype)
    return op.tensor


def _math(name):
    def f(x):
        x = as_expr(x)
        if not is_float(x.dtype):
            raise TypeError(f"te.{name} needs a float operand, got {x.dtype}")
        return Call(name, [x], x.dtype)

    f.__name__ = name
    return f


exp, log, sqrt, tanh, sigmoid, rsqrt = (
    _math(n) for n in ("exp", "log", "sqrt", "tanh", "sigmoid", "rsqrt")
)


def Select(cond, t, f) -> Expr:
    t, f = match_dtypes(t, f)
    return Call("Select", [as_expr(cond), t, f], t.dtype)


__all__ = [
    "IterVar",
    "Tensor",
    "placeholder",
    "compute",
    "reduce_axis",
    "thread_axis",
    "var",
    "const",
    "comm_reducer",
    "sum",
    "max",
    "min",
    "if_then_else",
    "all",
    "any",
    "exp",
    "log",
    "sqrt",
    "tanh",
    "sigmoid",
    "rsqrt",
    "Select",
    "Const",
]
