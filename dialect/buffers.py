"""Buffers: memref values and their TensorIR attributes (docs/design.md).

A buffer is a function argument, whose attributes are its entry of the function's `arg_attrs`,
or an allocation, whose attributes are the op's own: `tir.name`, `tir.dtype` (for unsigned
dtypes), `tir.param` (strings), `tir.index_dtype` (tir_mlir/ir/index_dtypes.py), and the typed
ones (dialect/attrs.py), read and written through the functions below:

    tir.scope            #tir.scope<"shared">        (absent: global)
    tir.axis_separators  #tir.axis_separators<[1]>
    tir.offset_factor    #tir.offset_factor<16 : i64>
    tir.align            #tir.align<64 : i64>        (a T.match_buffer's align=)
"""

from typing import Optional, Sequence, overload

from mlir import ir

from tir_mlir.dialect import attrs as tir_attrs
from tir_mlir.dialect.ops import str_attr

SCOPE = "tir.scope"
AXIS_SEPARATORS = "tir.axis_separators"
OFFSET_FACTOR = "tir.offset_factor"
ALIGN = "tir.align"


def scope_attr(scope: str) -> ir.Attribute:
    return tir_attrs.string("scope", scope)


def scope_of(attrs, default: str = "global") -> str:
    """The storage scope in buffer attributes `attrs` (op attributes or a dict)."""
    return tir_attrs.string_value(attrs[SCOPE], "scope") if SCOPE in attrs else default


def axis_separators_attr(seps: Sequence[int]) -> Optional[ir.Attribute]:
    """The attribute of `seps`; None (no attribute) for none."""
    return tir_attrs.axis_separators(seps) if seps else None


def axis_separators_of(attrs) -> tuple:
    return (
        tir_attrs.axis_separators_value(attrs[AXIS_SEPARATORS]) if AXIS_SEPARATORS in attrs else ()
    )


def int_attr(key: str, value: int) -> ir.Attribute:
    """`tir.offset_factor` / `tir.align` of `value`."""
    return tir_attrs.make(
        key[len("tir.") :], ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
    )


@overload
def int_of(attrs, key: str, default: None = None) -> Optional[int]: ...
@overload
def int_of(attrs, key: str, default: int) -> int: ...
def int_of(attrs, key: str, default: Optional[int] = None) -> Optional[int]:
    """The value of `tir.offset_factor` / `tir.align` in `attrs`, or `default`."""
    if key not in attrs:
        return default
    return ir.IntegerAttr(tir_attrs.param(attrs[key], key[len("tir.") :])).value


def arg_attrs(func_op) -> list:
    """Per-argument attribute dictionaries of a func.func (empty dicts when absent)."""
    func_op = func_op.operation
    if "arg_attrs" not in func_op.attributes:
        ftype = ir.FunctionType(ir.TypeAttr(func_op.attributes["function_type"]).value)
        return [{} for _ in ftype.inputs]
    return [
        {a.name: a.attr for a in ir.DictAttr(d)}
        for d in ir.ArrayAttr(func_op.attributes["arg_attrs"])
    ]


def buffer_attrs(buf: ir.Value):
    """The attributes of a buffer (a mapping; empty for a block argument of another op)."""
    if isinstance(buf.owner, ir.Block):
        owner = buf.owner.owner.operation
        if owner.name != "func.func":
            return {}
        return arg_attrs(owner)[ir.BlockArgument(buf).arg_number]
    return buf.owner.attributes


@overload
def buffer_name(buf: ir.Value, default: None = None) -> Optional[str]: ...
@overload
def buffer_name(buf: ir.Value, default: str) -> str: ...
def buffer_name(buf: ir.Value, default: Optional[str] = None) -> Optional[str]:
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
