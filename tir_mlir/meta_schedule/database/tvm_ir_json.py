"""A program as TVM 0.21's serialised IRModule (`tvm.ir.save_json`'s object graph), which is
what TVM's `Workload.from_json` reads from a `database_workload.json` line (base64 of it).

The graph is built from the program's TVMScript as tir-mlir prints it (TVM 0.21's canonical
text, read with Python's `ast`): each `@T.prim_func` becomes a `tir.PrimFunc` whose body is the
root block, with the same nodes and fields TVM's parser makes (handle parameters `A_handle`
bound to buffers, `global_symbol`, IterVars, BufferRegions, For kinds; size variables, handles
bound by `T.match_buffer` and scalar parameters of symbolic programs; literals beside int64
sizes made int64, as TVM's parser makes them). A construct outside what tuning workloads use
(`T.assume`, `if`, thread bindings, loop annotations, let, allocate) raises ValueError naming
it. `tvm_ir_read` reads such a graph back.
"""

import ast
import base64
import json
import struct
from typing import TypeGuard, TypeVar

import numpy as np

_FOR_KINDS = {"serial": 0, "range": 0, "parallel": 1, "vectorized": 2, "unroll": 3}
_BINOPS = {
    ast.Add: "tir.Add",
    ast.Sub: "tir.Sub",
    ast.Mult: "tir.Mul",
    ast.FloorDiv: "tir.FloorDiv",
    ast.Mod: "tir.FloorMod",
    ast.Div: "tir.Div",
}
_COMPARE = {
    ast.Lt: "tir.LT",
    ast.LtE: "tir.LE",
    ast.Gt: "tir.GT",
    ast.GtE: "tir.GE",
    ast.Eq: "tir.EQ",
    ast.NotEq: "tir.NE",
}
_MINMAX = {"max": "tir.Max", "min": "tir.Min"}
INTRINSICS = (
    "exp",
    "exp2",
    "exp10",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "rsqrt",
    "tanh",
    "sigmoid",
    "erf",
    "sin",
    "cos",
    "tan",
    "fabs",
    "floor",
    "ceil",
    "round",
    "trunc",
    "pow",
    "isnan",
    "if_then_else",
)
_DTYPES = (
    "float16",
    "float32",
    "float64",
    "bfloat16",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
)


class _Graph:
    """TVM's JSON object graph: node 0 is null; a field holds an index (as text) or a value."""

    def __init__(self):
        self.nodes: list[dict] = [{"type_key": ""}]

    def add(self, type_key: str, attrs: dict | None = None, **extra) -> str:
        node: dict = {"type_key": type_key}
        if attrs is not None:
            node["attrs"] = attrs
        node.update(extra)
        self.nodes.append(node)
        return str(len(self.nodes) - 1)

    def string(self, s: str) -> str:
        return self.add("ffi.String", repr_str=s) if s else self.add("ffi.String")

    def array(self, items: list[str]) -> str:
        return (
            self.add("ffi.Array", data=[int(i) for i in items]) if items else self.add("ffi.Array")
        )

    def map(self, pairs: list[tuple]) -> str:
        return (
            self.add("ffi.Map", data=[int(x) for kv in pairs for x in kv])
            if pairs
            else self.add("ffi.Map")
        )

    def str_map(self, items: dict[str, str]) -> str:
        if not items:
            return self.add("ffi.Map")
        return self.add("ffi.Map", keys=list(items), data=[int(v) for v in items.values()])

    def imm(self, value, dtype: str) -> str:
        if dtype.startswith(("float", "bfloat")):
            return self.add(
                "ir.FloatImm", {"dtype": dtype, "span": "null", "value": f"{float(value):.17g}"}
            )
        return self.add("ir.IntImm", {"dtype": dtype, "span": "null", "value": str(int(value))})

    def var(self, name: str, dtype: str, annotation: str | None = None) -> str:
        ann = annotation or self.add("ir.PrimType", {"dtype": dtype})
        return self.add(
            "tir.Var",
            {"dtype": dtype, "name": self.string(name), "span": "null", "type_annotation": ann},
        )

    def json(self, root: str) -> str:
        return json.dumps(
            {
                "root": int(root),
                "nodes": self.nodes,
                "b64ndarrays": [],
                "attrs": {"tvm_version": "0.21.dev0"},
            }
        )


class _Value:
    """An expression node and its dtype."""

    def __init__(self, ref: str, dtype: str, const=None):
        self.ref, self.dtype, self.const = ref, dtype, const


class _Buffer:
    def __init__(self, ref: str, dtype: str):
        self.ref, self.dtype = ref, dtype


class _Function:
    """One `@T.prim_func` turned into graph nodes."""

    def __init__(self, g: _Graph, fn: ast.FunctionDef):
        self.g, self.fn = g, fn
        self.scope: dict[str, _Value | _Buffer] = {}  # name -> variable or buffer
        # loop var node -> its extent node and dtype (remap)
        self.loop_extents: dict[str, tuple[str, str]] = {}

    def build(self) -> str:
        g, fn = self.g, self.fn
        params, buffers, handles, attrs = [], {}, {}, {}
        for arg in fn.args.args:
            call = arg.annotation
            if _is_call(call, "Buffer") and len(call.args) >= 1:
                handle = g.var(f"{arg.arg}_handle", "handle")
                buffers[handle] = self._buffer(arg.arg, call).ref
            elif _callee_attr(call) == "handle":  # bound by a T.match_buffer below
                handle = handles[arg.arg] = g.var(arg.arg, "handle")
            elif (dtype := _callee_attr(call)) in _DTYPES:  # a scalar parameter
                handle = g.var(arg.arg, dtype)
                self.scope[arg.arg] = _Value(handle, dtype)
            else:
                shown = "no annotation" if call is None else ast.unparse(call)
                raise ValueError(f"parameter {arg.arg}: {shown} is not supported")
            params.append(handle)
        body = list(fn.body)
        stmts, allocs = [], []
        for st in body:
            if isinstance(st, ast.Expr) and _is_call(st.value, "func_attr"):
                entries = _as(st.value.args[0], ast.Dict)
                for k, v in zip(entries.keys, entries.values):
                    attrs[_str(k)] = self._attr_value(v, func_attr=True)
                continue
            if _size_vars(st):  # n = T.int32(); n, m = T.int64(), T.int64()
                targets = (
                    st.targets[0].elts if isinstance(st.targets[0], ast.Tuple) else [st.targets[0]]
                )
                calls = st.value.elts if isinstance(st.value, ast.Tuple) else [st.value]
                for t, c in zip(targets, calls):
                    self.scope[_id(t)] = _Value(g.var(_id(t), _callee(c)), _callee(c))
                continue
            if isinstance(st, ast.Assign) and _is_call(st.value, "match_buffer"):
                call = st.value
                handle = handles[_id(call.args[0])]
                buffers[handle] = self._buffer(
                    _id(st.targets[0]), ast.Call(call.func, call.args[1:], call.keywords)
                ).ref
                continue
            if _alloc(st):
                allocs.append(self._alloc_buffer(st))
                continue
            stmts.append(st)
        attrs.setdefault("global_symbol", g.string(fn.name))
        root_block = g.add(
            "tir.Block",
            {
                "alloc_buffers": g.array(allocs),
                "annotations": g.map([]),
                "body": self._seq(stmts),
                "init": "null",
                "iter_vars": g.array([]),
                "match_buffers": g.array([]),
                "name_hint": g.string("root"),
                "reads": g.array([]),
                "span": "null",
                "writes": g.array([]),
            },
        )
        body_ref = g.add(
            "tir.BlockRealize",
            {
                "block": root_block,
                "iter_values": g.array([]),
                "predicate": g.imm(1, "bool"),
                "span": "null",
            },
        )
        return g.add(
            "tir.PrimFunc",
            {
                "attrs": g.add("ir.DictAttrs", {"__dict__": g.str_map(attrs)}),
                "body": body_ref,
                "params": g.array(params),
                "buffer_map": g.map([(p, buffers[p]) for p in params if p in buffers]),
                "ret_type": g.add("ir.TupleType", {"fields": g.array([]), "span": "null"}),
                "span": "null",
                "struct_info_": "null",
            },
        )

    # --- buffers -------------------------------------------------------------------------
    def _buffer(self, name: str, call: ast.Call, scope: str = "global") -> _Buffer:
        g = self.g
        shape = call.args[0]
        dims = shape.elts if isinstance(shape, ast.Tuple) else [shape]
        dtype = "float32"
        if len(call.args) > 1:
            dtype = _str(call.args[1])
        for kw in call.keywords:
            if kw.arg == "dtype":
                dtype = _str(kw.value)
            elif kw.arg == "scope":
                scope = _str(kw.value)
            else:
                raise ValueError(f"buffer {name}: argument {kw.arg}= is not supported")
        pointer = g.add(
            "ir.PointerType",
            {
                "element_type": g.add("ir.PrimType", {"dtype": dtype}),
                "storage_scope": g.string(scope),
            },
        )
        data = g.var(name, "handle", pointer)
        extents = [self._expr(d) for d in dims]
        index_dtype = "int64" if any(e.dtype == "int64" for e in extents) else "int32"
        ref = g.add(
            "tir.Buffer",
            {
                "axis_separators": g.array([]),
                "buffer_type": "1",
                "data": data,
                "data_alignment": "64",
                "dtype": dtype,
                "elem_offset": g.imm(0, index_dtype),
                "name": g.string(name),
                "offset_factor": "1",
                "shape": g.array([e.ref for e in extents]),
                "span": "null",
                "strides": g.array([]),
            },
        )
        buf = _Buffer(ref, dtype)
        self.scope[name] = buf
        return buf

    def _alloc_buffer(self, st: ast.Assign) -> str:
        return self._buffer(_id(st.targets[0]), _as(st.value, ast.Call)).ref

    # --- statements ----------------------------------------------------------------------
    def _seq(self, stmts: list[ast.stmt]) -> str:
        refs = [self._stmt(s) for s in stmts]
        if len(refs) == 1:
            return refs[0]
        return self.g.add("tir.SeqStmt", {"seq": self.g.array(refs), "span": "null"})

    def _stmt(self, st: ast.stmt) -> str:
        if isinstance(st, ast.For):
            return self._for(st)
        if isinstance(st, ast.With) and _is_call(st.items[0].context_expr, "block"):
            return self._block(st)
        if isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Subscript):
            buf = self.scope[_id(st.targets[0].value)]
            return self.g.add(
                "tir.BufferStore",
                {
                    "buffer": buf.ref,
                    "indices": self._indices(st.targets[0]),
                    "predicate": "null",
                    "span": "null",
                    "value": self._expr(st.value).ref,
                },
            )
        raise ValueError(
            f"line {st.lineno}: {ast.unparse(st).splitlines()[0]!r} is not "
            f"supported in a TVM workload"
        )

    def _for(self, st: ast.For) -> str:
        it = st.iter
        if not isinstance(it, ast.Call):
            raise ValueError(f"line {st.lineno}: unsupported loop")  # noqa: TRY004 - input
        kind = _callee(it)
        names = (
            [_id(t) for t in st.target.elts]
            if isinstance(st.target, ast.Tuple)
            else [_id(st.target)]
        )
        if kind == "grid":
            ranges = [(None, a) for a in it.args]
        elif kind in _FOR_KINDS and not it.keywords:
            ranges = [(it.args[0], it.args[1]) if len(it.args) == 2 else (None, it.args[0])]
        else:
            raise ValueError(f"line {st.lineno}: loop {ast.unparse(it)!r} is not supported")
        loops = []
        for name, (lo, hi) in zip(names, ranges):
            lo_v = self._expr(lo) if lo is not None else None
            hi_v = self._expr(hi)
            dtype = hi_v.dtype
            var = self.g.var(name, dtype)
            self.scope[name] = _Value(var, dtype)
            mn = lo_v.ref if lo_v is not None else self.g.imm(0, dtype)
            ext = hi_v.ref if lo_v is None else self._extent(lo, hi, lo_v, hi_v)
            self.loop_extents[var] = (ext, dtype)
            loops.append((var, mn, ext))
        body = self._seq(st.body)
        for var, mn, ext in reversed(loops):
            body = self.g.add(
                "tir.For",
                {
                    "annotations": self.g.map([]),
                    "body": body,
                    "extent": ext,
                    "kind": str(_FOR_KINDS.get(kind, 0)),
                    "loop_var": var,
                    "min": mn,
                    "span": "null",
                    "thread_binding": "null",
                },
            )
        return body

    def _block(self, st: ast.With) -> str:
        g = self.g
        name = _str(_as(st.items[0].context_expr, ast.Call).args[0])
        iter_vars, values, reads, writes, ann = [], [], None, None, {}
        predicate, init, allocs, body = g.imm(1, "bool"), "null", [], []
        for s in st.body:
            call = s.value if isinstance(s, (ast.Expr, ast.Assign)) else None
            if isinstance(s, ast.Assign) and _is_call(call, "remap"):
                kinds = _str(call.args[0])
                targets = (
                    s.targets[0].elts if isinstance(s.targets[0], ast.Tuple) else [s.targets[0]]
                )
                for t, k, v in zip(targets, kinds, _elts(call.args[1])):
                    iter_vars.append(self._iter_var(_id(t), k, *self._extent_of(_id(v))))
                    values.append(self._expr(v).ref)
            elif (
                isinstance(s, ast.Assign)
                and isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and _axis(call.func)
            ):
                kind = {"spatial": "S", "S": "S", "reduce": "R", "R": "R"}[call.func.attr]
                extent = self._expr(call.args[0])
                iter_vars.append(self._iter_var(_id(s.targets[0]), kind, extent.ref, extent.dtype))
                values.append(self._expr(call.args[1]).ref)
            elif _is_call(call, "reads"):
                reads = [self._region(a) for a in call.args]
            elif _is_call(call, "writes"):
                writes = [self._region(a) for a in call.args]
            elif _is_call(call, "block_attr"):
                entries = _as(call.args[0], ast.Dict)
                ann = {_str(k): self._attr_value(v) for k, v in zip(entries.keys, entries.values)}
            elif _is_call(call, "where"):
                predicate = self._expr(call.args[0]).ref
            elif _alloc(s):
                allocs.append(self._alloc_buffer(s))
            elif isinstance(s, ast.With) and _is_call(s.items[0].context_expr, "init"):
                init = self._seq(s.body)
            else:
                body.append(s)
        if reads is None or writes is None:
            raise ValueError(f"block {name!r}: T.reads and T.writes must be given")
        block = g.add(
            "tir.Block",
            {
                "alloc_buffers": g.array(allocs),
                "annotations": g.str_map(ann),
                "body": self._seq(body),
                "init": init,
                "iter_vars": g.array(iter_vars),
                "match_buffers": g.array([]),
                "name_hint": g.string(name),
                "reads": g.array(reads),
                "span": "null",
                "writes": g.array(writes),
            },
        )
        return g.add(
            "tir.BlockRealize",
            {
                "block": block,
                "iter_values": g.array(values),
                "predicate": predicate,
                "span": "null",
            },
        )

    def _iter_var(self, name: str, kind: str, extent: str, dtype: str) -> str:
        g = self.g
        var = g.var(name, dtype)
        self.scope[name] = _Value(var, dtype)
        dom = g.add("ir.Range", {"extent": extent, "min": g.imm(0, dtype)})
        return g.add(
            "tir.IterVar",
            {
                "dom": dom,
                "iter_type": "0" if kind == "S" else "2",
                "thread_tag": g.string(""),
                "var": var,
            },
        )

    def _extent_of(self, loop_name: str) -> tuple[str, str]:
        """The extent and dtype of the loop `loop_name` (T.axis.remap binds to it)."""
        var = self.scope[loop_name].ref
        if var not in self.loop_extents:
            raise ValueError(f"T.axis.remap over {loop_name!r}, which is not a loop")
        return self.loop_extents[var]

    def _region(self, e: ast.expr) -> str:
        g = self.g
        sub = _as(e, ast.Subscript)
        buf = self.scope[_id(sub.value)]
        idx = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
        ranges = []
        for i in idx:
            if isinstance(i, ast.Slice):
                lo_ast, hi_ast = _as(i.lower, ast.expr), _as(i.upper, ast.expr)
                lo, hi = self._expr(lo_ast), self._expr(hi_ast)
                ranges.append(
                    g.add(
                        "ir.Range",
                        {"min": lo.ref, "extent": self._extent(lo_ast, hi_ast, lo, hi)},
                    )
                )
            else:
                lo = self._expr(i)
                ranges.append(g.add("ir.Range", {"min": lo.ref, "extent": g.imm(1, lo.dtype)}))
        return g.add("tir.BufferRegion", {"buffer": buf.ref, "region": g.array(ranges)})

    def _extent(self, lo_ast, hi_ast, lo: _Value, hi: _Value) -> str:
        """hi - lo as TVM's parser simplifies it: a constant when it is one."""
        if lo.const is not None and hi.const is not None:
            return self.g.imm(hi.const - lo.const, hi.dtype)
        if lo.const == 0:
            return hi.ref
        if (
            isinstance(hi_ast, ast.BinOp)
            and isinstance(hi_ast.op, ast.Add)
            and ast.dump(hi_ast.left) == ast.dump(lo_ast)
        ):
            return self._expr(hi_ast.right).ref
        return self._sub(hi, lo).ref

    def _indices(self, sub: ast.Subscript) -> str:
        idx = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
        return self.g.array([self._expr(i).ref for i in idx])

    def _attr_value(self, v: ast.expr, func_attr: bool = False) -> str:
        if isinstance(v, ast.Constant) and isinstance(v.value, bool):
            if func_attr:
                return self.g.add("bool", {"v_int64": str(int(v.value))})
            return self.g.imm(int(v.value), "bool")
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            return self.g.string(v.value)
        if isinstance(v, ast.Constant) and isinstance(v.value, int):
            return self.g.imm(v.value, "int32")
        raise ValueError(f"attribute value {ast.unparse(v)!r} is not supported")

    # --- expressions ---------------------------------------------------------------------
    def _matched(self, a: _Value, b: _Value) -> tuple:
        """An int32 literal beside a wider integer takes its dtype (TVM's parser)."""
        if a.dtype != b.dtype and a.dtype.startswith("int") and b.dtype.startswith("int"):
            if a.const is not None and a.dtype == "int32":
                a = _Value(self.g.imm(a.const, b.dtype), b.dtype, a.const)
            elif b.const is not None and b.dtype == "int32":
                b = _Value(self.g.imm(b.const, a.dtype), a.dtype, b.const)
        return a, b

    def _sub(self, a: _Value, b: _Value) -> _Value:
        return _Value(
            self.g.add("tir.Sub", {"a": a.ref, "b": b.ref, "dtype": a.dtype, "span": "null"}),
            a.dtype,
        )

    def _expr(self, e: ast.expr) -> _Value:
        g = self.g
        if isinstance(e, ast.Constant) and isinstance(e.value, bool):
            return _Value(g.imm(int(e.value), "bool"), "bool", int(e.value))
        if isinstance(e, ast.Constant) and isinstance(e.value, int):
            return _Value(g.imm(e.value, "int32"), "int32", e.value)
        if isinstance(e, ast.Name):
            v = self.scope.get(e.id)
            if not isinstance(v, _Value):
                raise ValueError(f"unknown variable {e.id!r}")  # noqa: TRY004 - input
            return v
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            inner = self._expr(e.operand)
            if inner.const is not None:
                return _Value(g.imm(-inner.const, inner.dtype), inner.dtype, -inner.const)
            minus = g.imm(-1, inner.dtype)
            return _Value(
                g.add(
                    "tir.Mul", {"a": inner.ref, "b": minus, "dtype": inner.dtype, "span": "null"}
                ),
                inner.dtype,
            )
        if isinstance(e, ast.BinOp) and type(e.op) in _BINOPS:
            a, b = self._matched(self._expr(e.left), self._expr(e.right))
            return _Value(
                g.add(
                    _BINOPS[type(e.op)], {"a": a.ref, "b": b.ref, "dtype": a.dtype, "span": "null"}
                ),
                a.dtype,
            )
        if isinstance(e, ast.Compare) and len(e.ops) == 1 and type(e.ops[0]) in _COMPARE:
            a, b = self._matched(self._expr(e.left), self._expr(e.comparators[0]))
            return _Value(
                g.add(
                    _COMPARE[type(e.ops[0])],
                    {"a": a.ref, "b": b.ref, "dtype": "bool", "span": "null"},
                ),
                "bool",
            )
        if isinstance(e, ast.BoolOp):
            key = "tir.And" if isinstance(e.op, ast.And) else "tir.Or"
            acc = self._expr(e.values[0])
            for nxt in e.values[1:]:
                acc = _Value(
                    g.add(
                        key,
                        {"a": acc.ref, "b": self._expr(nxt).ref, "dtype": "bool", "span": "null"},
                    ),
                    "bool",
                )
            return acc
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            return _Value(
                g.add("tir.Not", {"a": self._expr(e.operand).ref, "dtype": "bool", "span": "null"}),
                "bool",
            )
        if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name):
            buf = self.scope.get(e.value.id)
            if isinstance(buf, _Buffer):
                return _Value(
                    g.add(
                        "tir.BufferLoad",
                        {
                            "buffer": buf.ref,
                            "dtype": buf.dtype,
                            "indices": self._indices(e),
                            "predicate": "null",
                            "span": "null",
                        },
                    ),
                    buf.dtype,
                )
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute):
            return self._call(e)
        raise ValueError(f"expression {ast.unparse(e)!r} is not supported")

    def _call(self, e: ast.Call) -> _Value:
        g, name = self.g, _as(e.func, ast.Attribute).attr
        if name in _DTYPES:
            arg = e.args[0]
            if (
                isinstance(arg, ast.UnaryOp)
                and isinstance(arg.op, ast.USub)
                and isinstance(arg.operand, ast.Constant)
            ):
                value = -_number(arg.operand)
                return _Value(g.imm(value, name), name, value)
            if isinstance(arg, ast.Constant):
                return _Value(g.imm(arg.value, name), name, arg.value)
            inner = self._expr(arg)
            return _Value(
                g.add("tir.Cast", {"dtype": name, "span": "null", "value": inner.ref}), name
            )
        if name == "Cast":
            dtype = _str(e.args[0])
            return _Value(
                g.add(
                    "tir.Cast", {"dtype": dtype, "span": "null", "value": self._expr(e.args[1]).ref}
                ),
                dtype,
            )
        if name in ("max_value", "min_value"):
            dtype = _str(e.args[0])
            info = np.finfo(dtype) if dtype.startswith("float") else np.iinfo(dtype)
            value = info.max if name == "max_value" else info.min
            return _Value(g.imm(value, dtype), dtype, value)
        args = [self._expr(a) for a in e.args]
        if name in _MINMAX:
            return _Value(
                g.add(
                    _MINMAX[name],
                    {"a": args[0].ref, "b": args[1].ref, "dtype": args[0].dtype, "span": "null"},
                ),
                args[0].dtype,
            )
        if name == "Select":
            return _Value(
                g.add(
                    "tir.Select",
                    {
                        "condition": args[0].ref,
                        "dtype": args[1].dtype,
                        "false_value": args[2].ref,
                        "span": "null",
                        "true_value": args[1].ref,
                    },
                ),
                args[1].dtype,
            )
        if name in INTRINSICS:
            dtype = args[1].dtype if name == "if_then_else" else args[0].dtype
            if name == "isnan":
                dtype = "bool"
            op = g.add("ir.Op", repr_str=f"tir.{name}")
            return _Value(
                g.add(
                    "tir.Call",
                    {
                        "args": g.array([a.ref for a in args]),
                        "dtype": dtype,
                        "op": op,
                        "span": "null",
                    },
                ),
                dtype,
            )
        raise ValueError(f"T.{name} is not supported in a TVM workload")


def _callee(call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


def _size_vars(st) -> TypeGuard[ast.Assign]:
    """`n = T.int32()` or `n, m = T.int64(), T.int64()`: the function's size variables."""
    if not isinstance(st, ast.Assign):
        return False
    calls = st.value.elts if isinstance(st.value, ast.Tuple) else [st.value]
    return all(isinstance(c, ast.Call) and _callee(c) in _DTYPES and not c.args for c in calls)


def _callee_attr(node) -> str:
    """`handle` of a `T.handle` annotation (an attribute, not a call)."""
    return node.attr if isinstance(node, ast.Attribute) else ""


def _is_call(node, name: str) -> TypeGuard[ast.Call]:
    return isinstance(node, ast.Call) and _callee(node) == name


def _axis(func: ast.Attribute) -> bool:
    return isinstance(func.value, ast.Attribute) and func.value.attr == "axis"


def _alloc(st) -> TypeGuard[ast.Assign]:
    return isinstance(st, ast.Assign) and _is_call(st.value, "alloc_buffer")


_Node = TypeVar("_Node", bound=ast.AST)


def _as(node, kind: type[_Node]) -> _Node:
    """`node` as the syntax the printed text has there; TypeError (an unsupported form) when
    it is another."""
    if not isinstance(node, kind):
        raise TypeError(f"expected {kind.__name__}, found {type(node).__name__}")
    return node


def _id(node) -> str:
    return _as(node, ast.Name).id


def _str(node) -> str:
    value = _as(node, ast.Constant).value
    if not isinstance(value, str):
        raise TypeError(f"expected a string, found {value!r}")
    return value


def _number(node) -> int | float:
    value = _as(node, ast.Constant).value
    if not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, found {value!r}")
    return value


def _elts(node) -> list[ast.expr]:
    """The items of a list or tuple display."""
    if isinstance(node, ast.Tuple):
        return node.elts
    return _as(node, ast.List).elts


def module_to_tvm_json(mod) -> str:
    """`mod` (a tir_mlir IRModule) as the text of `tvm.ir.save_json(tvm_mod)`."""
    tree = ast.parse(mod.script())
    g = _Graph()
    funcs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    pairs, gvars = [], []
    for fn in funcs:
        try:
            ref = _Function(g, fn).build()
        except (KeyError, AttributeError, IndexError, TypeError) as e:
            # a form of the text this writer does not know (symbolic shapes, handles, ...)
            raise ValueError(
                f"function {fn.name}: unsupported form ({type(e).__name__}: {e})"
            ) from None
        gvar = g.add(
            "ir.GlobalVar", {"name_hint": g.string(fn.name), "span": "null", "struct_info_": "null"}
        )
        pairs.append((gvar, ref))
        gvars.append((fn.name, gvar))
    root = g.add(
        "ir.IRModule",
        {
            "attrs": g.add("ir.DictAttrs", {"__dict__": g.str_map({})}),
            "functions": g.map(pairs),
            "global_infos": g.str_map({}),
            "global_var_map_": g.str_map(dict(gvars)),
            "source_map": g.add("ir.SourceMap", {"source_map": g.map([])}),
        },
    )
    return g.json(root)


def tvm_payload(graph: str) -> str:
    """The workload line's second field as TVM writes it: base64 of the graph written as a
    dmlc stream string (its byte length, 8 bytes little-endian, then the bytes)."""
    data = graph.encode()
    return base64.b64encode(struct.pack("<Q", len(data)) + data).decode()
