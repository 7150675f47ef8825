"""Function signatures read from a tir-level module, and the check of a call's arguments
against them (docs/symbolic.md, "Calling convention").

A function's parameters are its buffers and scalar parameters in TVM's order, then its
implicit size vars (`n = T.int32()`). A caller passes the first ones (`lib["f"](a, b, n)`);
each implicit var is read from the shape of the buffer its `tir.match_shape` names first, and
every buffer's shape is checked against its `tir.match_shape` before the call.
"""

import numbers
from dataclasses import dataclass

import numpy as np
from mlir import ir

from tir_mlir.analysis import size_exprs
from tir_mlir.dialect.buffers import arg_attrs
from tir_mlir.dialect.ops import str_attr
from tir_mlir.dtypes import dtype_of, numpy_dtype, split_lanes
from tir_mlir.errors import BuildError, RuntimeCallError
from tir_mlir.passes.lowering.common import functions

# Param.kind: a buffer (numpy array), an `index` argument the caller passes (`n: T.int32`), a
# scalar of another type (`alpha: T.float32`), or an implicit var derived from a shape.
KINDS = ("buffer", "index", "scalar", "var")


@dataclass(frozen=True)
class Param:
    name: str
    shape: tuple  # buffers: an int, a size tree (size_exprs) or None per dimension
    dtype: str
    kind: str = "buffer"
    source: tuple | None = None  # a var: (parameter position, dimension) it is read from

    def to_json(self):
        out = {"name": self.name, "shape": list(self.shape), "dtype": self.dtype}
        if self.kind != "buffer":  # (static signatures keep the form they always had)
            out["kind"] = self.kind
        if self.source is not None:
            out["source"] = list(self.source)
        return out

    @staticmethod
    def from_json(q) -> "Param":
        return Param(
            q["name"],
            tuple(size_exprs.from_json(s) for s in q["shape"]),
            q["dtype"],
            q.get("kind", "buffer"),
            tuple(q["source"]) if "source" in q else None,
        )

    @property
    def static(self) -> bool:
        return all(isinstance(s, int) for s in self.shape)


def signatures(module: ir.Module) -> dict:
    """Function name -> [Param] for every function definition of a tir-level module."""
    return {str_attr(op.attributes, "sym_name"): _params(op) for op in functions(module)}


def _params(op) -> list:
    fname = str_attr(op.attributes, "sym_name")
    ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
    attrs = arg_attrs(op)
    entry = op.regions[0].blocks[0]
    names = {
        arg: str_attr(d, "tir.name", f"arg{pos}")
        for pos, (arg, d) in enumerate(zip(entry.arguments, attrs))
    }
    shapes = {}  # argument position -> its tir.match_shape trees
    for o in entry.operations:
        o = o.operation
        if o.name == "tir.match_shape" and isinstance(o.operands[0].owner, ir.Block):
            amap = ir.AffineMapAttr(o.attributes["shape"]).value
            syms = list(o.operands)[1:]
            try:
                trees = [size_exprs.of_affine(r, syms, names) for r in amap.results]
            except BuildError as e:
                raise BuildError(f"function {fname!r}: {e}") from None
            shapes.setdefault(ir.BlockArgument(o.operands[0]).arg_number, tuple(trees))
    params = []
    for pos, (t, d) in enumerate(zip(ftype.inputs, attrs)):
        name = str_attr(d, "tir.name", f"arg{pos}")
        if isinstance(t, ir.MemRefType):
            dtype = str_attr(d, "tir.dtype") or dtype_of(t.element_type)
            base, lanes = split_lanes(dtype)
            if lanes > 1:
                raise BuildError(
                    f"function {fname!r}: parameter {name!r} is a buffer of "
                    f"{dtype}, but a built function takes numpy arrays, which "
                    f"have no vector dtype (declare it {base}, its last dimension "
                    f"{lanes} times longer)"
                )
            shape = shapes.get(pos) or tuple(
                None if t.is_dynamic_dim(k) else s for k, s in enumerate(t.shape)
            )
            params.append(Param(name, shape, dtype))
        elif isinstance(t, ir.IndexType):
            kind = "var" if "tir.implicit" in d else "index"
            params.append(Param(name, (), str_attr(d, "tir.dtype") or "int32", kind))
        elif isinstance(t, (ir.IntegerType, ir.F16Type, ir.F32Type, ir.F64Type)):
            params.append(Param(name, (), str_attr(d, "tir.dtype") or dtype_of(t), "scalar"))
        else:
            raise RuntimeCallError(
                f"function {fname!r}: parameter {pos} has type {t}, which a call cannot pass"
            )
    return [_with_source(fname, p, params) if p.kind == "var" else p for p in params]


def _with_source(fname, var: Param, params) -> Param:
    """The var with the first buffer dimension that is the var alone (docs/symbolic.md)."""
    for pos, p in enumerate(params):
        if p.kind == "buffer" and var.name in p.shape:
            return Param(var.name, (), var.dtype, "var", (pos, p.shape.index(var.name)))
    raise BuildError(
        f"function {fname!r}: no buffer has {var.name} as a dimension, so a call "
        f"cannot derive it; make {var.name} a parameter"
    )


def check_args(fname: str, params, arrays):
    """Raise RuntimeCallError naming the first argument that does not fit."""
    call_values(fname, params, arrays)


def call_values(fname: str, params, args) -> list:
    """The values of every parameter (the arguments, then the implicit vars) of a call with
    `args`, after checking them; RuntimeCallError names the first that does not fit.

    Non-contiguous arrays are rejected rather than copied, so writes always land in the caller's
    array."""
    explicit = [p for p in params if p.kind != "var"]
    if len(args) != len(explicit):
        what = "buffers" if all(p.kind == "buffer" for p in explicit) else "arguments"
        raise RuntimeCallError(
            f"{fname} takes {len(explicit)} {what} "
            f"({', '.join(p.name for p in explicit)}), got {len(args)}"
        )
    env, values = {}, []
    # A function with sizes checks (and names) each dimension; a static one whole shapes.
    symbolic = len(explicit) < len(params) or not all(p.static for p in explicit)
    for p, a in zip(explicit, args):
        if p.kind == "buffer":
            _check_array(fname, p, a, symbolic)
        else:
            env[p.name] = a = _scalar(fname, p, a)
        values.append(a)
    for p in params[len(explicit) :]:
        if p.kind != "var":
            raise RuntimeCallError(f"{fname}: parameter {p.name!r} follows an implicit var")
        pos, k = p.source
        env[p.name] = args[pos].shape[k]
        values.append(env[p.name])
    if symbolic:
        for p, a in zip(explicit, args):
            if p.kind == "buffer":
                _check_sizes(fname, p, a, env, params)
    return values


def _check_array(fname, p: Param, a, symbolic: bool):
    if not isinstance(a, np.ndarray):
        raise RuntimeCallError(
            f"{fname}: buffer {p.name!r} expects a numpy array, got {type(a).__name__}"
        )
    if a.dtype != numpy_dtype(p.dtype):
        raise RuntimeCallError(f"{fname}: buffer {p.name!r} expects dtype {p.dtype}, got {a.dtype}")
    if not symbolic and tuple(a.shape) != tuple(p.shape):
        raise RuntimeCallError(
            f"{fname}: buffer {p.name!r} expects shape {tuple(p.shape)}, got {tuple(a.shape)}"
        )
    if a.ndim != len(p.shape):
        raise RuntimeCallError(
            f"{fname}: buffer {p.name!r} expects {len(p.shape)} "
            f"dimensions, got shape {tuple(a.shape)}"
        )
    if not a.flags.c_contiguous:
        raise RuntimeCallError(
            f"{fname}: buffer {p.name!r} is not C-contiguous; "
            f"pass np.ascontiguousarray(...) and read the result from it"
        )
    if not a.flags.writeable:
        raise RuntimeCallError(f"{fname}: buffer {p.name!r} is read-only")


def _scalar(fname, p: Param, a):
    if p.dtype.startswith("float") or p.dtype == "bfloat16":
        if isinstance(a, numbers.Real) and not isinstance(a, bool):
            return float(a)
    elif isinstance(a, numbers.Integral):
        return int(a)
    raise RuntimeCallError(
        f"{fname}: parameter {p.name!r} expects a {p.dtype} value, got {type(a).__name__}"
    )


def _check_sizes(fname, p: Param, a, env, params):
    """Each dimension of `a` against its size in the signature, naming the buffers (or the
    parameter) a disagreeing size comes from."""
    for k, (want_tree, got) in enumerate(zip(p.shape, a.shape)):
        if want_tree is None:
            continue
        want = size_exprs.evaluate(want_tree, env)
        if got == want:
            continue
        var = next((q for q in params if q.name == want_tree), None)
        if var is not None and var.kind == "var":
            src = params[var.source[0]].name
            raise RuntimeCallError(
                f"{fname}: {want_tree} is {want} from dimension "
                f"{var.source[1]} of {src!r} but {got} from dimension {k} "
                f"of {p.name!r}"
            )
        if var is not None:
            raise RuntimeCallError(
                f"{fname}: {want_tree} = {want} but dimension {k} of {p.name!r} is {got}"
            )
        given = ", ".join(f"{n} = {env[n]}" for n in size_exprs.names_in(want_tree))
        why = f" ({size_exprs.to_text(want_tree)} with {given})" if given else ""
        raise RuntimeCallError(
            f"{fname}: dimension {k} of {p.name!r} is {got}, expected {want}{why}"
        )
