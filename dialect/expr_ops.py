"""The upstream ops a `tir` expression is made of, and the TVMScript each stands for.

The printer spells them; importers of other MLIR (linalg) check a body against them: one table
for both, at the dialect level.
"""

# Binary arithmetic written as a Python operator.
BINARY = {
    "arith.addi": "+",
    "arith.addf": "+",
    "arith.subi": "-",
    "arith.subf": "-",
    "arith.muli": "*",
    "arith.mulf": "*",
    "arith.divf": "/",
    "arith.floordivsi": "//",
}
# Ops written as a `T.` call of another name.
CALLS = {
    "arith.maximumf": "max",
    "arith.maxnumf": "max",
    "arith.maxsi": "max",
    "arith.maxui": "max",
    "arith.minimumf": "min",
    "arith.minnumf": "min",
    "arith.minsi": "min",
    "arith.minui": "min",
    "arith.divsi": "Div",
    "arith.divui": "Div",
    "arith.shli": "shift_left",
    "arith.shrsi": "shift_right",
    "arith.shrui": "shift_right",
    "arith.remsi": "truncmod",
    "arith.remui": "truncmod",
    "arith.select": "Select",
    "math.absf": "fabs",
    "math.absi": "abs",
    "math.powf": "pow",
    "math.roundeven": "round",
}
# `math.<name>` ops written `T.<name>(...)`.
MATH_SAME = (
    "exp",
    "exp2",
    "log",
    "log2",
    "log10",
    "log1p",
    "expm1",
    "sqrt",
    "rsqrt",
    "tanh",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "asin",
    "acos",
    "atan",
    "atan2",
    "erf",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fma",
    "copysign",
)
# Conversions, written `T.Cast(dtype, x)` (or folded into an index).
CASTS = (
    "arith.sitofp",
    "arith.uitofp",
    "arith.fptosi",
    "arith.fptoui",
    "arith.extf",
    "arith.truncf",
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
    "arith.index_cast",
    "arith.index_castui",
    "arith.bitcast",
)
# `tir.call "q_multiply_shift_per_axis"`: its two constant flags, as bool attributes (a
# tir.call's operands share one type), printed after the operands in this order.
FIXED_POINT_FLAGS = ("is_lshift_required", "is_rshift_required")
