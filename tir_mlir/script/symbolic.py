"""Prim_funcs with symbolic shapes and scalar parameters, made concrete by specialization.

`n = T.int32()` (or `T.int64()`) and scalar parameters (`n: T.int32`, `x: T.float32`) make a
`SymbolicPrimFunc`: the resolved syntax tree, kept until the values are known.
`f.specialize({"n": 128})` substitutes them (removing the `T.int32()` lines and the scalar
parameters) and builds an ordinary PrimFunc. `tir_mlir.build(f)` gives a module whose functions
take buffers and scalars like TVM's (`lib["f"](a, b, n)`): each call reads the symbolic values
from the arrays' shapes and the scalars, checks they agree across arguments and with every
shape expression, and runs one kernel for every value where the lowered code allows it (over
dynamic memrefs: dynamic_kernel.py; else generic_kernel.py), else the specialization for those
values (compiled once per set of values).
"""
from typing import Dict, List, Tuple

from tir_mlir.errors import RuntimeCallError
from tir_mlir.frontend import ast as A
from tir_mlir.frontend.intrinsics import callee, strip_prefix
from tir_mlir.script.captures import transform

INT_DTYPES = ("int32", "int64")
SCALAR_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "float32", "float64", "bool")


def _is_var_call(node):
    return isinstance(node, A.Call) and not node.args and not node.kwargs and \
        callee(node) in INT_DTYPES


def _var_decls(s):
    """`n = T.int32()` / `n, m = T.int64(), T.int64()` -> [(name, dtype), ...], else []."""
    if not isinstance(s, A.Assign):
        return []
    targets = s.target.items if isinstance(s.target, A.Tuple_) else [s.target]
    values = s.value.items if isinstance(s.value, A.Tuple_) else [s.value]
    if len(targets) != len(values) or not all(
            isinstance(t, A.Name) and _is_var_call(v) for t, v in zip(targets, values)):
        return []
    return [(t.id, callee(v)) for t, v in zip(targets, values)]


def _scalar_param(p):
    name = A.dotted_name(p.annotation) if p.annotation is not None else None
    dtype = strip_prefix(name) if name else None
    return dtype if dtype in SCALAR_DTYPES else None


def symbolic_vars(f: A.FuncDef) -> Dict[str, str]:
    """name -> dtype of the symbolic vars and scalar parameters of a prim_func."""
    out = {p.name: _scalar_param(p) for p in f.params if _scalar_param(p)}
    for s in f.body:
        out.update(_var_decls(s))
    return out


def is_symbolic(definition) -> bool:
    """Whether a prim_func, or some function of an @I.ir_module class, has symbolic vars or
    scalar parameters."""
    funcs = definition.body if isinstance(definition, A.ClassDef) else [definition]
    return any(isinstance(f, A.FuncDef) and symbolic_vars(f) for f in funcs)


def _value_node(value, dtype, pos):
    if dtype == "int64":
        return A.Call(A.Attr(A.Name("T", pos), "int64", pos), [A.Const(value, pos)], [], pos)
    return A.Const(value, pos)


class SymbolicPrimFunc:
    """A prim_func with symbolic shapes or scalar parameters (see the module comment)."""

    def __init__(self, func: A.FuncDef, filename: str):
        self.func, self.filename = func, filename
        self.vars = symbolic_vars(func)
        self._built = {}

    @property
    def name(self):
        return self.func.name

    @property
    def params(self) -> List[str]:
        """Parameter names, buffers (handles) and scalars, in order."""
        return [p.name for p in self.func.params]

    def __repr__(self):
        return f"SymbolicPrimFunc({self.name}, {', '.join(self.vars)})"

    def specialize(self, values: Dict):
        """Bind symbolic vars / scalar parameters (by name, or objects with `.name`); the
        PrimFunc once all are bound, else a SymbolicPrimFunc of the rest."""
        special, complete = self.specialized_def(values)
        if not complete:
            return SymbolicPrimFunc(special, self.filename)
        from tir_mlir.frontend.parser import build
        from tir_mlir.script.prim_func import PrimFunc
        return PrimFunc(build([special], self.filename).module)

    def specialized_def(self, values: Dict):
        """(the definition with `values` substituted, whether that binds every var)."""
        named = {getattr(k, "name", k): v for k, v in values.items()}
        for k, v in named.items():
            if k not in self.vars:
                raise KeyError(f"{self.name} has no symbolic var or scalar parameter {k!r} "
                               f"(it has {', '.join(self.vars) or 'none'})")
            if not any(type(v) is t for t in (int, float, bool)):
                raise TypeError(f"specialize: {k} must be a number, got {type(v).__name__}")
            if self.vars[k] in INT_DTYPES and type(v) is not int:
                raise TypeError(f"specialize: {k} is a {self.vars[k]}, got {v!r}")
        f = self.func

        def fn(node):
            if isinstance(node, A.Name) and node.id in named:
                return _value_node(named[node.id], self.vars[node.id], node.pos)
            return None
        params = [A.Param(p.name, transform(p.annotation, fn), p.pos) for p in f.params
                  if p.name not in named]
        body = []
        for s in f.body:
            decls = _var_decls(s)
            if decls:       # keep the declarations of the vars still symbolic
                body += [A.Assign(A.Name(n, s.pos), A.Call(A.Attr(A.Name("T", s.pos), d, s.pos),
                                                          [], [], s.pos), s.pos)
                         for n, d in decls if n not in named]
            else:
                body.append(transform(s, fn))
        special = A.FuncDef(f.name, params, f.returns, body, f.pos, f.decorators)
        return special, len(named) == len(self.vars)

    def script(self) -> str:
        """As TVM prints it, where each number of the printed program is a form of the vars
        symbolic_print.py knows (affine, or a non-affine form the source writes: `T.ceildiv(n,
        4)`, `n % 4`, `n * m`...); else a TypeError: print f.specialize({...}).script()."""
        from tir_mlir.script.symbolic_print import script_text
        text = script_text(self)
        if text is None:
            raise TypeError(f"{self.name} has symbolic shapes or scalar parameters "
                            f"({', '.join(self.vars)}) used in a way tir-mlir cannot print "
                            "symbolically: print f.specialize({...}).script()")
        return text

    def __str__(self):
        return self.script()

    # --- running ----------------------------------------------------------------------------
    def _shapes(self) -> List[Tuple[str, list]]:
        """(buffer param or handle name, its shape nodes) per non-scalar parameter."""
        matched = {}
        for s in self.func.body:
            if isinstance(s, A.Assign) and isinstance(s.value, A.Call) and \
                    callee(s.value) == "match_buffer" and s.value.args and \
                    isinstance(s.value.args[0], A.Name) and len(s.value.args) > 1:
                matched[s.value.args[0].id] = s.value.args[1]
        out = []
        for p in self.func.params:
            if p.name in self.vars:
                continue
            shape = matched.get(p.name)
            ann = p.annotation
            if shape is None and isinstance(ann, A.Call) and ann.args:
                shape = ann.args[0]
            if shape is None and isinstance(ann, A.Subscript) and ann.indices:
                shape = ann.indices[0]
            items = shape.items if isinstance(shape, (A.Tuple_, A.List_)) else [shape]
            out.append((p.name, items))
        return out

    def bind_call(self, args) -> Tuple[Dict, list]:
        """(values of the symbolic vars, the arrays) for a call `f(*args)`; RuntimeCallError
        when the arguments disagree."""
        if len(args) != len(self.func.params):
            raise RuntimeCallError(f"{self.name} takes {len(self.func.params)} arguments "
                                   f"({', '.join(self.params)}), got {len(args)}")
        values, source, arrays = {}, {}, []
        by_name = dict(zip(self.params, args))
        for name, dims in self._shapes():
            a = by_name[name]
            shape = getattr(a, "shape", None)
            if shape is None or len(shape) != len(dims):
                raise RuntimeCallError(f"{self.name}: buffer {name!r} expects a "
                                       f"{len(dims)}-d numpy array")
            for axis, (node, n) in enumerate(zip(dims, shape)):
                if isinstance(node, A.Name) and node.id in self.vars:
                    where = f"dimension {axis} of {name!r}"
                    if node.id in values and values[node.id] != n:
                        raise RuntimeCallError(
                            f"{self.name}: {node.id} is {values[node.id]} from "
                            f"{source[node.id]} but {n} from {where}")
                    values.setdefault(node.id, int(n))
                    source.setdefault(node.id, where)
            arrays.append(a)
        for p in self.func.params:
            if p.name not in self.vars:
                continue
            v = by_name[p.name]
            if p.name in values and v != values[p.name]:
                raise RuntimeCallError(f"{self.name}: {p.name} = {v} but {source[p.name]} "
                                       f"is {values[p.name]}")
            values[p.name] = v
        missing = [v for v in self.vars if v not in values]
        if missing:
            raise RuntimeCallError(f"{self.name}: no argument gives {missing[0]} (symbolic "
                                   "vars must be a whole buffer dimension or a parameter)")
        self._check_dims(by_name, values)
        return values, arrays

    def _check_dims(self, by_name, values):
        """RuntimeCallError naming the first buffer dimension its shape expression (`n // 2`,
        `128`) does not give, with the vars' values."""
        from tir_mlir.script.pyfile import _constant
        for name, dims in self._shapes():
            for axis, (node, n) in enumerate(zip(dims, by_name[name].shape)):
                want = _constant(node, values)
                if type(want) is int and want != n:
                    used = sorted({x.id for x in A.names_used(node)} & set(values))
                    text = _expr_text(node)
                    how = f" ({text} with {', '.join(f'{v} = {values[v]}' for v in used)})" \
                        if used and text else ""
                    raise RuntimeCallError(f"{self.name}: dimension {axis} of {name!r} is {n}, "
                                           f"expected {want}{how}")

    def _tir_mlir_build(self, target="llvm", **kwargs):
        return SymbolicModule(self, target, kwargs)


def _expr_text(node):
    """A shape expression as written, for messages (None for calls)."""
    if isinstance(node, A.Name):
        return node.id
    if isinstance(node, A.Const):
        return repr(node.value)
    if isinstance(node, A.BinOp):
        sides = [_expr_text(x) for x in (node.lhs, node.rhs)]
        if None in sides:
            return None
        sides = [f"({t})" if isinstance(x, A.BinOp) else t
                 for t, x in zip(sides, (node.lhs, node.rhs))]
        return f"{sides[0]} {node.op} {sides[1]}"
    return None


_UNTRIED = object()


class SymbolicModule:
    """`tir_mlir.build(f)` of a SymbolicPrimFunc: `lib[name](*buffers_and_scalars)`."""

    def __init__(self, func: SymbolicPrimFunc, target, kwargs):
        self.func, self.target, self.kwargs = func, target, kwargs
        self._libs = {}
        self._generic = _UNTRIED

    @property
    def generic(self):
        """One kernel for every size: over dynamic memrefs (dynamic_kernel.py), else with the
        sizes patched into the lowered constants (generic_kernel.py); tried at the first call;
        None where neither applies."""
        if self._generic is _UNTRIED:
            from tir_mlir.script.dynamic_kernel import DynamicKernel
            from tir_mlir.script.generic_kernel import GenericKernel
            kernel = DynamicKernel.make(self.func, self.target, self.kwargs)
            if kernel is None:
                kernel = GenericKernel.make(self.func, self.target, self.kwargs)
            self._generic = kernel or None
        return self._generic

    @property
    def kernels(self) -> int:
        """How many kernels the calls so far compiled (one for every size where `generic`
        serves them)."""
        return len({id(getattr(f, "fn", f).module) for f in self._libs.values()})

    def _function(self, values):
        """The compiled function for these values of the vars."""
        from tir_mlir.runtime.build import build
        key = tuple(sorted(values.items()))
        if key not in self._libs:
            generic = self.generic
            self._libs[key] = generic.function(values) \
                if generic is not None and generic.covers(values) else \
                build(self.func.specialize(values), self.target, **self.kwargs)[self.func.name]
        return self._libs[key]

    def __getitem__(self, name):
        if name != self.func.name:
            raise KeyError(f"no function named {name!r}; the module has {self.func.name!r}")

        def call(*args):
            values, arrays = self.func.bind_call(args)
            self._function(values)(*arrays)
        return call

    def time_evaluator(self, name, dev=None, number=10, repeat=1, min_repeat_ms=0, **_):
        from tir_mlir.runtime.timer import time_calls

        def evaluate(*args):
            values, arrays = self.func.bind_call(args)
            return time_calls(self._function(values).prepare(*arrays), number, repeat,
                              min_repeat_ms)
        return evaluate
