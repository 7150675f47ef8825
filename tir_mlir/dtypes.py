"""TensorIR dtype names <-> MLIR element types.

Unsigned dtypes map to signless integers (arith wants signless); where signedness matters the
op or buffer carries a `tir.dtype` attribute with the TensorIR name.
"""

from mlir import ir

DTYPES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
)
# Largest finite value of each float dtype: a literal beyond it is an error (as in TVM), not inf.
FLOAT_MAX = {
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
    "float32": 3.4028234663852886e38,
    "float64": 1.7976931348623157e308,
}


def split_lanes(dtype: str):
    """("float32", 4) for the vector dtype "float32x4", (dtype, 1) for a scalar one."""
    base, sep, lanes = dtype.rpartition("x")
    if sep and base in DTYPES and lanes.isdigit() and int(lanes) >= 1:
        return base, int(lanes)
    return dtype, 1


def is_dtype(name) -> bool:
    """A scalar dtype, or a vector one (`int8x4`, `float32x16`)."""
    return isinstance(name, str) and split_lanes(name)[0] in DTYPES


def mlir_type(dtype: str) -> ir.Type:
    """MLIR element type of a TensorIR dtype (needs an active context); `float32x4` is
    `vector<4xf32>`."""
    base, lanes = split_lanes(dtype)
    if base != dtype:
        return ir.VectorType.get([lanes], mlir_type(base))
    if dtype == "bool":
        return ir.IntegerType.get_signless(1)
    if dtype.startswith("int") or dtype.startswith("uint"):
        return ir.IntegerType.get_signless(int(dtype.lstrip("uint")))
    return {
        "float16": ir.F16Type.get,
        "bfloat16": ir.BF16Type.get,
        "float32": ir.F32Type.get,
        "float64": ir.F64Type.get,
    }[dtype]()


def dtype_of(t: ir.Type, unsigned: bool = False) -> str:
    """TensorIR dtype of an MLIR element type; `index` reads as int32 (TIR's loop var type)."""
    if isinstance(t, ir.IndexType):
        return "int32"
    if isinstance(t, ir.VectorType):
        return f"{dtype_of(t.element_type, unsigned)}x{t.shape[0]}"
    if str(t) == "!llvm.ptr":
        return "handle"
    if isinstance(t, ir.IntegerType):
        if t.width == 1:
            return "bool"
        return f"{'u' if unsigned else ''}int{t.width}"
    return {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}[str(t)]


def is_float(dtype: str) -> bool:
    return dtype.startswith("float") or dtype == "bfloat16"


def is_unsigned(dtype: str) -> bool:
    return dtype.startswith("uint")


def numpy_dtype(dtype: str):
    import numpy as np

    if dtype == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)
