"""Reference interpreter: runs a `tir`-dialect function on numpy arrays.

It reads the same MLIR the lowering reads (blocks with their bindings, predicate and init;
affine loops; arith/math/memref/scf ops) and follows TensorIR's semantics directly, so
`tir-mlir run --check` and the tests can compare compiled code against it.

For speed the function is translated once into Python source, one line per op, and run with
`exec`: loops become `for` loops, `scf.if`/`affine.if`/`T.where` become `if` statements, and
the per-point work is plain Python arithmetic (no re-dispatch on op names or attributes).
`python_source(mod, name)` shows the translation. Values are Python scalars:
- integers are exact ints wrapped to their width after every op that can overflow (i1: bool;
  `index`: unbounded); unsigned buffers hold signless (signed) values, as in the IR, and
  unsigned ops mask their operands;
- floats are Python floats holding a value of their type: a float32 `+ - * /` is computed in
  double and rounded once to float32, which gives the correctly rounded float32 result (double
  has more than 2p+2 bits), the same as numpy's float32 arithmetic; math functions run numpy on
  scalars of the op's type;
- buffers are flat Python lists, copied from and back into the caller's arrays; every access is
  bounds-checked per axis (OutOfBoundsError names the buffer, index, axis and source location),
  except on axes whose index is in bounds by construction (interval arithmetic over constant
  loop ranges and affine bindings).

    interpret(mod, "mm_relu", a, b, c)     # writes into c like the compiled function
"""

import linecache
import math as pymath
import re
from array import array
from typing import Tuple

import numpy as np
from mlir import ir

from tir_mlir.ir.affine_exprs import expr_bounds
from tir_mlir.context import MLIR_LOCK, get_context
from tir_mlir.dialect.ops import CONST_DATA, Block, Loop, integer_set
from tir_mlir.errors import AllocationError, OutOfBoundsError, SourceLoc, TIRError
from tir_mlir.ir.ir_walk import walk
from tir_mlir.passes.lowering.common import source_loc
from tir_mlir.runtime.signature import check_args, signatures


def _call_packed(name, *args):
    """A `T.call_packed` in the interpreter: (list, shape, dtype) buffers, (value,) scalars."""
    from tir_mlir.dtypes import numpy_dtype
    from tir_mlir.errors import RuntimeCallError
    from tir_mlir.runtime.packed import get_global_func

    fn = get_global_func(name, allow_missing=True)
    if fn is None:
        raise RuntimeCallError(
            f"T.call_packed: no function is registered as {name!r} (tir_mlir.register_func)"
        )
    arrays = [
        np.array(a[0], numpy_dtype(a[2])).reshape(a[1]) if len(a) == 3 else None for a in args
    ]
    result = fn(*[x if x is not None else a[0] for x, a in zip(arrays, args)])
    for x, a in zip(arrays, args):
        if x is not None:
            a[0][:] = x.ravel().tolist()
    return int(result) if type(result) in (int, bool) else 0


_MAX_LOOP_DEPTH = 12  # deeper nests go to a separate function (CPython allows 20 nested loops)


def interpret(mod, func_name, *arrays):
    """Run function `func_name` of `mod` on `arrays` (one per buffer parameter, written in
    place)."""
    module = mod.module if hasattr(mod, "module") else mod
    with MLIR_LOCK, get_context():
        check_args(func_name, signatures(module)[func_name], arrays)
        source, globals_ = _translate(module, func_name)
    filename = f"<tir-interpreter {func_name}>"  # in linecache: tracebacks show the line
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), globals_)
    lists = [_to_list(a) for a in arrays]
    try:
        with np.errstate(all="ignore"):
            globals_["main"](*lists)
    except ZeroDivisionError:
        raise TIRError(
            f"{func_name}: integer division by zero at run time (the compiled code "
            f"divides by 1 instead; TVM leaves it undefined)"
        ) from None
    except MemoryError:
        raise AllocationError(
            f"{func_name}: out of memory in the reference interpreter (it "
            f"holds every buffer as a Python list)"
        ) from None
    except (OverflowError, ValueError) as e:  # e.g. a float inf/nan cast to an integer
        raise TIRError(f"{func_name}: {e} at run time (undefined in TVM)") from None
    finally:  # an error mid-run leaves the partial writes visible, as the compiled code does
        for a, values in zip(arrays, lists):
            _write_back(a, values)


def python_source(mod, func_name) -> str:
    """The Python source `interpret` runs for `func_name` (for debugging)."""
    module = mod.module if hasattr(mod, "module") else mod
    with get_context():
        return _translate(module, func_name)[0]


def _to_list(a: np.ndarray) -> list:
    if a.dtype.kind in "iub":
        return (a.view(_signless(a.dtype)) if a.dtype.kind == "u" else a).ravel().tolist()
    return a.astype(np.float64).ravel().tolist()


def _write_back(a: np.ndarray, values: list):
    flat = (a.view(_signless(a.dtype)) if a.dtype.kind == "u" else a).reshape(-1)
    flat[:] = np.array(values, dtype=flat.dtype if a.dtype.kind in "iub" else np.float64)


def _signless(dtype):
    return np.dtype(dtype.str.replace("u", "i"))


def _translate(module, func_name) -> Tuple[str, dict]:
    f = next(
        op.operation
        for op in module.body.operations
        if op.operation.name == "func.func"
        and ir.StringAttr(op.operation.attributes["sym_name"]).value == func_name
    )
    return _Translator().function(f)


# --- scalar semantics ---------------------------------------------------------------------------
def _scalar_type(t: ir.Type):
    """numpy scalar type of an MLIR float type."""
    if str(t) == "bf16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return {"f16": np.float16, "f32": np.float32, "f64": np.float64}[str(t)]


_F32 = array("f", [0.0])  # storing a double into a float array rounds it like numpy does


def _round_f32(x):
    _F32[0] = x
    return _F32[0]


def _rounding(t: ir.Type):
    """Python float -> nearest value of float type t (None for f64: no rounding)."""
    if str(t) == "f64":
        return None
    if str(t) == "f32":
        return _round_f32
    scalar = _scalar_type(t)
    return lambda x: float(scalar(x))


def _typed(fn, t: ir.Type, arity: int):
    """fn run by numpy on scalars of type t (math functions round like numpy in that type)."""
    scalar = _scalar_type(t)
    if arity == 1:
        return lambda x: float(fn(scalar(x)))
    return lambda a, b: float(fn(scalar(a), scalar(b)))


def _div0(a, b):
    """a / 0.0 with IEEE results (inf, nan) where Python would raise."""
    return float(np.float64(a) / np.float64(b))


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _trunc_rem(a, b):
    return a - _trunc_div(a, b) * b


_FLOAT_BIN = {
    "arith.addf": "{a} + {b}",
    "arith.subf": "{a} - {b}",
    "arith.mulf": "{a} * {b}",
    "arith.divf": "({a} / {b} if {b} else _div0({a}, {b}))",
    # T.max/T.min as TVM computes them (passes/lowering/float_min_max.py)
    "arith.maximumf": "({a} if {a} > {b} else {b})",
    "arith.minimumf": "({a} if {a} < {b} else {b})",
}
_FLOAT_NP_BIN = {
    "arith.remf": np.fmod,
    "arith.maxnumf": np.fmax,
    "arith.minnumf": np.fmin,
    "math.powf": np.power,
    "math.atan2": np.arctan2,
    "math.copysign": np.copysign,
}
_FLOAT_NP_UN = {
    "math.exp": np.exp,
    "math.exp2": np.exp2,
    "math.log": np.log,
    "math.log2": np.log2,
    "math.log10": np.log10,
    "math.log1p": np.log1p,
    "math.expm1": np.expm1,
    "math.sqrt": np.sqrt,
    "math.rsqrt": lambda x: 1 / np.sqrt(x),
    "math.tanh": np.tanh,
    "math.sin": np.sin,
    "math.cos": np.cos,
    "math.tan": np.tan,
    "math.atan": np.arctan,
    "math.asin": np.arcsin,
    "math.acos": np.arccos,
    "math.sinh": np.sinh,
    "math.cosh": np.cosh,
    "math.absf": np.abs,
    "math.floor": np.floor,
    "math.ceil": np.ceil,
    "math.round": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
    "math.roundeven": np.rint,
    "math.trunc": np.trunc,
    "math.erf": lambda x: pymath.erf(float(x)),
}
# Integer ops on exact ints ({a}, {b}; unsigned ones on masked operands); the result is wrapped.
_INT_BIN = {
    "arith.addi": "{a} + {b}",
    "arith.subi": "{a} - {b}",
    "arith.muli": "{a} * {b}",
    "arith.divsi": "_trunc_div({a}, {b})",
    "arith.remsi": "_trunc_rem({a}, {b})",
    "arith.floordivsi": "{a} // {b}",
    "arith.ceildivsi": "-(-{a} // {b})",
    "arith.maxsi": "max({a}, {b})",
    "arith.minsi": "min({a}, {b})",
    "arith.andi": "{a} & {b}",
    "arith.ori": "{a} | {b}",
    "arith.xori": "{a} ^ {b}",
    "arith.shli": "{a} << {b}",
    "arith.shrsi": "{a} >> {b}",
}
# Not wrapped: of in-range operands these give an in-range result (a bool for bools).
_IN_RANGE = {"arith.maxsi", "arith.minsi", "arith.andi", "arith.ori", "arith.xori", "arith.shrsi"}
_UINT_BIN = {
    "arith.divui": "{a} // {b}",
    "arith.remui": "{a} % {b}",
    "arith.maxui": "max({a}, {b})",
    "arith.minui": "min({a}, {b})",
    "arith.shrui": "{a} >> {b}",
}
# Bounds of index arithmetic from its operands' inclusive (min, max).
_INDEX_BOUNDS = {
    "arith.addi": lambda a, b: (a[0] + b[0], a[1] + b[1]),
    "arith.subi": lambda a, b: (a[0] - b[1], a[1] - b[0]),
    "arith.muli": lambda a, b: (min(x * y for x in a for y in b), max(x * y for x in a for y in b)),
}
_CMPI = ["==", "!=", "<", "<=", ">", ">="]  # eq ne slt sle sgt sge, then ult ule ugt uge
# arith.cmpf predicates as Python float comparisons (these are ordered: False on NaN).
_CMPF = [
    "False",
    "{a} == {b}",
    "{a} > {b}",
    "{a} >= {b}",
    "{a} < {b}",
    "{a} <= {b}",
    "({a} < {b} or {a} > {b})",
    "({a} == {a} and {b} == {b})",
    "not ({a} < {b} or {a} > {b})",
    "not {a} <= {b}",
    "not {a} < {b}",
    "not {a} >= {b}",
    "not {a} > {b}",
    "{a} != {b}",
    "({a} != {a} or {b} != {b})",
    "True",
]
_TERMINATORS = ("gpu.yield", "scf.yield", "affine.yield", "func.return")


def _elem(t: ir.Type) -> ir.Type:
    """The element type of a vector type, else t."""
    return t.element_type if isinstance(t, ir.VectorType) else t


def _lanewise(op) -> bool:
    """Ops the interpreter runs lane by lane on vector values."""
    if op.name == "tir.call":
        return ir.StringAttr(op.attributes["callee"]).value != "ramp"
    return op.name.startswith(("arith.", "math."))


def _is_int(t: ir.Type) -> bool:
    return isinstance(t, (ir.IntegerType, ir.IndexType))


def _width(t: ir.Type) -> int:
    """The bit width of an integer type (IntegerType's view; the stubs type t as any Type)."""
    return ir.IntegerType(t).width


def _mask(t: ir.Type):
    return None if isinstance(t, ir.IndexType) else (1 << _width(t)) - 1


def _wrap_value(v: int, t: ir.Type):
    """Exact integer v as a value of type t (two's complement wrap; i1: bool)."""
    if isinstance(t, ir.IndexType):
        return v
    if _width(t) == 1:
        return bool(v & 1)
    half = 1 << (_width(t) - 1)
    return ((v + half) & ((1 << _width(t)) - 1)) - half


def _wrap(expr: str, t: ir.Type) -> str:
    """Python expression wrapping integer expression `expr` to type t."""
    if isinstance(t, ir.IndexType):
        return expr
    if _width(t) == 1:
        return f"bool(({expr}) & 1)"
    half = 1 << (_width(t) - 1)
    return f"((({expr}) + {half}) & {(1 << _width(t)) - 1}) - {half}"


def _unsigned(name: str, t: ir.Type) -> str:
    m = _mask(t)
    return name if m is None else f"({name} & {m})"


def _affine(e, dims, syms) -> str:
    """Python expression of an affine expression (floor division and modulo, like Python's)."""
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineConstantExpr):
        return str(e.value) if e.value >= 0 else f"({e.value})"
    if isinstance(e, ir.AffineDimExpr):
        return dims[e.position]
    if isinstance(e, ir.AffineSymbolExpr):
        return syms[e.position]
    a, b = _affine(e.lhs, dims, syms), _affine(e.rhs, dims, syms)
    if isinstance(e, ir.AffineCeilDivExpr):
        return f"(-((-{a}) // {b}))"
    op = {
        ir.AffineAddExpr: "+",
        ir.AffineMulExpr: "*",
        ir.AffineModExpr: "%",
        ir.AffineFloorDivExpr: "//",
    }[type(e)]
    return f"({a} {op} {b})"


def _set_test(iset, names) -> str:
    """Python condition of an integer set over values `names` (dims, then symbols)."""
    dims, syms = names[: iset.n_dims], names[iset.n_dims :]
    tests = [
        f"{_affine(c.expr, dims, syms)} {'==' if c.is_eq else '>='} 0" for c in iset.constraints
    ]
    return " and ".join(tests) or "True"


def _literal(v, globals_) -> str:
    if isinstance(v, float) and not pymath.isfinite(v):
        name = f"_{'nan' if v != v else 'inf' if v > 0 else 'neg_inf'}"
        globals_[name] = v
        return name
    return f"({v!r})" if repr(v).startswith("-") else repr(v)


# --- translation --------------------------------------------------------------------------------
class _Translator:
    """Writes Python source for one function: each SSA value gets a Python local (or, for
    constants, a literal), each op one line."""

    def __init__(self):
        self.names = {}  # ir.Value -> Python expression (variable name or literal)
        self.variables = set()
        self.globals = {
            "_div0": _div0,
            "_trunc_div": _trunc_div,
            "_trunc_rem": _trunc_rem,
            "_oob": self._oob,
        }
        self.sites = []  # bounds-check sites: (kind, buffer, shape, loc)
        self.buffers = {}  # Python name of a buffer -> its TensorIR name
        self.views = {}  # T.match_buffer view (memref value) -> (list, offset, strides)
        self.lanes = 0  # while translating a vector op lane by lane: its lanes
        self.ranges = {}  # Python name of an index variable -> inclusive (min, max)
        self.functions = []  # finished functions (lists of lines)
        self.lines, self.depth, self.loop_depth = [], 0, 0

    # --- output -------------------------------------------------------------------------------
    def emit(self, line: str):
        self.lines.append("    " * self.depth + line)

    def new_name(self, value, hint: str = "v") -> str:
        base = re.sub(r"[^0-9A-Za-z_]", "_", hint)
        base = base if base[:1].isalpha() else "v" + base
        name = f"{base}_{len(self.variables)}"
        self.variables.add(name)
        self.names[value] = name
        return name

    def helper(self, name: str, fn) -> str:
        name = re.sub(r"\W", "_", name)  # built from type names: keep the source inert
        self.globals.setdefault(name, fn)
        return name

    def round(self, expr: str, t: ir.Type) -> str:
        fn = _rounding(t)
        return expr if fn is None else f"{self.helper('_round_' + str(t), fn)}({expr})"

    def function(self, f):
        entry = f.regions[0].blocks[0]
        arg_attrs = (
            list(ir.ArrayAttr(f.attributes["arg_attrs"]))
            if "arg_attrs" in f.attributes
            else [None] * len(entry.arguments)
        )
        params = []
        for pos, (arg, d) in enumerate(zip(entry.arguments, arg_attrs)):
            d = ir.DictAttr(d) if d is not None else None
            hint = (
                ir.StringAttr(d["tir.name"]).value
                if d is not None and "tir.name" in d
                else f"arg{pos}"
            )
            params.append(self.new_name(arg, hint))
            self.buffers[params[-1]] = hint
        self.body("main", params, lambda: self.block(entry))
        return "\n".join(line for fn in self.functions for line in fn) + "\n", self.globals

    def body(self, fname, params, write):
        """Write function `fname(params)` whose body `write()` emits."""
        saved = self.lines, self.depth, self.loop_depth
        self.lines, self.depth, self.loop_depth = [], 0, 0
        self.emit(f"def {fname}({', '.join(params)}):")
        self.depth = 1
        write()
        self.emit("return")
        self.functions.append(self.lines)
        self.lines, self.depth, self.loop_depth = saved

    def block(self, block: ir.Block) -> list:
        """Emit a block's ops; returns the names its terminator yields."""
        yielded = []
        for op in block.operations:
            op = op.operation
            if op.name in _TERMINATORS:
                yielded = [self.names[v] for v in op.operands]
            else:
                self.op(op)
        return yielded

    def indented(self, block: ir.Block, results=()):
        """Emit a block one level deeper, assigning what it yields to `results`."""
        self.depth += 1
        start = len(self.lines)
        for r, v in zip(results, self.block(block)):
            self.emit(f"{r} = {v}")
        if len(self.lines) == start:
            self.emit("pass")
        self.depth -= 1

    def op(self, op):
        ins = [self.names[v] for v in op.operands]
        t = op.results[0].type if len(op.results) else None
        if isinstance(t, ir.VectorType) and _lanewise(op):
            # a vector op lane by lane: `v = [<scalar expr of a[_k], b[_k]> for _k in ...]`
            self.lanes = t.shape[0]
            try:
                return self.scalar_op(
                    op,
                    [
                        f"{x}[_k]" if isinstance(v.type, ir.VectorType) else x
                        for x, v in zip(ins, op.operands)
                    ],
                    t.element_type,
                )
            finally:
                self.lanes = 0
        return self.scalar_op(op, ins, t)

    def scalar_op(self, op, ins, t):
        handler = getattr(self, "_" + op.name.replace(".", "_"), None)
        if handler is not None:
            return handler(op, ins, t)
        if op.name in _FLOAT_BIN:
            a, b = ins
            return self.assign(op, self.round(_FLOAT_BIN[op.name].format(a=a, b=b), t))
        numpy_fn = _FLOAT_NP_BIN.get(op.name) or _FLOAT_NP_UN.get(op.name)
        if numpy_fn is not None:
            fn = self.helper(f"_{op.name.replace('.', '_')}_{t}", _typed(numpy_fn, t, len(ins)))
            return self.assign(op, f"{fn}({', '.join(ins)})")
        if op.name in _INT_BIN:
            a, b = ins
            expr = _INT_BIN[op.name].format(a=a, b=b)
            self.assign(op, expr if op.name in _IN_RANGE else _wrap(expr, t))
            ra, rb = self.range_of(a), self.range_of(b)
            if isinstance(t, ir.IndexType) and op.name in _INDEX_BOUNDS and ra and rb:
                self.ranges[self.names[op.results[0]]] = _INDEX_BOUNDS[op.name](ra, rb)
            return
        if op.name in _UINT_BIN:
            a, b = (_unsigned(x, t) for x in ins)
            return self.assign(op, _wrap(_UINT_BIN[op.name].format(a=a, b=b), t))
        raise TIRError(f"interpreter: unsupported op '{op.name}'", source_loc(op))

    def assign(self, op, expr: str, hint="v"):
        if self.lanes:
            expr = f"[{expr} for _k in range({self.lanes})]"
        self.emit(f"{self.new_name(op.results[0], hint)} = {expr}")

    def alias(self, op, expr: str):
        """The op's result is `expr` itself (a literal or another value's name)."""
        if self.lanes:
            return self.assign(op, expr)
        self.names[op.results[0]] = expr

    # --- vectors (T.Broadcast, T.Ramp, A[b:b + n]) -------------------------------------------
    def _vector_broadcast(self, op, ins, t):
        self.assign(op, f"[{ins[0]}] * {t.shape[0]}")

    def _vector_load(self, op, ins, t):
        self.assign(op, self.element(op, op.operands[0], ins[0], ins[1:], t.shape[0]))

    def _vector_store(self, op, ins, t):
        lanes = ir.VectorType(op.operands[0].type).shape[0]
        self.emit(f"{self.element(op, op.operands[1], ins[1], ins[2:], lanes)} = {ins[0]}")

    # --- memory -------------------------------------------------------------------------------
    def _memref_alloc(self, op, ins, t):
        mt = ir.MemRefType(t)
        et = _elem(mt.element_type)
        zero = (
            "0.0"
            if not _is_int(et)
            else "False"
            if isinstance(et, ir.IntegerType) and et.width == 1
            else "0"
        )
        if isinstance(mt.element_type, ir.VectorType):  # a buffer of float32x4...
            zero = f"[{zero}] * {mt.element_type.shape[0]}"
        hint = (
            ir.StringAttr(op.attributes["tir.name"]).value if "tir.name" in op.attributes else "buf"
        )
        if CONST_DATA in op.attributes:  # T.allocate_const: its values
            values = np.array(ir.DenseElementsAttr(op.attributes[CONST_DATA])).reshape(-1)
            if "tir.dtype" in op.attributes:
                values = values.astype(ir.StringAttr(op.attributes["tir.dtype"]).value)
            self.assign(op, repr(values.tolist()), hint)
        else:
            self.assign(op, f"[{zero}] * {int(np.prod(mt.shape))}", hint)
        self.buffers[self.names[op.results[0]]] = hint

    _memref_alloca = _memref_alloc

    def _memref_subview(self, op, ins, t):
        """A T.match_buffer view: the source's list, a flat offset and the kept strides."""
        src = op.operands[0]
        shape = list(ir.MemRefType(src.type).shape)
        base, offset, strides = self.views.get(
            src, (ins[0], None, [int(np.prod(shape[k + 1 :])) for k in range(len(shape))])
        )
        terms = ([offset] if offset else []) + [
            o if st == 1 else f"{o} * {st}" for o, st in zip(ins[1:], strides)
        ]
        self.assign(op, " + ".join(terms) or "0", "offset")
        rank = len(ir.MemRefType(t).shape)
        self.views[op.results[0]] = (
            base,
            self.names[op.results[0]],
            strides[len(strides) - rank :],
        )
        self.buffers[self.names[op.results[0]]] = (
            ir.StringAttr(op.attributes["tir.name"]).value
            if "tir.name" in op.attributes
            else self.buffers.get(base, "buf")
        )

    def _memref_dealloc(self, op, ins, t):
        pass

    def _tir_evaluate(self, op, ins, t):
        pass

    def _tir_extern(self, op, ins, t):
        """`T.call_packed`: the registered function, on arrays made from the lists (whole
        buffers only; written back after the call). Other C calls cannot be interpreted."""
        from tir_mlir.dialect.ops import extern_args, extern_callee
        from tir_mlir.dtypes import dtype_of

        if extern_callee(op) != "call_packed" or any(v in self.views for v in extern_args(op)):
            raise TIRError(
                "interpreter: calls to C functions (T.call_extern) and buffer "
                "pointers are not interpreted (nor T.match_buffer views handed to "
                "T.call_packed); build the module with extern_libs=[...] and run "
                "it",
                source_loc(op),
            )
        parts = []
        for v in extern_args(op):
            if isinstance(v.type, ir.MemRefType):
                mt = ir.MemRefType(v.type)
                parts.append(
                    f"({self.names[v]}, {tuple(mt.shape)!r}, {dtype_of(mt.element_type)!r})"
                )
            else:
                parts.append(f"({self.names[v]},)")
        symbol = ir.StringAttr(op.attributes["symbol"]).value
        fn = self.helper("_call_packed", _call_packed)
        self.assign(op, f"{fn}({symbol!r}, {', '.join(parts)})")

    def range_of(self, name: str):
        """Inclusive (min, max) of an index value, when known before running."""
        if re.fullmatch(r"\(?-?\d+\)?", name):
            return (int(name.strip("()")),) * 2
        return self.ranges.get(name)

    def element(self, op, buf_value, buf: str, idx: list, lanes=1) -> str:
        """`buf[flat index]` (`buf[flat:flat + lanes]` for a vector access along the last
        axis), after a bounds check of each axis whose index is not known to be in bounds
        (from loop ranges and affine bindings)."""
        shape = list(ir.MemRefType(buf_value.type).shape)
        bound = shape[:-1] + [n - lanes + 1 for n in shape[-1:]]  # the last lane too
        ranges = [self.range_of(i) for i in idx]
        checks = [
            f"0 <= {i} < {n}"
            for i, n, r in zip(idx, bound, ranges)
            if not (r is not None and 0 <= r[0] and r[1] < n)
        ]
        if checks:
            self.sites.append(
                (
                    op.name[len("memref.") :],
                    self.buffers[buf],
                    tuple(shape),
                    source_loc(op),
                    SourceLoc.of(buf_value.location),
                )
            )
            self.emit(
                f"if not ({' and '.join(checks)}): _oob({len(self.sites) - 1}, {', '.join(idx)})"
            )
        strides = [int(np.prod(shape[k + 1 :])) for k in range(len(shape))]
        terms = []
        if buf_value in self.views:  # a T.match_buffer view of another buffer
            buf, offset, strides = self.views[buf_value]
            terms.append(offset)
        terms += [i if s == 1 else f"{i} * {s}" for i, s in zip(idx, strides)]
        flat = " + ".join(terms) or "0"
        return f"{buf}[{flat}:{flat} + {lanes}]" if lanes > 1 else f"{buf}[{flat}]"

    def _oob(self, site, *index):
        kind, buf, shape, loc, declared = self.sites[site]
        axis, k = next((a, k) for a, (k, n) in enumerate(zip(index, shape)) if not 0 <= k < n)
        raise OutOfBoundsError(
            f"out-of-bounds {kind} of buffer {buf!r}: index {k} on axis "
            f"{axis} of a buffer of shape {shape}",
            loc,
            buffer=buf,
            index=k,
            axis=axis,
            notes=[(f"buffer {buf!r} declared here", declared)],
        )

    def _memref_load(self, op, ins, t):
        self.assign(op, self.element(op, op.operands[0], ins[0], ins[1:]))

    def _memref_store(self, op, ins, t):
        self.emit(f"{self.element(op, op.operands[1], ins[1], ins[2:])} = {ins[0]}")

    # --- control flow -------------------------------------------------------------------------
    def _affine_for(self, op, ins, t):
        if self.loop_depth >= _MAX_LOOP_DEPTH:
            return self.separate_function(op)
        loop = Loop(op)
        step = ir.IntegerAttr(op.attributes["step"]).value
        (lmap, lops), (umap, uops) = loop.lower_bound, loop.upper_bound
        lo, hi = (
            _affine(m.results[0], ins[: m.n_dims], ins[m.n_dims : len(ops)])
            for m, ops, ins in (
                (lmap, lops, ins[: len(lops)]),
                (umap, uops, ins[len(lops) : len(lops) + len(uops)]),
            )
        )
        iv = self.new_name(loop.iv, loop.name)
        lo_range = expr_bounds(lmap.results[0], [self.range_of(x) for x in ins[: len(lops)]])
        hi_range = expr_bounds(
            umap.results[0], [self.range_of(x) for x in ins[len(lops) : len(lops) + len(uops)]]
        )
        if lo_range is not None and hi_range is not None:
            self.ranges[iv] = (lo_range[0], max(lo_range[0], hi_range[1] - 1))
        self.emit(f"for {iv} in range({lo}, {hi}{f', {step}' if step != 1 else ''}):")
        self.loop_depth += 1
        self.indented(loop.body)
        self.loop_depth -= 1

    def separate_function(self, op):
        """Emit loop `op` as a function of the variables it uses, and call it."""
        free = sorted(
            {
                self.names[v]
                for o in [op, *walk(op)]
                for v in o.operands
                if v in self.names and self.names[v] in self.variables
            }
        )
        fname = f"_nest_{len(self.variables)}"
        self.body(
            fname, free, lambda: self._affine_for(op, [self.names[v] for v in op.operands], None)
        )
        self.emit(f"{fname}({', '.join(free)})")

    def _affine_apply(self, op, ins, t):
        m = ir.AffineMapAttr(op.attributes["map"]).value
        self.assign(op, _affine(m.results[0], ins[: m.n_dims], ins[m.n_dims :]))
        bounds = expr_bounds(m.results[0], [self.range_of(x) for x in ins[: m.n_dims]])
        if bounds is not None:
            self.ranges[self.names[op.results[0]]] = bounds

    def _affine_if(self, op, ins, t):
        self.branches(op, _set_test(integer_set(op.attributes["condition"]), ins))

    def _scf_if(self, op, ins, t):
        self.branches(op, ins[0])

    def branches(self, op, cond: str):
        """if/else over the op's regions, lazily: only the taken branch runs."""
        results = [self.new_name(r) for r in op.results]
        self.emit(f"if {cond}:")
        self.indented(op.regions[0].blocks[0], results)
        if len(op.regions[1].blocks):
            self.emit("else:")
            self.indented(op.regions[1].blocks[0], results)

    def _tir_block(self, op, ins, t):
        """Iter vars from the bindings; `T.where` guards init and body; init runs when every
        reduce iter var is at its domain minimum (TensorIR semantics)."""
        blk = Block(op)
        if blk.predicate is not None:
            self.emit(f"if {_set_test(blk.predicate, ins)}:")
            self.depth += 1
        values = []
        dim_ranges = [self.range_of(x) for x in ins]
        for arg, e, hint in zip(blk.body.arguments, blk.bindings.results, blk.iter_names):
            expr = _affine(e, ins, [])
            if expr in self.variables or re.fullmatch(r"\(?-?\d+\)?", expr):
                self.names[arg] = expr  # bound to a loop var or constant: no copy needed
            else:
                self.emit(f"{self.new_name(arg, hint)} = {expr}")
                bounds = expr_bounds(e, dim_ranges)
                if bounds is not None:
                    self.ranges[self.names[arg]] = bounds
            values.append(self.names[arg])
        if blk.init is not None:
            for arg, v in zip(blk.init.arguments, values):
                self.names[arg] = v
            at_min = [
                f"{v} == {dmin}"
                for v, kind, (dmin, _) in zip(values, blk.iter_types, blk.domains)
                if kind == "R"
            ]
            self.emit(f"if {' and '.join(at_min) or 'True'}:")
            self.indented(blk.init)
        start = len(self.lines)
        self.block(blk.body)
        if blk.predicate is not None:
            if len(self.lines) == start:
                self.emit("pass")
            self.depth -= 1

    # --- values -------------------------------------------------------------------------------
    def _arith_constant(self, op, ins, t):
        attr = op.attributes["value"]
        v = (
            _wrap_value(ir.IntegerAttr(attr).value, t)
            if _is_int(t)
            else float(ir.FloatAttr(attr).value)
        )
        self.alias(op, _literal(v, self.globals))

    def _arith_select(self, op, ins, t):
        c, a, b = ins
        self.assign(op, f"{a} if {c} else {b}")

    def _arith_cmpi(self, op, ins, t):
        pred = ir.IntegerAttr(op.attributes["predicate"]).value
        a, b = ins
        if pred >= 6:  # unsigned
            src = _elem(op.operands[0].type)
            a, b, pred = _unsigned(a, src), _unsigned(b, src), pred - 4
        self.assign(op, f"{a} {_CMPI[pred]} {b}")

    def _arith_cmpf(self, op, ins, t):
        a, b = ins
        self.assign(op, _CMPF[ir.IntegerAttr(op.attributes["predicate"]).value].format(a=a, b=b))

    def _int_cast(self, op, ins, t, unsigned=False):
        src = _elem(op.operands[0].type)
        x = ins[0]
        if unsigned and not isinstance(src, ir.IndexType):
            x = f"{x} & {_mask(src)}"
        elif isinstance(src, ir.IntegerType) and src.width == 1:
            x = f"int({x})"  # i1 is held as a bool: read as 0/1
        if x == ins[0] and (
            isinstance(t, ir.IndexType)
            or not isinstance(src, ir.IndexType)
            and _width(t) >= _width(src)
        ):
            return self.alias(op, x)  # widening a value: unchanged
        self.assign(op, _wrap(x, t))

    _arith_extsi = _arith_trunci = _arith_index_cast = _int_cast

    def _arith_extui(self, op, ins, t):
        self._int_cast(op, ins, t, unsigned=True)

    _arith_index_castui = _arith_extui

    def _arith_sitofp(self, op, ins, t):
        self.assign(op, self.round(f"float({ins[0]})", t))

    def _arith_uitofp(self, op, ins, t):
        self.assign(op, self.round(f"float({_unsigned(ins[0], _elem(op.operands[0].type))})", t))

    def _arith_extf(self, op, ins, t):
        self.alias(op, ins[0])  # every value of the narrower type is exact in the wider one

    def _arith_truncf(self, op, ins, t):
        self.assign(op, self.round(ins[0], t))

    def _arith_fptosi(self, op, ins, t):
        self.assign(op, _wrap(f"int({ins[0]})", t))  # int() truncates toward zero

    _arith_fptoui = _arith_fptosi

    def _arith_negf(self, op, ins, t):
        self.assign(op, f"-{ins[0]}")

    def _math_absi(self, op, ins, t):
        self.assign(op, _wrap(f"abs({ins[0]})", t))

    def _math_fma(self, op, ins, t):
        a, b, c = ins  # rounded after the multiply, like the compiled code without contraction
        self.assign(op, self.round(f"{self.round(f'{a} * {b}', t)} + {c}", t))

    def _tir_call(self, op, ins, t):
        callee = ir.StringAttr(op.attributes["callee"]).value
        if callee == "likely":
            return self.alias(op, ins[0])
        if callee == "ramp":
            vt = op.results[0].type
            b, st = ins
            return self.assign(
                op, f"[{_wrap(f'{b} + {st} * _k', vt.element_type)} for _k in range({vt.shape[0]})]"
            )
        if _is_int(t) and callee in ("floormod", "floordiv"):
            a, b = ins
            return self.assign(op, _wrap(f"{a} {'%' if callee == 'floormod' else '//'} {b}", t))
        fns = {
            "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
            "floormod": lambda a, b: a - np.floor(a / b) * b,
            "floordiv": lambda a, b: np.floor(a / b),
            "rsqrt": lambda x: 1 / np.sqrt(x),
            "log1p": np.log1p,
        }
        if callee not in fns or _is_int(t):
            raise TIRError(f"interpreter: unsupported intrinsic T.{callee}", source_loc(op))
        fn = self.helper(f"_{callee}_{t}", _typed(fns[callee], t, len(ins)))
        self.assign(op, f"{fn}({', '.join(ins)})")
