"""Literals: typed constants (`T.float32(0.0)`, `T.int64(5)`) and attribute values."""

import math

from mlir import ir


def float_text(value: float, dtype: str) -> str:
    """`T.float32(0.5)` the way TVM prints a FloatImm's double: `%.17g`, and `%.1f` when integral.

    `value` is the double TVM would hold: the literal's own double (`tir.f64`) when the constant
    came from source text, else the constant's exact value.
    """
    if math.isnan(value):
        return f'T.{dtype}("nan")'
    if math.isinf(value):
        return f'T.{dtype}("{"-" if value < 0 else ""}inf")'
    text = f"{value:.1f}" if value == math.floor(value) else f"{value:.17g}"
    return f"T.{dtype}({text})"


def int_text(value: int, dtype: str) -> str:
    """int32 literals print bare (`3`), bools as `T.bool(True)`, other widths `T.int64(5)`."""
    if dtype == "bool":
        return f"T.bool({bool(value)})"
    if dtype == "int32":
        return str(value)
    if dtype.startswith("uint") and value < 0:
        value += 1 << int(dtype[4:])
    return f"T.{dtype}({value})"


def attr_text(attr: ir.Attribute) -> str:
    """A func_attr / block_attr / loop annotation value as a Python literal."""
    if isinstance(attr, ir.BoolAttr):
        return str(attr.value)
    if isinstance(attr, ir.IntegerAttr):
        if isinstance(attr.type, ir.IntegerType) and attr.type.width == 1:
            return str(bool(attr.value))
        if isinstance(attr.type, ir.IntegerType) and attr.type.is_signed:
            # an IntImm (T.int64(3); T.int32(0) too: TVM's parser reads a bare 0 in an
            # annotation as another kind of integer)
            return f"T.int{attr.type.width}({attr.value})"
        return str(attr.value)
    if isinstance(attr, ir.FloatAttr):
        if isinstance(attr.type, ir.F64Type):  # a Python float: TVM prints 17 digits
            text = "%.17g" % attr.value
            return text if any(c in text for c in ".en") else text + ".0"
        return repr(attr.value)
    if isinstance(attr, ir.StringAttr):
        return string_text(attr.value)
    if isinstance(attr, ir.ArrayAttr):
        return "[" + ", ".join(attr_text(a) for a in attr) + "]"
    if isinstance(attr, ir.DictAttr):
        return dict_text({n.name: n.attr for n in attr})
    raise TypeError(f"cannot print attribute {attr}")


def string_text(s: str) -> str:
    """A double-quoted Python string literal that reads back as `s`."""
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif c.isprintable() or c == " ":
            out.append(c)
        else:
            out.append(
                {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(c)
                or (
                    f"\\x{ord(c):02x}"
                    if ord(c) < 0x100
                    else f"\\u{ord(c):04x}"
                    if ord(c) < 0x10000
                    else f"\\U{ord(c):08x}"
                )
            )
    return '"' + "".join(out) + '"'


def dict_text(d: dict) -> str:
    return "{" + ", ".join(f"{string_text(k)}: {attr_text(v)}" for k, v in d.items()) + "}"


def shape_text(shape, dim_dtypes=None) -> str:
    """(128, 128) / (8,) / () like a Python tuple; `(T.int64(8),)` for int64 dimensions."""
    dims = [int_text(s, d) for s, d in zip(shape, dim_dtypes or ["int32"] * len(shape))]
    if len(dims) == 1:
        return f"({dims[0]},)"
    return "(" + ", ".join(dims) + ")"
