"""Constant buffers: `K = T.allocate_const([1, 2, 3, 4], "int32", [2, 2])`, then
`Kb = T.decl_buffer((2, 2), "int32", data=K)` (or `T.Buffer(..., data=K)`) to index it.

Held as a `memref.alloc` whose `tir.const_data` attribute (a DenseElementsAttr) is its
contents: it is a buffer like any other for the printer, the schedule and region inference (a
local one inside a block), the interpreter fills it from the attribute, and `tir-to-affine`
turns it into a `memref.global` constant (docs/design.md).
"""

from typing import TYPE_CHECKING

import numpy as np
from mlir import ir
from mlir.dialects import memref

from tir_mlir.dialect.ops import CONST_DATA, CONST_UNDECLARED
from tir_mlir.dialect.buffers import SCOPE, scope_attr
from tir_mlir.dtypes import is_float, is_unsigned, mlir_type, numpy_dtype
from tir_mlir.frontend import ast as A
from tir_mlir.frontend.intrinsics import callee
from tir_mlir.frontend.values import Buffer, ConstData, Lit

if TYPE_CHECKING:  # (builder.py calls these with itself)
    from tir_mlir.frontend.builder import FuncBuilder


def allocate_const(fb: "FuncBuilder", name, call, pos):
    """`name = T.allocate_const(data, dtype, extents)`: the alloc, named `name` until a
    T.decl_buffer names the buffer over it."""
    if len(call.args) != 3 or call.kwargs:
        fb.fail(
            'T.allocate_const takes (data, dtype, extents): T.allocate_const([1, 2], "int32", [2])',
            call.pos,
        )
    data_node, dtype_node, ext_node = call.args
    dtype = fb.dtype_of(dtype_node)
    if dtype in ("bool", "bfloat16"):
        fb.fail(f"T.allocate_const of {dtype} is not supported", dtype_node.pos)
    if not isinstance(ext_node, (A.List_, A.Tuple_)) or not isinstance(
        data_node, (A.List_, A.Tuple_)
    ):
        fb.fail("T.allocate_const needs a list of values and a list of extents", call.pos)
    shape = [fb.static_index(x, "an extent")[0] for x in ext_node.items]
    values = []
    for x in data_node.items:
        v = fb.static(x, "a constant value")
        if not isinstance(v, Lit) or isinstance(v.value, bool):
            fb.fail("T.allocate_const values must be numbers", x.pos)
        if isinstance(v.value, float) and not is_float(dtype):
            fb.fail(f"float value {v.value} in a T.allocate_const of {dtype}", x.pos)
        values.append(v.value)
    if len(values) != int(np.prod(shape)):
        fb.fail(f"T.allocate_const has {len(values)} values for extents {shape}", data_node.pos)
    array = np.array(values, dtype=numpy_dtype(dtype)).reshape(shape)
    elem = mlir_type(dtype)
    attr = ir.DenseElementsAttr.get(
        array,  # pyright: ignore[reportArgumentType]  (an ndarray has the buffer protocol)
        signless=True,
        type=ir.RankedTensorType.get(shape, elem),
    )
    op = memref.AllocOp(ir.MemRefType.get(shape, elem), [], [], loc=fb.loc(pos))
    op.attributes["tir.name"] = ir.StringAttr.get(name)
    op.attributes[SCOPE] = scope_attr("global")
    op.attributes[CONST_DATA] = attr
    if is_unsigned(dtype):
        op.attributes["tir.dtype"] = ir.StringAttr.get(dtype)
    fb.env[name] = ConstData(name, op, tuple(shape), dtype)


def decl_buffer(fb: "FuncBuilder", name, call, pos):
    """`name = T.decl_buffer(shape, dtype, data=K)` (or `T.Buffer(...)`, which TVM does not
    declare: no inferred region of a block, printed back as T.Buffer) over a
    T.allocate_const."""
    data = call.kw("data")
    if data is None:
        fb.fail(
            "T.decl_buffer needs data=... (a T.allocate_const); use T.alloc_buffer to allocate",
            call.pos,
        )
    const = fb.env.get(data.id) if isinstance(data, A.Name) else None
    if not isinstance(const, ConstData):
        fb.fail("data= of T.decl_buffer must name a T.allocate_const", data.pos)
    rest = A.Call(call.func, call.args, [kw for kw in call.kwargs if kw[0] != "data"], call.pos)
    shape, dtype, _, index = fb.buffer_spec(rest, rest.args, "T.decl_buffer")
    if tuple(shape) != const.shape or dtype != const.dtype:
        fb.fail(
            f"T.decl_buffer {tuple(shape)} {dtype} over T.allocate_const {const.shape} "
            f"{const.dtype}: the shape and dtype must be the constant's",
            pos,
        )
    const.op.attributes["tir.name"] = ir.StringAttr.get(name)
    if callee(call) == "Buffer":  # TVM declares no buffer (see CONST_UNDECLARED)
        const.op.attributes[CONST_UNDECLARED] = ir.UnitAttr.get()
    fb.env[name] = Buffer(name, const.op.result, shape, dtype, index)
