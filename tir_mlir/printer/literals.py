"""Literals: typed constants (`T.float32(0.0)`, `T.int64(5)`) and attribute values."""
import math

import numpy as np
from mlir import ir

_F32_MAX = float(np.finfo(np.float32).max)
_FLOAT_PRECISION = {"float16": np.float16, "float32": np.float32}


def float_text(value: float, dtype: str) -> str:
    """`T.float32(0.1)`: the shortest decimal that reads back as the same value in `dtype`.

    TVM prints the double it stores with 17 digits; we hold the constant at its own precision,
    so the shortest round-trip form is what re-parses (in TVM too) to the same constant.
    """
    if math.isnan(value):
        return f'T.{dtype}("nan")'
    if math.isinf(value):
        return f'T.{dtype}("{"-" if value < 0 else ""}inf")'
    if dtype == "float32" and abs(value) == _F32_MAX:
        text = repr(float(value))     # T.max_value("float32"): TVM keeps the exact double
    elif dtype == "bfloat16":
        import ml_dtypes
        text = str(ml_dtypes.bfloat16(value))
    elif dtype == "float64":
        text = repr(float(value))
    else:
        text = str(_FLOAT_PRECISION[dtype](value))
    if not any(c in text for c in ".en"):
        text += ".0"
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
        return str(attr.value)
    if isinstance(attr, ir.FloatAttr):
        return repr(attr.value)
    if isinstance(attr, ir.StringAttr):
        return f'"{attr.value}"'
    if isinstance(attr, ir.ArrayAttr):
        return "[" + ", ".join(attr_text(a) for a in attr) + "]"
    if isinstance(attr, ir.DictAttr):
        return dict_text({n.name: n.attr for n in attr})
    raise TypeError(f"cannot print attribute {attr}")


def dict_text(d: dict) -> str:
    return "{" + ", ".join(f'"{k}": {attr_text(v)}' for k, v in d.items()) + "}"


def shape_text(shape) -> str:
    """(128, 128) / (8,) / () like a Python tuple."""
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(s) for s in shape) + ")"
