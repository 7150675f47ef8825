"""The table of `T.` intrinsics: a new intrinsic is one entry here (plus a printer entry).

Names are looked up after stripping the module prefix (`T.`, `tir.`, `ty.`, `tvm.script.tir.`),
so `T.exp`, `tir.exp` and `tvm.tir.exp` are one intrinsic: `callee(node)` is that name for a
call node.
"""

from typing import Optional

from tir_mlir.dtypes import DTYPES, is_dtype
from tir_mlir.frontend import ast as A

PREFIXES = ("tvm.script.tir.", "tvm.tir.", "T.", "tir.", "ty.")

# Float math with an upstream `math` op: T.exp(x) -> math.exp.
MATH_UNARY = {
    "exp": "math.exp",
    "exp2": "math.exp2",
    "expm1": "math.expm1",
    "log": "math.log",
    "log2": "math.log2",
    "log10": "math.log10",
    "log1p": "math.log1p",
    "sqrt": "math.sqrt",
    "rsqrt": "math.rsqrt",
    "cbrt": "math.cbrt",
    "tanh": "math.tanh",
    "sin": "math.sin",
    "cos": "math.cos",
    "tan": "math.tan",
    "sinh": "math.sinh",
    "cosh": "math.cosh",
    "asin": "math.asin",
    "acos": "math.acos",
    "atan": "math.atan",
    "asinh": "math.asinh",
    "acosh": "math.acosh",
    "atanh": "math.atanh",
    "erf": "math.erf",
    "floor": "math.floor",
    "ceil": "math.ceil",
    "trunc": "math.trunc",
    "round": "math.roundeven",
    "nearbyint": "math.roundeven",
    "fabs": "math.absf",
}
MATH_BINARY = {"pow": "math.powf", "atan2": "math.atan2", "copysign": "math.copysign"}
# Float predicates with an upstream op: result is bool.
MATH_PREDICATE = {"isnan": "math.isnan", "isinf": "math.isinf", "isfinite": "math.isfinite"}
# Intrinsics with no upstream op of the same meaning: `tir.call "name"`, expanded by the lowering.
CALL_UNARY = {"sigmoid", "exp10"}
CALL_BINARY = {"hypot", "fmod", "nextafter"}

# Everything else an expression may call, handled by ExprBuilder._call_<entry>.
EXPR_CALLS = {
    "max": "minmax",
    "min": "minmax",
    "abs": "abs",
    "floordiv": "divmod",
    "floormod": "divmod",
    "truncdiv": "divmod",
    "truncmod": "divmod",
    "ceildiv": "divmod",
    "Div": "divmod",
    "Mod": "divmod",
    "FloorDiv": "divmod",
    "FloorMod": "divmod",
    "Select": "select",
    "select": "select",
    "if_then_else": "if_then_else",
    "Cast": "cast",
    "And": "logic",
    "Or": "logic",
    "Not": "logic",
    "max_value": "limit",
    "min_value": "limit",
    "let": "let",
    "bitwise_and": "bitwise",
    "bitwise_or": "bitwise",
    "bitwise_xor": "bitwise",
    "shift_left": "bitwise",
    "shift_right": "bitwise",
    "bitwise_not": "bitwise",
    "likely": "likely",
    "Broadcast": "broadcast",
    "Ramp": "ramp",
    "reinterpret": "reinterpret",
    "vectorlow": "vector_half",
    "vectorhigh": "vector_half",
    "q_multiply_shift": "q_multiply_shift",
    "q_multiply_shift_per_axis": "q_multiply_shift",
    # calls to C functions and buffer pointers (frontend/extern_calls.py; address_of is lazy)
    "call_extern": "extern",
    "call_pure_extern": "extern",
    "call_llvm_intrin": "llvm_intrin",
    "call_llvm_pure_intrin": "llvm_intrin",
    "tvm_access_ptr": "access_ptr",
    "type_annotation": "type_annotation",
    "address_of": "address_of",
    "call_packed": "packed",
    "tvm_stack_make_array": "stack_make_array",
    "tvm_stack_make_shape": "stack_make_shape",
}
# TVM's builtins for GPU tensor cores and memory synchronisation, written on buffer pointers
# (`T.tvm_fill_fragment(C.data, 16, 16, 16, 0, i)`): kept, scheduled and printed as opaque calls
# (frontend/extern_calls.py), refused by the CPU lowering.
TVM_BUILTINS = {
    "tvm_fill_fragment",
    "tvm_load_matrix_sync",
    "tvm_store_matrix_sync",
    "tvm_mma_sync",
    "tvm_bmma_sync",
    "tvm_storage_sync",
    "tvm_warp_shuffle",
}
EXPR_CALLS.update({name: "builtin" for name in TVM_BUILTINS})

# Statement-level forms, handled by the statement builder; naming one inside an expression is
# an error that says so (rather than "unknown function").
STATEMENT_CALLS = {
    "prim_func",
    "ir_module",
    "macro",
    "Buffer",
    "handle",
    "match_buffer",
    "alloc_buffer",
    "func_attr",
    "grid",
    "serial",
    "parallel",
    "vectorized",
    "unroll",
    "thread_binding",
    "block",
    "init",
    "axis.spatial",
    "axis.reduce",
    "axis.opaque",
    "axis.scan",
    "axis.remap",
    "axis.S",
    "axis.R",
    "reads",
    "writes",
    "where",
    "block_attr",
    "evaluate",
    "reduce_axis",
    "range",
    "bind",
    "allocate_const",
    "decl_buffer",
    "launch_thread",
    "env_thread",
    "meta_var",
    "assume",
}


def strip_prefix(dotted: str) -> Optional[str]:
    """`T.axis.spatial` -> `axis.spatial`; None when it is not a TVMScript name."""
    for p in PREFIXES:
        if dotted.startswith(p):
            return dotted[len(p) :]
    return None


def callee(node) -> Optional[str]:
    """The intrinsic a call node calls (`T.axis.spatial(...)` -> `axis.spatial`; Python's
    `range(...)` -> `range`), None when `node` is no call of a TVMScript name."""
    if not isinstance(node, A.Call):
        return None
    d = A.dotted_name(node.func)
    if d is None:
        return None
    return "range" if d == "range" else strip_prefix(d)


def is_expr_intrinsic(name: str) -> bool:
    return (
        name in MATH_UNARY
        or name in MATH_BINARY
        or name in MATH_PREDICATE
        or name in CALL_UNARY
        or name in CALL_BINARY
        or name in EXPR_CALLS
        or is_dtype(name)
    )


def all_names():
    return (
        set(MATH_UNARY)
        | set(MATH_BINARY)
        | set(MATH_PREDICATE)
        | CALL_UNARY
        | CALL_BINARY
        | set(EXPR_CALLS)
        | set(DTYPES)
        | STATEMENT_CALLS
    )
