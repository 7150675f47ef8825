"""`te.decl_tensor_intrin`: a TE computation and the C call that implements it, for
`s[C].tensorize(loop, intrin)`, as in TVM's tensorize tutorial:

    Bb = tvm.tir.decl_buffer(b.shape, b.dtype, name="B", offset_factor=1, strides=[te.var("s1"), 1])
    def intrin_func(ins, outs):
        ib = tvm.tir.ir_builder.create()
        ib.emit(tvm.tir.call_extern("int32", "gemv_update", outs[0].access_ptr("w"),
                                    ins[0].access_ptr("r"), ins[1].access_ptr("r"), m, l,
                                    ins[1].strides[0]))
        return ib.get()
    gemv = te.decl_tensor_intrin(c.op, intrin_func, binds={b: Bb})

It becomes a TensorIR `TensorIntrin`: the desc is `te.create_prim_func` of the op without
its init (the scheduled block keeps its own), the impl a PrimFunc whose body is the emitted
statements, written as TVMScript (`B.access_ptr("w")`, `B.strides[0]`, `T.call_extern(...)`)
and parsed: the buffers' symbolic strides and offsets are those of the region tensorize binds
them to. `fcompute` may return TVM's (body, reset, update): TensorIR keeps the block's init,
so the update (else the body) is the impl.
"""

import itertools
from typing import Dict, List

from tir_mlir.errors import ScheduleError
from tir_mlir.te.expr import Expr, Var, as_expr, check_dtype
from tir_mlir.te.operation import ComputeOp
from tir_mlir.te.prim_func import _shape_text, _unique

_COUNTER = itertools.count()


class DeclBuffer:
    """`tvm.tir.decl_buffer(shape, dtype, name, offset_factor=..., strides=[...])`: the view
    of a tensor the intrinsic's C function gets (`access_ptr`, `data`, `elem_offset`,
    `strides`)."""

    def __init__(
        self,
        shape,
        dtype="float32",
        name="buffer",
        data=None,
        strides=None,
        elem_offset=None,
        scope="",
        data_alignment=-1,
        offset_factor=0,
        **_,
    ):
        self.shape, self.dtype, self.name = tuple(shape), check_dtype(dtype), name
        self.strides = list(strides) if strides else []
        self.param = name  # its parameter name in the impl PrimFunc

    def access_ptr(self, access_mask, ptr_type="handle", content_lanes=1, offset=0, extent=None):
        return _Text(
            lambda names: (
                f"{self.param}.access_ptr({_mask(access_mask)!r}"
                + (f", offset={as_expr(offset).text(names)}" if offset != 0 else "")
                + (f", extent={as_expr(extent).text(names)}" if extent is not None else "")
                + ")"
            ),
            "handle",
        )

    @property
    def data(self):
        return _Text(lambda names: f"{self.param}.data", "handle")

    @property
    def elem_offset(self):
        return _Text(lambda names: f"{self.param}.elem_offset", "int32")


def decl_buffer(shape, dtype="float32", name="buffer", **kwargs) -> DeclBuffer:
    return DeclBuffer(shape, dtype, name, **kwargs)


def _mask(mask):
    if isinstance(mask, int):
        return {1: "r", 2: "w", 3: "rw"}[mask]
    return mask


class _Text(Expr):
    """An expression whose TVMScript text is made by `fn(names)`."""

    def __init__(self, fn, dtype):
        self.fn, self.dtype = fn, dtype

    def text(self, names):
        return self.fn(names)


def call_extern(dtype, func_name, *args) -> Expr:
    """`tvm.tir.call_extern("int32", "f", ...)`: a call to the C function `f`."""
    return _call("call_extern", dtype, func_name, args)


def call_pure_extern(dtype, func_name, *args) -> Expr:
    return _call("call_pure_extern", dtype, func_name, args)


def call_packed(func_name, *args) -> Expr:
    """`tvm.tir.call_packed("name", A, n)`: the function registered as `name`; a buffer
    argument is the whole (tensorize: matched) region, viewed as a numpy array."""
    exprs = [a if isinstance(a, DeclBuffer) else as_expr(a) for a in args]
    return _Text(
        lambda names: (
            f'T.call_packed("{func_name}"'
            + "".join(
                ", " + (e.param if isinstance(e, DeclBuffer) else e.text(names)) for e in exprs
            )
            + ")"
        ),
        "int32",
    )


def _call(kind, dtype, func_name, args) -> Expr:
    check_dtype(dtype)
    exprs = [as_expr(a) for a in args]
    return _Text(
        lambda names: (
            f'T.{kind}("{dtype}", "{func_name}"'
            + "".join(", " + e.text(names) for e in exprs)
            + ")"
        ),
        dtype,
    )


class IRBuilder:
    """`tvm.tir.ir_builder.create()`: collects the statements `emit` is given."""

    def __init__(self):
        self.stmts: List[Expr] = []

    def emit(self, stmt):
        self.stmts.append(stmt)

    def get(self):
        return list(self.stmts)


class TETensorIntrin:
    def __init__(self, op: ComputeOp, impl_text: str):
        self.op, self.impl_text, self.name = op, impl_text, None

    def register(self) -> str:
        """Register with TensorIntrin once, under a fresh name; returns the name."""
        if self.name is None:
            from tir_mlir.schedule.tensor_intrin import TensorIntrin
            from tir_mlir.te.prim_func import prim_func_text

            inputs = list(self.op.input_tensors)
            desc, _ = prim_func_text(inputs + [self.op.output(0)], "desc", init=False)
            name = f"te_{self.op.name}_{next(_COUNTER)}"
            TensorIntrin.register(name, desc, self.impl_text)
            self.name = name
        return self.name


def decl_tensor_intrin(
    op, fcompute, name="tensor_intrin", binds=None, scalar_params=None, default_buffer_params=None
) -> TETensorIntrin:
    if not isinstance(op, ComputeOp):
        raise ScheduleError("decl_tensor_intrin: expected the .op of a te.compute")
    if scalar_params:
        raise ScheduleError("decl_tensor_intrin: scalar_params are not supported")
    tensors = list(op.input_tensors) + [op.output(0)]
    binds = dict(binds or {})
    buffers: List[DeclBuffer] = []
    taken = set()
    for t in tensors:
        b = binds.get(t) or DeclBuffer(t.shape, t.dtype, t.name)
        if tuple(b.shape) != tuple(t.shape) or b.dtype != t.dtype:
            raise ScheduleError(
                f"decl_tensor_intrin: the buffer bound to {t.name!r} has shape "
                f"{b.shape} {b.dtype}, the tensor {t.shape} {t.dtype}"
            )
        b.param = _unique(b.name, taken)
        buffers.append(b)
    n_in = len(op.input_tensors)
    body = fcompute(buffers[:n_in], buffers[n_in:])
    if isinstance(body, tuple) and len(body) == 3:
        body = body[2] if body[2] is not None else body[0]
    stmts = body if isinstance(body, list) else [body]
    names: Dict = {}
    for b in buffers:
        for k, s in enumerate(b.strides):
            if isinstance(s, Var):
                names[s] = f"{b.param}.strides[{k}]"
    params = ", ".join(f'{b.param}: T.Buffer({_shape_text(b.shape)}, "{b.dtype}")' for b in buffers)
    lines = [f"@T.prim_func\ndef {name}({params}):"]
    for s in stmts:
        if not isinstance(s, Expr):
            raise ScheduleError(
                f"decl_tensor_intrin: the intrinsic's body must be calls "
                f"(tvm.tir.call_extern), got {type(s).__name__}"
            )
        lines.append(f"    T.evaluate({s.text(names)})")
    return TETensorIntrin(op, "\n".join(lines) + "\n")
