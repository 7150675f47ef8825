"""Buffers: memref values and their TensorIR attributes (docs/design.md).

A buffer is a function argument, whose attributes are its entry of the function's `arg_attrs`,
or an allocation, whose attributes are the op's own: `tir.name`, `tir.scope`, `tir.dtype` (for
unsigned dtypes), `tir.param`, `tir.index_dtype`, `tir.axis_separators` (i64 array),
`tir.offset_factor` (i64).
"""
from mlir import ir

from tir_mlir.dialect.ops import str_attr


def arg_attrs(func_op) -> list:
    """Per-argument attribute dictionaries of a func.func (empty dicts when absent)."""
    func_op = func_op.operation
    if "arg_attrs" not in func_op.attributes:
        ftype = ir.FunctionType(ir.TypeAttr(func_op.attributes["function_type"]).value)
        return [{} for _ in ftype.inputs]
    return [{a.name: a.attr for a in ir.DictAttr(d)}
            for d in ir.ArrayAttr(func_op.attributes["arg_attrs"])]


def buffer_attrs(buf: ir.Value):
    """The attributes of a buffer (a mapping; empty for a block argument of another op)."""
    if isinstance(buf.owner, ir.Block):
        owner = buf.owner.owner.operation
        if owner.name != "func.func":
            return {}
        return arg_attrs(owner)[ir.BlockArgument(buf).arg_number]
    return buf.owner.attributes


def buffer_name(buf: ir.Value, default=None):
    """The `tir.name` of a buffer, or `default`."""
    return str_attr(buffer_attrs(buf), "tir.name", default)


def set_buffer_attr(buf: ir.Value, name: str, value=None):
    """Set (or, with None, remove) attribute `name` of a buffer: in the function's `arg_attrs`
    for a parameter, on the op for an allocation."""
    if not isinstance(buf.owner, ir.Block):
        if value is None:
            if name in buf.owner.attributes:
                del buf.owner.attributes[name]
        else:
            buf.owner.attributes[name] = value
        return
    func_op = buf.owner.owner.operation
    dicts = arg_attrs(func_op)
    d = dicts[ir.BlockArgument(buf).arg_number]
    d.pop(name, None)
    if value is not None:
        d[name] = value
    func_op.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(x) for x in dicts])
