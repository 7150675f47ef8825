"""`te.create_prim_func([A, B, C])`: TE operations -> a TensorIR PrimFunc, as TVM 0.21 makes it.

The operations reachable from the arguments are written as TVMScript in TVM's layout (one loop
nest and one block per compute, named after it; block vars `v_<axis>`; spatial axes then reduce
axes; `T.init` with the reducer's identity; intermediates as `T.alloc_buffer`;
`tir.noalias`) and parsed by the TVMScript parser: no second way into the `tir` dialect.
"""

from typing import Dict, List, Sequence

from tir_mlir.te.expr import Var
from tir_mlir.te.operation import ComputeOp, PlaceholderOp, Reduce, Tensor


def reachable_ops(args: List[Tensor]):
    """Compute ops reachable from `args`, producers first (post-order, inputs in body order)."""
    order, seen = [], set()

    def visit(t):
        if id(t.op) in seen:
            return
        seen.add(id(t.op))
        for inp in t.op.input_tensors:
            visit(inp)
        order.append(t.op)

    for t in args:
        visit(t)
    return order


def _unique(name, taken):
    new, k = name, 0
    while new in taken:
        k += 1
        new = f"{name}_{k}"
    taken.add(new)
    return new


def _dim(d):
    return d.name if isinstance(d, Var) else str(d)


def _shape_text(shape):
    return "(" + ", ".join(_dim(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _symbolic_vars(ops) -> List[Var]:
    """The te.var objects the shapes and reduce axes use, in order of first use."""
    out = []
    for op in ops:
        dims = list(op.tensor.shape) + [a.extent for a in getattr(op, "reduce_axis", [])]
        for d in dims:
            if isinstance(d, Var) and all(d is not v for v in out):
                out.append(d)
    return out


def _compute_text(op: ComputeOp, names: Dict, ind: str, with_init: bool = True) -> List[str]:
    axes = list(op.axis) + list(op.reduce_axis)
    taken = set(names.values())
    loop_names = [_unique(a.var.name, taken) for a in axes]
    block_vars = [_unique("v_" + a.var.name, taken) for a in axes]
    scope = dict(names)
    scope.update({a.var: v for a, v in zip(axes, block_vars)})
    kinds = "".join(a.kind for a in axes)
    out = f"{names[op.tensor]}[{', '.join(block_vars[: len(op.axis)]) or '()'}]"
    if axes:
        lines = [
            f"{ind}for {', '.join(loop_names)} in T.grid("
            f"{', '.join(_dim(a.extent) for a in axes)}):",
            f'{ind}    with T.block("{names[op.tensor]}"):',
            f"{ind}        {', '.join(block_vars)}{',' if len(axes) == 1 else ''} = "
            f'T.axis.remap("{kinds}", [{", ".join(loop_names)}])',
        ]
    else:  # a 0-d tensor with no reduction: TVM's block has one unit iter var
        ind = ind[:-4]
        lines = [
            f'{ind}    with T.block("{names[op.tensor]}"):',
            f"{ind}        {_unique('vi', taken)} = T.axis.spatial(1, 0)",
        ]
    body = op.body
    if isinstance(body, Reduce):
        acc = _Acc(out, body.dtype)
        init = body.init if body.init is not None else body.reducer.identity(body.dtype)
        if with_init:
            lines += [
                f"{ind}        with T.init():",
                f"{ind}            {out} = {init.text(scope)}",
            ]
        update = f"{out} = {body.reducer.combine(acc, body.source).text(scope)}"
        if body.where is not None:  # TVM 0.21 drops the condition; it is kept here
            lines += [f"{ind}        if {body.where.text(scope)}:", f"{ind}            {update}"]
        else:
            lines.append(f"{ind}        {update}")
    else:
        lines.append(f"{ind}        {out} = {body.text(scope)}")
    return lines


class _Acc(Var):
    """The reduction's accumulator `C[v_i, v_j]` inside the combiner expression."""

    def __init__(self, text, dtype):
        super().__init__("acc", dtype)
        self._text = text

    def text(self, names):
        return self._text


def prim_func_text(args: List, func_name: str = "main", roots: Sequence = (), init: bool = True):
    """(TVMScript text, tensor -> buffer/block name): `args` are the parameters (tensors, and
    te.var scalars); operations reachable from `roots` but not from `args` are computed into
    allocated buffers; symbolic vars not among the parameters are declared `n = T.int32()`.
    `init=False` leaves out the reductions' T.init (a tensor intrinsic's description)."""
    for a in args:
        if not isinstance(a, (Tensor, Var)):
            raise TypeError(f"create_prim_func takes te tensors and te.var, got {type(a).__name__}")
    tensors = [a for a in args if isinstance(a, Tensor)]
    ops = reachable_ops(tensors + list(roots))
    taken, names = set(), {}
    symbolic = _symbolic_vars(ops)
    for v in symbolic + [a for a in args if isinstance(a, Var)]:
        if v not in names:
            names[v] = v.name
            if v.name in taken:
                raise ValueError(f"two te.var named {v.name!r}")
            taken.add(v.name)
    for t in tensors:
        names[t] = _unique(t.name, taken)
    for op in ops:
        if isinstance(op, PlaceholderOp) and op.tensor not in names:
            raise ValueError(f"placeholder {op.name!r} is used but not in the argument list")
        if op.tensor not in names:
            names[op.tensor] = _unique(op.name, taken)
    # a buffer of symbolic shape is a handle `var_A` and a T.match_buffer, as TVM makes it
    dynamic = [a for a in tensors if not all(isinstance(d, int) for d in a.shape)]
    params = ", ".join(
        f"{a.name}: T.{a.dtype}"
        if isinstance(a, Var)
        else f"var_{names[a]}: T.handle"
        if any(a is t for t in dynamic)
        else f'{names[a]}: T.Buffer({_shape_text(a.shape)}, "{a.dtype}")'
        for a in args
    )
    lines = [f"@T.prim_func\ndef {func_name}({params}):", '    T.func_attr({"tir.noalias": True})']
    lines += [f"    {v.name} = T.{v.dtype}()" for v in symbolic if all(v is not a for a in args)]
    lines += [
        f'    {names[t]} = T.match_buffer(var_{names[t]}, {_shape_text(t.shape)}, "{t.dtype}")'
        for t in dynamic
    ]
    for op in ops:
        if all(op.tensor is not a for a in args):
            lines.append(
                f"    {names[op.tensor]} = T.alloc_buffer("
                f'{_shape_text(op.tensor.shape)}, "{op.tensor.dtype}")'
            )
    for op in ops:
        if isinstance(op, ComputeOp):
            lines += _compute_text(op, names, "    ", init)
    return "\n".join(lines) + "\n", names


def prim_func_and_names(args: List, func_name: str = "main", roots: Sequence = ()):
    """(PrimFunc, names); te.var shapes and scalar args are the function's symbolic vars
    and scalar parameters (docs/symbolic.md)."""
    from tir_mlir.frontend.parser import parse
    from tir_mlir.script.prim_func import PrimFunc

    text, names = prim_func_text(args, func_name, roots)
    return PrimFunc(parse(text, "<te.create_prim_func>").module), names


def create_prim_func(args: List, func_name: str = "main"):
    """The PrimFunc computing the te tensors in `args` (inputs and outputs, in order)."""
    return prim_func_and_names(args, func_name)[0]
