"""Syntax tree -> `tir` dialect MLIR module, following docs/design.md.

`ModuleBuilder` handles decorators, classes and functions; `FuncBuilder` the statements of one
prim_func (buffers, loops, blocks, stores, lets, ifs). Expressions go to `ExprBuilder`,
block bindings and `T.where` to `AffineBuilder`. Everything is checked in Python before MLIR
sees it; MLIR's verifier runs once at the end (in parser.py).
"""

from typing import Any, Tuple, overload

from mlir import ir
from mlir.dialects import affine, func, memref, scf

from tir_mlir.dialect import spelling
from tir_mlir.dialect.buffers import (
    AXIS_SEPARATORS,
    OFFSET_FACTOR,
    SCOPE,
    axis_separators_attr,
    int_attr,
    scope_attr,
)
from tir_mlir.dialect.ops import (
    EXPLICIT_ROOT,
    INDEX_DTYPE,
    LOOP_KINDS,
    THREAD_TAGS,
    Block,
    Loop,
    set_root_annotations,
)
from tir_mlir.ir.affine_exprs import const_of, expr_bounds
from tir_mlir.analysis import binding_trees
from tir_mlir.analysis.symbolic import SymExpr, is_symbol
from tir_mlir.dtypes import DTYPES, is_float, is_unsigned, mlir_type
from tir_mlir.frontend import ast as A, constants, explicit_regions, launch_thread
from tir_mlir.frontend.affine import AffineBuilder, NotAffine, expr_shape
from tir_mlir.frontend.exprs import ExprBuilder, Fail, bits, check_dtype, describe, fits
from tir_mlir.frontend.intrinsics import (
    CALL_BINARY,
    CALL_UNARY,
    EXPR_CALLS,
    MATH_BINARY,
    MATH_PREDICATE,
    MATH_UNARY,
    TVM_BUILTINS,
    callee,
    strip_prefix,
)
from tir_mlir.frontend.symbols import (
    IMPLICIT,
    INDEX_VAR_DTYPES,
    SymbolDecl,
    has_call,
    mentions,
    var_decls,
)
from tir_mlir.frontend.values import Buffer, Env, Handle, Lit, Val
from tir_mlir.ir.index_dtypes import buffer_attr, index_dtype, wider

MAX_NESTING = 100
MATCH_SHAPE = "tir.match_shape"
ASSUME = "tir.assume"
# Integer functions a constant (a shape, an extent) may use: folded by ExprBuilder.
STATIC_CALLS = {
    "ceildiv",
    "floordiv",
    "floormod",
    "truncdiv",
    "truncmod",
    "min",
    "max",
    "Div",
}  # TVM prints truncdiv as T.Div
AXIS_KINDS = {
    "axis.spatial": "S",
    "axis.S": "S",
    "axis.reduce": "R",
    "axis.R": "R",
    "axis.opaque": "O",
    "axis.scan": "O",
}
IGNORED_BUFFER_KWARGS = {
    "align",
    "offset_factor",
    "elem_offset",
    "strides",
    "axis_separators",
    "buffer_type",
    "data",
}
FUNC_DECORATORS = {"T.prim_func", "tir.prim_func", "tvm.script.tir", "tvm.script.tir.prim_func"}
MODULE_DECORATORS = {"I.ir_module", "tvm.script.ir_module", "ir_module", "tvm.script.ir.ir_module"}


# Integer functions that may appear in T.reads / T.writes indices, with two arguments.
_BINARY_INDEX_CALLS = ("min", "max", "floordiv", "floormod", "truncdiv", "truncmod", "ceildiv")


class ModuleBuilder(Fail):
    def __init__(self, filename):
        self.filename = filename

    def build(self, stmts) -> ir.Module:
        module = ir.Module.create(loc=ir.Location.file(self.filename, 1, 1))
        spelling.attach(module)  # the blocks' spelling hints (Block.where_spelling...)
        names = {}
        with ir.InsertionPoint(module.body):
            for s in stmts:
                if isinstance(s, (A.Import, A.Pass)):
                    continue
                if isinstance(s, A.ClassDef):
                    self._check_decorators(s, MODULE_DECORATORS, "@I.ir_module")
                    if "tir.module_name" in module.operation.attributes:
                        self.fail("only one @I.ir_module class is allowed per file", s.pos)
                    module.operation.attributes["tir.module_name"] = ir.StringAttr.get(s.name)
                    for f in s.body:
                        if isinstance(f, (A.Pass, A.Import)) or (
                            isinstance(f, A.ExprStmt) and isinstance(f.value, A.Const)
                        ):
                            continue
                        if not isinstance(f, A.FuncDef):
                            self.fail(f"expected a @T.prim_func def in class {s.name}", f.pos)
                        self._func(f, names)
                elif isinstance(s, A.FuncDef):
                    self._func(s, names)
                elif isinstance(s, A.ExprStmt) and isinstance(s.value, A.Const):
                    continue  # docstring
                else:
                    self.fail("expected a @T.prim_func function or an @I.ir_module class", s.pos)
        if not names and "tir.module_name" not in module.operation.attributes:
            self.fail(
                "the program defines no @T.prim_func function or @I.ir_module class (empty input?)",
                (1, 1),
            )
        return module

    def _check_decorators(self, node, allowed, want):
        if not node.decorators:
            self.fail(f"{node.name} needs the decorator {want}", node.pos)
        for d in node.decorators:
            target = d.func if isinstance(d, A.Call) else d
            name = A.dotted_name(target)
            if name not in allowed:
                self.fail(
                    f"unexpected decorator @{name or '...'} (expected {want})",
                    getattr(d, "pos", node.pos),
                )

    def _func(self, f, names):
        self._check_decorators(f, FUNC_DECORATORS, "@T.prim_func")
        if f.name in names:
            self.fail(
                f"duplicate function name {f.name!r}",
                f.pos,
                [("first defined here", names[f.name])],
            )
        names[f.name] = f.pos
        FuncBuilder(self.filename).build(f, self._private(f))

    def _private(self, f) -> bool:
        """`@T.prim_func(private=True)`: a function without a global symbol (Relax makes them)."""
        private = False
        for d in f.decorators:
            if not isinstance(d, A.Call):
                continue
            if d.args:
                self.fail("@T.prim_func takes keyword arguments only", d.pos)
            for k, v, p in d.kwargs:
                if k not in ("private", "check_well_formed"):
                    self.fail(f"@T.prim_func got an unexpected keyword argument {k!r}", p)
                if not (isinstance(v, A.Const) and isinstance(v.value, bool)):
                    self.fail(f"@T.prim_func({k}=...) must be True or False", v.pos)
                if k == "private":
                    private = v.value
        return private


class FuncBuilder(Fail):
    def __init__(self, filename):
        self.filename = filename
        self.env = Env()
        self.ex = ExprBuilder(filename, self.env)
        self.depth = 0
        self.loops = []  # loop Vals since the enclosing block (2021 auto-binding)
        self.block_names = {}
        self.in_block = False
        self.symbol_values = {}  # expression shape -> its top-level value (sym_expr)

    # --- static values (shapes, extents, attributes) ------------------------------------------
    def static(self, node, what):
        """A compile-time constant: literals and arithmetic on them (nothing is emitted)."""
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, A.BinOp):
                stack += [n.lhs, n.rhs]
            elif isinstance(n, A.UnaryOp):
                stack.append(n.operand)
            elif isinstance(n, (A.Tuple_, A.List_)):
                stack += n.items
            elif isinstance(n, A.Name):
                if not isinstance(self.env.get(n.id), Lit):
                    self.fail(f"{what} must be a constant, found {n.id!r}", n.pos)
            elif isinstance(n, A.Attr):
                pass
            elif isinstance(n, A.Call) and callee(n) in DTYPES and len(n.args) == 1:
                stack.append(n.args[0])  # T.int64(4)
            elif isinstance(n, A.Call) and callee(n) in STATIC_CALLS and not n.kwargs:
                stack += n.args  # T.ceildiv(n, 4) once n is a constant
            elif not isinstance(n, A.Const):
                self.fail(f"{what} must be a constant", getattr(n, "pos", node.pos))
        return self.ex.eval(node)

    def static_index(self, node, what):
        """(value, dtype) of an integer constant: `4` -> (4, "int32"), `T.int64(4)` -> (4,
        "int64"): the dtype TensorIR gives the shape dimension, extent or domain."""
        v = self.static(node, what)
        if not (isinstance(v, Lit) and isinstance(v.value, int) and not isinstance(v.value, bool)):
            self.fail(f"{what} must be an integer constant, found {describe(v)}", node.pos)
        if v.dtype not in (None, "int32", "int64"):
            self.fail(f"{what} must be an int32 or int64, found T.{v.dtype}", node.pos)
        if not fits(v.value, "int64"):
            self.fail(f"{what} {v.value} is out of range", node.pos)
        return v.value, v.dtype or "int32"

    def static_str(self, node, what):
        v = self.static(node, what)
        if not isinstance(v, str):
            self.fail(f"{what} must be a string, found {describe(v)}", node.pos)
        return v

    def dtype_of(self, node):
        return check_dtype(self.static(node, "a dtype"), node.pos, self.fail)

    def attr(self, node, depth=0):
        """A Python literal (dict/list/str/int/float/bool) -> MLIR attribute."""
        if depth > 16:
            self.fail("attribute value nested too deeply", node.pos)
        if isinstance(node, A.Dict_):
            d = {}
            for k, v in node.items:
                if not (isinstance(k, A.Const) and isinstance(k.value, str) and k.value):
                    self.fail("attribute keys must be non-empty strings", k.pos)
                d[k.value] = self.attr(v, depth + 1)
            return ir.DictAttr.get(d)
        if isinstance(node, (A.List_, A.Tuple_)):
            return ir.ArrayAttr.get([self.attr(x, depth + 1) for x in node.items])
        v = self.static(node, "an attribute value")
        if isinstance(v, str):
            return ir.StringAttr.get(v)
        if isinstance(v, Lit) and isinstance(v.value, bool):
            return ir.BoolAttr.get(v.value)
        if isinstance(v, Lit) and isinstance(v.value, int):
            if v.dtype is not None:  # T.int64(3), T.int32(0): the signed type keeps it
                return ir.IntegerAttr.get(ir.IntegerType.get_signed(bits(v.dtype)), v.value)
            return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v.value)
        if isinstance(v, Lit) and isinstance(v.value, float):
            return ir.FloatAttr.get(ir.F64Type.get(), v.value)
        self.fail(f"unsupported attribute value {describe(v)}", node.pos)

    def dict_arg(self, node, what):
        if not isinstance(node, A.Dict_):
            self.fail(f"{what} expects a dictionary", node.pos)
        return self.attr(node)

    def _check_used_after(self, target, before):
        """A matched buffer's name is defined where its T.match_buffer line is (as in TVM)."""
        if isinstance(target, A.Name):
            uses = [n for n in A.names_used(before) if n.id == target.id and n.pos]
            if uses:
                n = min(uses, key=lambda n: n.pos)
                self.fail(
                    f"buffer {n.id!r} is used before its T.match_buffer line",
                    n.pos,
                    [(f"buffer {n.id!r} is matched here", target.pos)],
                )

    def _check_func_attrs(self, node, attrs):
        """`tir.noalias` is read as an integer by the build (TVM's too: a string fails there)."""
        value = ir.DictAttr(attrs)["tir.noalias"] if "tir.noalias" in ir.DictAttr(attrs) else None
        if value is not None and not isinstance(value, (ir.BoolAttr, ir.IntegerAttr)):
            pos = next(
                (v.pos for k, v in node.items if getattr(k, "value", None) == "tir.noalias"),
                node.pos,
            )
            self.fail(
                f"T.func_attr: 'tir.noalias' must be True, False or an integer, found {value}", pos
            )

    # --- buffers ------------------------------------------------------------------------------
    @overload
    def buffer_spec(
        self, call, args, what, default_scope: None = None, symbolic: bool = False
    ) -> Tuple[Any, Any, None, Any]: ...
    @overload
    def buffer_spec(
        self, call, args, what, default_scope: str, symbolic: bool = False
    ) -> Tuple[Any, Any, str, Any]: ...
    def buffer_spec(self, call, args, what, default_scope=None, symbolic=False):
        """(shape, dtype, scope, dimension dtypes) from T.Buffer / match_buffer / alloc_buffer
        arguments; a dimension dtype is "int64" for `T.int64(8)`, else "int32". With
        `symbolic`, a dimension that uses the function's symbols (`n`, `n * 4`) is kept as its
        syntax node (a dynamic memref dimension; `resolve_shape` evaluates it)."""
        kw = {k: (v, p) for k, v, p in call.kwargs}
        if not args and "shape" in kw:
            args = [kw.pop("shape")[0]]
        if not args:
            self.fail(f"{what} needs a shape", call.pos)
        if len(args) > 2:
            self.fail(f"{what} takes a shape and a dtype, got {len(args)} arguments", call.pos)
        shape_node = args[0]
        items = shape_node.items if isinstance(shape_node, (A.Tuple_, A.List_)) else [shape_node]
        dims = [
            (x, self.symbol_dtype(x))
            if symbolic and self.uses_symbols(x)
            else self.static_index(x, "a buffer dimension")
            for x in items
        ]
        shape = tuple(n for n, _ in dims)
        for x, n in zip(items, shape):
            if isinstance(n, int) and n <= 0:
                self.fail(f"buffer dimensions must be positive, found {n}", x.pos)
        index = tuple(d for _, d in dims)
        dtype = "float32"
        if len(args) == 2:
            dtype = self.dtype_of(args[1])
        scope = default_scope
        for k, (v, p) in kw.items():
            if k == "dtype" and len(args) < 2:
                dtype = self.dtype_of(v)
            elif k == "scope" and default_scope is not None:
                scope = self.static_str(v, "scope")
            elif k not in IGNORED_BUFFER_KWARGS:
                self.fail(f"{what} got an unexpected keyword argument {k!r}", p)
        return shape, dtype, scope, index

    def layout_attrs(self, call, ndim, offset_factor=True) -> dict:
        """`tir.axis_separators` / `tir.offset_factor` buffer attributes from the keywords of
        T.Buffer / T.match_buffer (`offset_factor`) and T.alloc_buffer (`axis_separators`
        only: TVM gives an allocation with an offset_factor an undefined elem_offset)."""
        out = {}
        for k, v, p in call.kwargs:
            if k == "axis_separators":
                items = v.items if isinstance(v, (A.List_, A.Tuple_)) else [v]
                seps = [self.static_index(x, "an axis separator")[0] for x in items]
                if seps != sorted(set(seps)) or any(not 0 < x < ndim for x in seps):
                    self.fail(
                        f"axis_separators must be increasing dimensions in 1..{ndim - 1}, "
                        f"found {seps}",
                        p,
                    )
                if seps:
                    out[AXIS_SEPARATORS] = axis_separators_attr(seps)
            elif k == "offset_factor" and offset_factor:
                n = self.static_index(v, "an offset_factor")[0]
                if n < 0:
                    self.fail(f"offset_factor must not be negative, found {n}", p)
                out[OFFSET_FACTOR] = int_attr(OFFSET_FACTOR, n)
        return out

    def memref_type(self, shape, dtype):
        dynamic = ir.ShapedType.get_dynamic_size()
        return ir.MemRefType.get(
            [d if isinstance(d, int) else dynamic for d in shape], mlir_type(dtype)
        )

    # --- symbols (docs/symbolic.md) -------------------------------------------------------------
    def symbol_names(self) -> set:
        return {
            n
            for n in self.env.names()
            if isinstance(v := self.env.get(n), SymbolDecl)
            or isinstance(v, Val)
            and is_symbol(v.value)
        }

    def uses_symbols(self, node) -> bool:
        return mentions(node, self.symbol_names())

    def symbol_dtype(self, node) -> str:
        """int64 when the expression uses an int64 symbol, else int32."""
        names = {n.id for n in A.names_used(node)}
        dtypes = []
        for n in names:
            v = self.env.get(n)
            if isinstance(v, SymbolDecl):
                dtypes.append(v.dtype)
            elif isinstance(v, Val) and is_symbol(v.value):
                dtypes.append(index_dtype(v.value))
        return wider(*dtypes)

    def top_level(self) -> ir.InsertionPoint:
        """Where an op computing a symbol goes: the function body, right before the top-level
        statement being built (or at its end, between statements)."""
        block = ir.InsertionPoint.current.block
        anchor = None
        while block.owner is not None and block.owner.operation.name != "func.func":
            anchor = block.owner.operation
            block = anchor.block
        return ir.InsertionPoint(block) if anchor is None else ir.InsertionPoint(anchor)

    def sym_expr(self, node, what, as_written=False):
        """An integer expression of the function's symbols (`n`, `(n + 3) // 4`, `n * m + 1`):
        an int when constant, an affine SymExpr over the symbols when it is one, else a symbol
        computed by `arith` ops at the top level of the body (one value per expression).
        `as_written`: a `T.ceildiv` in a buffer shape, a T.grid extent or a domain, which TVM
        keeps unsimplified (`(n + 4 - 1) // 4`; `range()` simplifies), is the ops."""
        if not self.uses_symbols(node):
            return self.static_index(node, what)[0]
        ab = AffineBuilder(self.env, symbols=True)
        try:
            if as_written and has_call(node, "ceildiv"):
                raise NotAffine("kept as written", None)
            e, _ = ab.expr(node)
        except NotAffine:
            e = None
        if e is not None and not ab.dims:
            e = ir.AffineExpr.simplify_affine_expr(e, 0, len(ab.syms))
            return SymExpr.from_affine(e, ab.syms)
        if ab.dims and not ab.syms:
            self.fail(
                f"{what} must be a constant or an expression of the function's symbolic vars",
                node.pos,
            )
        key = expr_shape(node)
        if key not in self.symbol_values:
            with self.top_level():
                v = self.ex.eval(node)
                if not (isinstance(v, Val) and v.dtype == "index" and is_symbol(v.value)):
                    self.fail(
                        f"{what} must be an integer expression of the function's "
                        f"symbolic vars, found {describe(v)}",
                        node.pos,
                    )
            self.symbol_values[key] = v.value
        return SymExpr.symbol(self.symbol_values[key])

    def size_value(self, size) -> ir.Value:
        """An index value of a symbolic size, at the top level (`affine.apply` unless the size
        is a symbol itself)."""
        if size.expr == ir.AffineSymbolExpr.get(0) and len(size.symbols) == 1:
            return size.symbols[0]
        amap, operands = size.to_map()
        with self.top_level():
            return affine.AffineApplyOp(amap, operands).result

    def match_shape(self, buf: ir.Value, shape, pos):
        """`tir.match_shape` of a buffer parameter whose dimensions use symbols; the shape
        with each symbolic dimension as a SymExpr."""
        sizes = tuple(
            d if isinstance(d, int) else self.sym_expr(d, "a buffer dimension", as_written=True)
            for d in shape
        )
        symbols = []
        exprs = [
            d.embed(symbols) if isinstance(d, SymExpr) else ir.AffineConstantExpr.get(d)
            for d in sizes
        ]
        amap = ir.AffineMap.get(0, len(symbols), exprs)
        ir.Operation.create(
            MATCH_SHAPE,
            operands=[buf, *symbols],
            attributes={"shape": ir.AffineMapAttr.get(amap)},
            loc=self.loc(pos),
        )
        return sizes

    # --- function -----------------------------------------------------------------------------
    def build(self, f, private=False):
        params, handles = [], {}
        body = list(f.body)
        implicit, consumed = [], set()
        for s in body:  # `n = T.int32()`: trailing index arguments (docs/symbolic.md)
            decls = var_decls(s)
            if decls:
                consumed.add(id(s))
            for name, dtype, pos in decls:
                if any(name == d[0] for d in implicit):
                    self.fail(f"symbolic var {name!r} is declared twice", pos)
                implicit.append((name, dtype, pos))
                self.env[name] = SymbolDecl(name, dtype)
        for p in f.params:
            params.append(self._param(p, handles))
        matched, attrs = {}, None
        for k, s in enumerate(body):
            name = callee(s.value) if isinstance(s, (A.Assign, A.ExprStmt)) else None
            if name == "match_buffer":
                self._match_buffer(s, handles, matched)  # (fails unless s is an Assign)
                consumed.add(id(s))
                if isinstance(s, A.Assign):
                    self._check_used_after(s.target, body[:k])
            elif name == "func_attr":
                if attrs is not None:
                    self.fail("T.func_attr given twice", s.pos)
                if len(s.value.args) != 1:
                    self.fail("T.func_attr takes one dictionary", s.pos)
                attrs = self.dict_arg(s.value.args[0], "T.func_attr")
                self._check_func_attrs(s.value.args[0], attrs)
                consumed.add(id(s))
        inputs, arg_attrs, buffers = [], [], []
        for kind, name, spec, pos in params:
            if kind == "scalar":
                inputs.append(ir.IndexType.get() if spec in INDEX_VAR_DTYPES else mlir_type(spec))
                d = {"tir.name": ir.StringAttr.get(name)}
                if spec in INDEX_VAR_DTYPES or is_unsigned(spec):
                    d["tir.dtype"] = ir.StringAttr.get(spec)
                arg_attrs.append(ir.DictAttr.get(d))
                buffers.append((name, None, spec, None, pos))
                continue
            if kind == "handle":
                if name not in matched:
                    self.fail(f"handle parameter {name!r} is never bound by T.match_buffer", pos)
                bname, shape, dtype, index, layout, bpos = matched[name]
                extra = {"tir.param": ir.StringAttr.get(name), **layout}
            else:
                bname, (shape, dtype, index, extra), bpos = name, spec, pos
            d = {"tir.name": ir.StringAttr.get(bname), **extra}
            if is_unsigned(dtype):
                d["tir.dtype"] = ir.StringAttr.get(dtype)
            if buffer_attr(index) is not None:
                d[INDEX_DTYPE] = buffer_attr(index)
            inputs.append(self.memref_type(shape, dtype))
            arg_attrs.append(ir.DictAttr.get(d))
            buffers.append((bname, shape, dtype, index, bpos))
        for name, dtype, pos in implicit:
            inputs.append(ir.IndexType.get())
            arg_attrs.append(
                ir.DictAttr.get(
                    {
                        "tir.name": ir.StringAttr.get(name),
                        "tir.dtype": ir.StringAttr.get(dtype),
                        IMPLICIT: ir.UnitAttr.get(),
                    }
                )
            )
            buffers.append((name, None, dtype, None, pos))
        fop = func.FuncOp(f.name, ir.FunctionType.get(inputs, []), loc=self.loc(f.pos))
        fop.attributes["tir.prim_func"] = ir.UnitAttr.get()
        if private:
            fop.attributes["tir.private"] = ir.UnitAttr.get()
        if attrs is not None:
            fop.attributes["tir.func_attrs"] = attrs
        if arg_attrs:
            fop.arg_attrs = ir.ArrayAttr.get(arg_attrs)
        entry = fop.add_entry_block([self.loc(b[4]) for b in buffers])
        for (bname, shape, dtype, index, bpos), arg in zip(buffers, entry.arguments):
            if shape is None:  # a scalar parameter or an implicit var
                self.env[bname] = Val(arg, "index" if dtype in INDEX_VAR_DTYPES else dtype)
        body = [s for s in body if id(s) not in consumed]
        body, root_attrs = self._unwrap_root(body)
        if root_attrs:
            set_root_annotations(fop, root_attrs)
        with ir.InsertionPoint(entry):
            for (bname, shape, dtype, index, bpos), arg in zip(buffers, entry.arguments):
                if shape is None:
                    continue
                if not all(isinstance(d, int) for d in shape):
                    shape = self.match_shape(arg, shape, bpos)
                self.env[bname] = Buffer(bname, arg, shape, dtype, index, bpos)
            self._check_bound(implicit, entry)
            self.stmts(body)
            func.ReturnOp([], loc=self.loc(f.pos))

    def _check_bound(self, implicit, entry):
        """Each implicit var is bound by a buffer shape: a call derives it from the arrays
        (TVM refuses the function otherwise: 'undefined variable')."""
        bound = {
            v
            for op in entry.operations
            if op.operation.name == MATCH_SHAPE
            for v in list(op.operation.operands)[1:]
        }
        args = list(entry.arguments)[len(entry.arguments) - len(implicit) :]
        for (name, _, pos), arg in zip(implicit, args):
            if arg not in bound:
                self.fail(
                    f"symbolic var {name!r} is in no buffer shape of the function, so no "
                    f"call could give its value (make it a scalar parameter, "
                    f"{name}: T.int32, or use it in a T.match_buffer shape)",
                    pos,
                )

    def _unwrap_root(self, body):
        """An explicit `with T.block("root"):` around the whole body is the implicit root block.
        Its `T.block_attr` becomes the root annotations (kept on the function, as
        `Schedule.annotate(get_block("root"), ...)` writes them); a root with non-empty
        `T.reads`/`T.writes` (a tensor intrinsic's description) stays a block, as TVM prints
        it. Returns the body and the root annotations ({} when none)."""
        real = [s for s in body if not isinstance(s, A.Pass)]
        if not (
            len(real) == 1
            and isinstance(real[0], A.With)
            and callee(real[0].item) == "block"
            and len(real[0].item.args) == 1
            and isinstance(real[0].item.args[0], A.Const)
            and real[0].item.args[0].value == "root"
        ):
            return body, {}
        header = [s for s in real[0].body if isinstance(s, A.ExprStmt)]
        if any(callee(s.value) in ("reads", "writes") and s.value.args for s in header):
            return body, {}
        attrs = [s for s in header if callee(s.value) == "block_attr"]
        if len(attrs) > 1 or any(len(s.value.args) != 1 for s in attrs):
            return body, {}  # the block's own header check reports it
        root_attrs = {}
        for s in attrs:
            d = ir.DictAttr(self.dict_arg(s.value.args[0], "T.block_attr"))
            root_attrs = {n.name: n.attr for n in d}
        skip = ("reads", "writes", "block_attr")
        inner = [
            s for s in real[0].body if not (isinstance(s, A.ExprStmt) and callee(s.value) in skip)
        ]
        return inner, root_attrs

    def _param(self, p, handles):
        ann = p.annotation
        if ann is None:
            self.fail(f"parameter {p.name!r} needs a type annotation (T.Buffer or T.handle)", p.pos)
        name = A.dotted_name(ann)
        norm = strip_prefix(name) if name else None
        if norm == "handle":
            handles[p.name] = p.pos
            self.env[p.name] = Handle(p.name)
            return ("handle", p.name, None, p.pos)
        if norm in DTYPES:  # a scalar parameter (docs/symbolic.md)
            if norm in INDEX_VAR_DTYPES:
                self.env[p.name] = SymbolDecl(p.name, norm)
            return ("scalar", p.name, norm, p.pos)
        if isinstance(ann, A.Call) and callee(ann) == "Buffer":
            shape, dtype, _, index = self.buffer_spec(ann, ann.args, "T.Buffer", symbolic=True)
            layout = self.layout_attrs(ann, len(shape))
            return ("buffer", p.name, (shape, dtype, index, layout), p.pos)
        if (
            isinstance(ann, A.Subscript)
            and strip_prefix(A.dotted_name(ann.value) or "") == "Buffer"
        ):
            fake = A.Call(ann.value, ann.indices, [], ann.pos)
            shape, dtype, _, index = self.buffer_spec(fake, ann.indices, "T.Buffer")
            return ("buffer", p.name, (shape, dtype, index, {}), p.pos)
        self.fail(
            f"unsupported type annotation for parameter {p.name!r} "
            "(expected T.Buffer(shape, dtype) or T.handle)",
            ann.pos,
        )

    def _match_buffer(self, s, handles, matched):
        call = s.value
        if not isinstance(s, A.Assign) or not isinstance(s.target, A.Name):
            self.fail(
                "T.match_buffer must be assigned to a buffer name: A = T.match_buffer(a, ...)",
                s.pos,
            )
        if not call.args or not isinstance(call.args[0], A.Name):
            self.fail("T.match_buffer needs a handle parameter as its first argument", call.pos)
        h = call.args[0].id
        if h not in handles:
            self.fail(f"{h!r} is not a T.handle parameter of this function", call.args[0].pos)
        if h in matched:
            self.fail(f"handle {h!r} is matched twice", call.pos)
        call, extra = self.layout_kwargs(call)
        shape, dtype, scope, index = self.buffer_spec(
            call, call.args[1:], "T.match_buffer", "global", symbolic=True
        )
        if scope != "global":
            extra[SCOPE] = scope_attr(scope)
        extra.update(self.layout_attrs(call, len(shape)))  # axis_separators
        matched[h] = (s.target.id, shape, dtype, index, extra, s.pos)

    def layout_kwargs(self, call):
        """(the call without them, attributes) for the `offset_factor=` and `align=` of a
        T.match_buffer, which TVM prints back."""
        kw = {k: (v, p) for k, v, p in call.kwargs}
        attrs = {
            f"tir.{k}": int_attr(f"tir.{k}", self.static_index(kw.pop(k)[0], k)[0])
            for k in ("offset_factor", "align")
            if k in kw
        }
        return A.Call(
            call.func, call.args, [(k, v, p) for k, (v, p) in kw.items()], call.pos
        ), attrs

    # --- statements ---------------------------------------------------------------------------
    def stmts(self, stmts):
        stmts = list(stmts)
        for k, s in enumerate(stmts):
            loop = launch_thread.as_loop(self, s, stmts[k + 1 :])
            if loop is not None:  # the rest of the body runs in the launched thread
                return self.stmt(loop)
            self.stmt(s)

    def nested(self, s, fn, *args):
        """Run fn one nesting level deeper, in a fresh scope."""
        if self.depth >= MAX_NESTING:
            self.fail(f"statements nested too deeply (more than {MAX_NESTING} levels)", s.pos)
        self.depth += 1
        self.env.push()
        try:
            return fn(*args)
        finally:
            self.env.pop()
            self.depth -= 1

    def stmt(self, s):
        if isinstance(s, A.For):
            return self.nested(s, self.for_, s)
        if isinstance(s, A.With):
            return self.nested(s, self.with_, s)
        if isinstance(s, A.If):
            return self.nested(s, self.if_, s)
        if isinstance(s, A.Assign):
            return self.assign(s)
        if isinstance(s, A.AnnAssign):
            return self.ann_assign(s)
        if isinstance(s, A.AugAssign):
            return self.aug_assign(s)
        if isinstance(s, A.ExprStmt):
            return self.expr_stmt(s)
        if isinstance(s, (A.Pass, A.Import)):
            return None
        if isinstance(s, A.Return):
            self.fail("'return' is not supported in a prim_func", s.pos)
        if isinstance(s, (A.FuncDef, A.ClassDef)):
            self.fail("nested function or class definitions are not supported", s.pos)
        self.fail(f"unsupported statement {type(s).__name__}", s.pos)

    def _place(self, block):
        return ir.InsertionPoint.at_block_terminator(block)

    # loops
    def for_(self, s):
        targets = s.target.items if isinstance(s.target, A.Tuple_) else [s.target]
        for t in targets:
            if not isinstance(t, A.Name):
                self.fail("a loop variable must be a plain name", t.pos)
        it = s.iter
        name = callee(it)
        if name is None:
            self.fail(
                "expected range(...), T.grid(...) or T.serial/parallel/vectorized/unroll/"
                "thread_binding(...) after 'in'",
                it.pos,
            )
        kw = {k: (v, p) for k, v, p in it.kwargs}
        if name == "grid":
            for k, (_, p) in kw.items():
                self.fail(f"T.grid got an unexpected keyword argument {k!r}", p)
            if len(it.args) != len(targets):
                self.fail(
                    f"T.grid has {len(it.args)} extents but {len(targets)} loop variables", s.pos
                )
            specs = [
                (0, 0, "int32", "serial", None, None, self._affine_bounds([a]))
                if self._uses_loop_vars(a)
                # T.grid(i, 128) under loop i
                else (
                    0,
                    self.sym_expr(a, "a loop extent", True),
                    self.symbol_dtype(a),
                    "serial",
                    None,
                    None,
                )
                if self.uses_symbols(a)
                else (0,) + self.static_index(a, "a loop extent") + ("serial", None, None)
                for a in it.args
            ]
        elif name == "range" or name in LOOP_KINDS:
            kind = "serial" if name == "range" else name
            args = list(it.args)
            thread = annotations = None
            if kind == "thread_binding":
                if (
                    len(args) >= 2
                    and isinstance(args[-1], A.Const)
                    and isinstance(args[-1].value, str)
                ):
                    kw.setdefault("thread", (args.pop(), it.pos))
                if "thread" not in kw:
                    self.fail('T.thread_binding needs thread="..."', it.pos)
                value, pos = kw.pop("thread")
                thread = self.static_str(value, "thread")
                if thread not in THREAD_TAGS:
                    self.fail(
                        f"unknown thread tag {thread!r} (expected one of {', '.join(THREAD_TAGS)})",
                        pos,
                    )
            if "annotations" in kw and name != "range":
                d = ir.DictAttr(self.dict_arg(kw.pop("annotations")[0], "annotations"))
                annotations = {a.name: a.attr for a in d}
            for k, (_, p) in kw.items():
                self.fail(
                    f"{'range' if name == 'range' else 'T.' + name} got an unexpected "
                    f"keyword argument {k!r}",
                    p,
                )
            if len(args) not in (1, 2):
                self.fail(
                    f"{'range' if name == 'range' else 'T.' + name} takes 1 or 2 "
                    f"arguments, got {len(args)}",
                    it.pos,
                )
            if len(targets) != 1:
                self.fail(f"{len(targets)} loop variables for one loop", s.pos)
            if any(self._uses_loop_vars(a) for a in args):
                specs = [(0, 0, "int32", kind, thread, annotations, self._affine_bounds(args))]
            elif any(self.uses_symbols(a) for a in args):  # range(n): symbols
                lo = self.sym_expr(args[0], "a loop bound") if len(args) == 2 else 0
                hi = self.sym_expr(args[-1], "a loop bound")
                dtype = wider(*(self.symbol_dtype(a) for a in args))
                specs = [(lo, hi - lo, dtype, kind, thread, annotations)]
            else:
                lo, lo_dtype = (
                    self.static_index(args[0], "a loop bound") if len(args) == 2 else (0, "int32")
                )
                hi, hi_dtype = self.static_index(args[-1], "a loop bound")
                specs = [(lo, hi - lo, wider(lo_dtype, hi_dtype), kind, thread, annotations)]
        else:
            self.fail(
                f"cannot loop over {A.dotted_name(it.func)}(...) (expected range, T.grid, "
                "T.serial, T.parallel, T.vectorized, T.unroll or T.thread_binding)",
                it.pos,
            )
        loops, body = self._loops([(t.id,) + spec for t, spec in zip(targets, specs)], s.pos)
        with self._place(body):
            self.stmts(s.body)
        del self.loops[len(self.loops) - len(loops) :]

    def _constant_bound(self, node) -> bool:
        """False when a loop bound names a loop variable (`range(i + 1)`)."""
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, A.Name) and isinstance(self.env.get(n.id), Val):
                return False
            if isinstance(n, A.BinOp):
                stack += [n.lhs, n.rhs]
            elif isinstance(n, A.UnaryOp):
                stack.append(n.operand)
        return True

    def _uses_loop_vars(self, node) -> bool:
        """Whether `node` names a loop, block or let variable (not a symbol of the function)."""
        for n in A.names_used(node):
            v = self.env.get(n.id)
            if isinstance(v, Val) and not is_symbol(v.value):
                return True
        return False

    def _affine_bounds(self, args):
        """((lower map, operands), (upper map, operands)) of `range(lo, hi)` whose bounds are
        affine in enclosing loop variables (TVM's triangular loops) and symbols."""
        ab = AffineBuilder(self.env, symbols=True)
        exprs = []
        for a in ([A.Const(0, args[0].pos)] if len(args) == 1 else []) + list(args):
            try:
                exprs.append(ab.expr(a)[0])
            except NotAffine as e:
                self.fail(
                    f"a loop bound must be a constant or affine in enclosing loop "
                    f"variables: {e.args[0]}",
                    e.args[1] or a.pos,
                )
        for d, val in zip(ab.dims, ab.dim_vals):
            if not (isinstance(d.owner, ir.Block) and Loop.is_loop(d.owner.owner)):
                self.fail(
                    "a loop bound may depend on enclosing loop variables only, not on "
                    "block iter vars",
                    args[-1].pos,
                )
        n, m = len(ab.dims), len(ab.syms)
        return tuple(
            (
                ir.AffineMap.get(n, m, [ir.AffineExpr.simplify_affine_expr(e, n, m)]),
                list(ab.dims) + list(ab.syms),
            )
            for e in exprs
        )

    def _loops(self, specs, pos):
        """Nested affine.for loops at the current point; their vars enter scope."""
        body = None
        loops = []
        for name, lo, extent, index, kind, thread, annotations, *bounds in specs:
            if isinstance(lo + extent, int) and not fits(lo + extent, "int64"):
                self.fail("loop bound out of range", pos)
            loop = Loop.build(
                name,
                extent,
                min=lo,
                kind=kind,
                thread=thread,
                annotations=annotations,
                index_dtype=index,
                bounds=bounds[0] if bounds else None,
                loc=self.loc(pos),
                ip=None if body is None else self._place(body),
            )
            body = loop.body
            v = Val(loop.iv, "index", (lo, extent) if not bounds else None)
            self.env[name] = v
            self.loops.append(v)
            loops.append(v)
        return loops, body

    # if
    def if_(self, s):
        c = self.ex.eval(s.cond)
        if not (
            isinstance(c, Val)
            and c.dtype == "bool"
            or isinstance(c, Lit)
            and isinstance(c.value, bool)
        ):
            self.fail(f"an if condition must be bool, found {describe(c)}", s.cond.pos)
        if isinstance(c, Lit) and c.dtype is None:  # a Python bool (`if True:`, a captured flag):
            self.env.push()  # as TVM, only the branch it selects is built (T.bool(True) is not)
            try:
                return self.stmts(s.body if c.value else s.orelse)
            finally:
                self.env.pop()
        cond = self.ex.materialize(c, s.pos, "bool").value
        op = scf.IfOp(cond, [], has_else=bool(s.orelse), loc=self.loc(s.pos))
        blocks = [r.blocks[0] for r in op.regions if len(r.blocks)]  # then, and else if made
        branches = list(zip(blocks, [s.body, s.orelse]))
        for block, stmts in branches:
            with ir.InsertionPoint(block):
                self.env.push()
                try:
                    self.stmts(stmts)
                finally:
                    self.env.pop()
                scf.YieldOp([], loc=self.loc(s.pos))

    # with
    def with_(self, s):
        name = callee(s.item)
        if name == "block":
            return self.block(s)
        if name == "init":
            self.fail("T.init() must be directly inside a T.block", s.pos)
        self.fail("unsupported 'with' statement (expected T.block)", s.item.pos)

    # --- blocks -------------------------------------------------------------------------------
    def block(self, s):
        call = s.item
        args = call.args
        old_style = args and isinstance(args[0], A.List_)
        name_node = args[1] if old_style and len(args) > 1 else (args[0] if args else None)
        if "name_hint" in {k for k, _, _ in call.kwargs}:
            name_node = call.kw("name_hint")
        if name_node is None:
            self.fail('T.block needs a name: with T.block("name"):', call.pos)
        bname = self.static_str(name_node, "a block name")
        if bname in self.block_names:
            self.fail(
                f"duplicate block name {bname!r}",
                call.pos,
                [("first defined here", self.block_names[bname])],
            )
        self.block_names[bname] = call.pos
        header = self._block_header(s)
        implicit = None
        if old_style:
            implicit = self._old_style_vars(s, call, header)
        elif s.target is not None:
            self.fail(
                "'as' is only used with the 2021 block syntax T.block([extents], name)",
                s.target.pos,
            )
        if implicit is None:
            return self._emit_block(s, bname, header)
        with self._place(implicit):
            return self._emit_block(s, bname, header)

    def _emit_block(self, s, bname, header):
        ab = AffineBuilder(self.env, self.ex, symbols=True)
        results = []
        for v in header["vars"]:
            results.append(self._binding(ab, v))
        predicate = None
        if header["where"] is not None:
            try:
                exprs, eqs, ops = ab.conditions(header["where"].args[0])
            except NotAffine as e:
                self.fail(
                    f"T.where condition must be affine: {e.args[0]}",
                    e.args[1] or header["where"].pos,
                )
        n, m = len(ab.dims), len(ab.syms)
        simplify = ir.AffineExpr.simplify_affine_expr
        bindings = ir.AffineMap.get(n, m, [simplify(e, n, m) for e in results])
        if header["where"] is not None:
            exprs = [simplify(e, n, m) for e in exprs]
            predicate = ir.IntegerSet.get(n, m, exprs, eqs)
        annotations = None
        if header["attr"] is not None:
            annotations = {a.name: a.attr for a in header["attr"]}
        vars_ = header["vars"]
        blk = Block.build(
            bname,
            [v["name"] for v in vars_],
            [v["kind"] for v in vars_],
            [v["dom"] for v in vars_],
            bindings,
            ab.dims,
            symbols=ab.syms,
            predicate=predicate,
            annotations=annotations,
            has_init=header["init"] is not None,
            index_dtypes=[v["idx"] for v in vars_],
            loc=self.loc(s.pos),
        )
        if header["where"] is not None:
            blk.where_spelling = {str(e): op for e, op in zip(exprs, ops) if op == ">="}
        blk.const_first_bindings = {
            str(e)
            for v, e in zip(vars_, bindings.results)
            if isinstance(v["binding"], A.BinOp)
            and v["binding"].op == "+"
            and isinstance(v["binding"].lhs, A.Const)
            and isinstance(v["binding"].lhs.value, int)
            and not isinstance(v["binding"].rhs, A.Const)
        }
        # kept as written where the printer would write otherwise: `(f0 * 1024 + f1) // 512`,
        # `T.where(i_0 * 100 + (i_1_0 * 10 + i_1_1) < 512)`
        where = header["where"]
        hints, wheres = binding_trees.written(
            blk.op,
            [ab.tree(v["binding"]) for v in vars_],
            ab.bound_trees(where.args[0]) if where is not None else [],
        )
        if hints:
            blk.binding_trees = hints
        if wheres:
            blk.where_trees = wheres
        if bname == "root" and not vars_ and any(c.args for c in header["regions"]):
            blk.op.attributes[EXPLICIT_ROOT] = ir.UnitAttr.get()  # printed, as TVM does
        outer_loops, outer_in_block = self.loops, self.in_block
        self.loops, self.in_block = [], True
        try:
            regions = [(blk.body, header["body"])]
            init = blk.init
            if header["init"] is not None and init is not None:  # (made with an init region)
                regions.append((init, header["init"].body))
            for region_block, stmts in regions:
                self.env.push()
                try:
                    for v, arg in zip(vars_, region_block.arguments):
                        self.env[v["name"]] = Val(arg, "index", v["dom"])
                    with self._place(region_block):
                        self.stmts(stmts)
                    if region_block == blk.body:
                        self._check_regions(header["regions"], opaque=not vars_)
                        explicit_regions.record(self.env, blk, header["regions"], annotations)
                finally:
                    self.env.pop()
            explicit_regions.record_order(blk, header["regions"])
        finally:
            self.loops, self.in_block = outer_loops, outer_in_block

    def _block_header(self, s):
        """Split a block body into its header (iter vars, reads/writes, where, attrs, init)."""
        h = {
            "vars": [],
            "where": None,
            "attr": None,
            "init": None,
            "body": [],
            "regions": [],
            "binds": [],
        }
        self._check_defined_before_use(s.body)
        given = {}
        for st in s.body:
            value = st.value if isinstance(st, (A.Assign, A.ExprStmt)) else None
            name = callee(value)
            if isinstance(st, A.ExprStmt) and name in ("reads", "writes", "block_attr"):
                if name in given:
                    self.fail(f"T.{name} given twice", st.pos, [("first given here", given[name])])
                given[name] = st.pos
            if isinstance(st, A.Assign) and name in AXIS_KINDS:
                h["vars"].append(self._axis(st, name))
            elif isinstance(st, A.Assign) and name == "axis.remap":
                h["vars"].extend(self._remap(st))
            elif isinstance(st, A.ExprStmt) and name in ("reads", "writes"):
                h["regions"].append(st.value)
            elif isinstance(st, A.ExprStmt) and isinstance(value, A.Call) and name == "where":
                if h["where"] is not None:
                    self.fail("T.where given twice", st.pos)
                if len(value.args) != 1:
                    self.fail("T.where takes one condition", st.pos)
                h["where"] = value
            elif isinstance(st, A.ExprStmt) and isinstance(value, A.Call) and name == "block_attr":
                if len(value.args) != 1:
                    self.fail("T.block_attr takes one dictionary", st.pos)
                h["attr"] = ir.DictAttr(self.dict_arg(value.args[0], "T.block_attr"))
            elif isinstance(st, A.ExprStmt) and name == "bind":
                h["binds"].append(value)
            elif isinstance(st, A.With) and callee(st.item) == "init":
                if h["init"] is not None:
                    self.fail("a block has at most one T.init()", st.pos)
                if st.item.args or st.item.kwargs:
                    self.fail("T.init() takes no arguments", st.item.pos)
                h["init"] = st
            else:
                h["body"].append(st)
        seen = {}
        for v in h["vars"]:
            if v["name"] in seen:
                self.fail(f"block iter var {v['name']!r} defined twice", v["pos"])
            seen[v["name"]] = v
        return h

    def _check_defined_before_use(self, stmts):
        """A block's statements run in order (TVM evaluates them so): an iter var
        (T.axis.*) is undefined in the statements before its own."""
        defined_at = {}
        for k, st in enumerate(stmts):
            if isinstance(st, A.Assign) and callee(st.value) in (*AXIS_KINDS, "axis.remap"):
                targets = (
                    st.target.items if isinstance(st.target, (A.Tuple_, A.List_)) else [st.target]
                )
                for t in targets:
                    if isinstance(t, A.Name):
                        defined_at.setdefault(t.id, (k, t.pos))
        for k, st in enumerate(stmts):
            for n in sorted(A.names_used(st), key=lambda n: n.pos):
                later = defined_at.get(n.id)
                if later is not None and later[0] > k and not self.env.get(n.id):
                    self.fail(
                        f"undefined variable {n.id!r} (it is defined later in the block)",
                        n.pos,
                        [(f"{n.id!r} defined here", later[1])],
                    )

    def _dom(self, node):
        """((min, extent), index dtype) of an iter var domain: `128`, `(lo, hi)`,
        `T.int64(128)` (the iter var is then an int64); an extent affine in loop variables
        (`T.axis.spatial(i, j)` under `for j in range(i)`) is its largest value."""
        if isinstance(node, A.Tuple_) and len(node.items) == 2:
            if any(self.uses_symbols(x) and not self._uses_loop_vars(x) for x in node.items):
                lo, hi = (self.sym_expr(x, "a domain bound", True) for x in node.items)
                return (lo, hi - lo), wider(*(self.symbol_dtype(x) for x in node.items))
            lo, d0 = self.static_index(node.items[0], "a domain bound")
            hi, d1 = self.static_index(node.items[1], "a domain bound")
            return (lo, hi - lo), wider(d0, d1)
        if self.uses_symbols(node) and not self._uses_loop_vars(node):  # T.axis.spatial(n, i)
            extent = self.sym_expr(node, "a block iter var extent", True)
            return (0, extent), self.symbol_dtype(node)
        if not self._constant_bound(node):
            _, (umap, operands) = self._affine_bounds([node])
            ranges = [Loop(v.owner.owner).iv_range() for v in operands]
            bounds = expr_bounds(umap.results[0], ranges)
            if bounds is None:
                self.fail(
                    "a block iter var extent over the loops must have constant bounds", node.pos
                )
            return (0, max(1, bounds[1])), "int32"
        ext, d = self.static_index(node, "a block iter var extent")
        return (0, ext), d

    def _axis(self, st, name):
        call = st.value
        if not isinstance(st.target, A.Name):
            self.fail(f"T.{name} must be assigned to one name", st.pos)
        if len(call.args) != 2:
            self.fail(
                f"T.{name} takes a domain and a binding: T.{name}(128, i), "
                f"got {len(call.args)} arguments",
                call.pos,
            )
        dom, idx = self._dom(call.args[0])
        return {
            "name": st.target.id,
            "kind": AXIS_KINDS[name],
            "dom": dom,
            "idx": idx,
            "binding": call.args[1],
            "pos": st.pos,
        }

    def _remap(self, st):
        call = st.value
        targets = st.target.items if isinstance(st.target, A.Tuple_) else [st.target]
        if len(call.args) != 2 or not isinstance(call.args[1], (A.List_, A.Tuple_)):
            self.fail(
                'T.axis.remap takes a kinds string and a list: T.axis.remap("SR", [i, k])', call.pos
            )
        kinds = self.static_str(call.args[0], "the T.axis.remap kinds")
        loops = call.args[1].items
        if len(kinds) != len(loops) or len(kinds) != len(targets):
            self.fail(
                f"T.axis.remap kinds {kinds!r} has {len(kinds)} letter"
                f"{'s' if len(kinds) != 1 else ''} but there are {len(targets)} variables "
                f"and {len(loops)} loop vars",
                call.args[0].pos,
            )
        out = []
        for k, t, l in zip(kinds, targets, loops):
            if k not in "SR":
                self.fail(
                    f"T.axis.remap kind {k!r} is not S (spatial) or R (reduce)", call.args[0].pos
                )
            if not isinstance(t, A.Name):
                self.fail("T.axis.remap must be assigned to names", t.pos)
            if not isinstance(l, A.Name):
                self.fail("T.axis.remap binds loop variables (plain names)", l.pos)
            v = self.env.get(l.id)
            if v is None:
                self.fail(f"undefined variable {l.id!r}", l.pos)
            dom = v.dom if isinstance(v, Val) else None
            if (
                isinstance(v, Val)
                and dom is None
                and isinstance(v.value.owner, ir.Block)
                and Loop.is_loop(v.value.owner.owner)
            ):
                # bounds on outer loops (TVM's domain over them): the widest range
                first, last = Loop(v.value.owner.owner).iv_range()
                dom = (first, last - first + 1)
            if dom is None:
                self.fail(f"{l.id!r} is not a loop variable", l.pos)
            out.append(
                {
                    "name": t.id,
                    "kind": k,
                    "dom": dom,
                    "idx": index_dtype(v.value),
                    "binding": l,
                    "pos": t.pos,
                }
            )
        return out

    def _binding(self, ab, v):
        try:
            expr, _ = ab.expr(v["binding"])
        except NotAffine as e:
            self.fail(
                f"binding of {v['name']!r} must be affine: {e.args[0]}", e.args[1] or v["pos"]
            )
        return expr

    def _old_style_vars(self, s, call, header):
        """2021 syntax: `with tir.block([128, tir.reduce_axis(0, 128)], "Z") as [i, k]:`."""
        if header["vars"]:
            self.fail("mixing T.axis.* with the 2021 block syntax", header["vars"][0]["pos"])
        targets = (
            s.target.items
            if isinstance(s.target, (A.List_, A.Tuple_))
            else ([s.target] if s.target is not None else [])
        )
        extents = call.args[0].items
        if len(targets) != len(extents):
            self.fail(
                f"the block has {len(extents)} extents but {len(targets)} variables after 'as'",
                s.pos,
            )
        vars_ = []
        for t, e in zip(targets, extents):
            if not isinstance(t, A.Name):
                self.fail("block variables must be names", t.pos)
            kind, dom = "S", None
            n = callee(e)
            if n in ("reduce_axis", "range", "scan_axis", "opaque_axis"):
                if len(e.args) != 2:
                    self.fail(f"T.{n} takes (min, max)", e.pos)
                kind = {"reduce_axis": "R", "range": "S"}.get(n, "O")
                dom, idx = self._dom(A.Tuple_(e.args, e.pos))
            else:
                dom, idx = self._dom(e)
            vars_.append(
                {"name": t.id, "kind": kind, "dom": dom, "idx": idx, "binding": None, "pos": t.pos}
            )
        binds = {}
        for b in header["binds"]:
            if len(b.args) != 2 or not isinstance(b.args[0], A.Name):
                self.fail("T.bind takes a block variable and a binding", b.pos)
            binds[b.args[0].id] = b.args[1]
        if binds:
            for v in vars_:
                if v["name"] not in binds:
                    self.fail(f"block variable {v['name']!r} has no T.bind", v["pos"])
                v["binding"] = binds[v["name"]]
        elif self.loops:
            if len(self.loops) != len(vars_):
                self.fail(
                    f"the block has {len(vars_)} variables but {len(self.loops)} enclosing "
                    "loops: bind them with T.bind",
                    s.pos,
                )
            for v, l in zip(vars_, self.loops):
                v["binding"] = l
        else:
            # No enclosing loops: the block makes its own, named like its variables.
            loops, body = self._loops(
                [
                    (v["name"], v["dom"][0], v["dom"][1], v["idx"], "serial", None, None)
                    for v in vars_
                ],
                s.pos,
            )
            del self.loops[len(self.loops) - len(vars_) :]
            for v, l in zip(vars_, loops):
                v["binding"] = l
            header["vars"] = vars_
            return body
        header["vars"] = vars_
        return None

    def _check_regions(self, calls, opaque=False):
        """T.reads / T.writes: check that each region names a buffer, then drop it."""
        for call in calls:
            items = []
            for a in call.args:
                items.extend(a.items if isinstance(a, (A.List_, A.Tuple_)) else [a])
            for r in items:
                target = r.value if isinstance(r, A.Subscript) else r
                if not isinstance(target, A.Name):
                    self.fail(
                        f"T.{callee(call)} expects buffer regions like A[i, 0:128]",
                        getattr(r, "pos", call.pos),
                    )
                buf = self.env.get(target.id)
                if not isinstance(buf, Buffer):
                    self.fail(
                        f"undefined buffer {target.id!r} in T.{callee(call)}"
                        if buf is None
                        else f"{target.id!r} is not a buffer",
                        target.pos,
                    )
                if isinstance(r, A.Subscript):
                    idx = self._region_rank_checked(r, buf, "the region has")
                    self._check_region_indices(idx, callee(call), opaque)

    def _region_rank_checked(self, sub, buf, but):
        """The indices of `sub` (`B[i, j]` or `B[(i, j)]`), one per dimension of `buf`."""
        idx = sub.indices
        if len(idx) == 1 and isinstance(idx[0], A.Tuple_):
            idx = idx[0].items
        if len(idx) != len(buf.shape):
            self.fail(
                f"buffer {buf.name!r} has {len(buf.shape)} dimensions but {but} {len(idx)}",
                sub.pos,
                [buf.declared()],
            )
        return idx

    def _check_region_indices(self, indices, what, opaque=False):
        """The regions are re-inferred, but their indices must still be valid expressions
        over defined names (TVM evaluates them); a block with iterators may not name the loop
        variables around it (TVM: not well-formed)."""
        stack, folded = list(indices), set()
        in_cast = set()  # ids of nodes under T.int32(...) etc.: floats are fine there
        while stack:
            node = stack.pop()
            floats_refused = id(node) not in in_cast
            value = self.env.get(node.id) if isinstance(node, A.Name) else None
            if isinstance(value, Buffer):
                self.fail(f"T.{what}: buffer {node.id!r} is not an index", node.pos)
            if not opaque and isinstance(value, Val) and _is_loop_var(value.value):
                self.fail(
                    f"T.{what} is not well-formed: it uses loop variable {node.id!r} "
                    f"defined outside the block; use a block iterator",
                    node.pos,
                )
            if (
                isinstance(node, (A.BinOp, A.UnaryOp))
                and id(node) not in folded
                and not any(A.names_used(node))
            ):
                value = self.ex.eval(node)  # Python number arithmetic: folded, as in TVM
                if (
                    isinstance(value, Lit)
                    and isinstance(value.value, int)
                    and not isinstance(value.value, bool)
                    and not fits(value.value, "int64")
                ):
                    self.fail(f"literal {value.value} does not fit in int64", node.pos)
                folded.update(
                    id(n)
                    for n in ([node.lhs, node.rhs] if isinstance(node, A.BinOp) else [node.operand])
                )
            if isinstance(node, A.Name) and self.env.get(node.id) is None:
                self.fail(f"undefined variable {node.id!r} in T.{what}", node.pos)
            if isinstance(node, A.Const) and not isinstance(node.value, int) and floats_refused:
                self.fail(
                    f"T.{what}: a region index must be an integer expression, got {node.value!r}",
                    node.pos,
                )
            if isinstance(node, A.Attr):
                self.fail(f"T.{what}: {node.dotted() or 'an attribute'} is not an index", node.pos)
            literal = [
                isinstance(x, A.Const)
                for x in (
                    [node.lhs, node.rhs]
                    if isinstance(node, A.BinOp)
                    else [node.operand]
                    if isinstance(node, A.UnaryOp)
                    else []
                )
            ]
            if (
                isinstance(node, A.BinOp)
                and (node.op == "/" or node.op == "**" and not all(literal))
                or isinstance(node, A.UnaryOp)
                and node.op == "+"
                and not all(literal)
            ):
                self.fail(
                    f"T.{what}: operator {node.op!r} is not allowed in an integer index "
                    f"(as in TVM)",
                    node.pos,
                )
            buf = (
                self.env.get(node.value.id)
                if isinstance(node, A.Subscript) and isinstance(node.value, A.Name)
                else None
            )
            if isinstance(buf, Buffer):  # a load: its indices are checked, not its name
                idx = self._region_rank_checked(node, buf, "is indexed with")
                if is_float(buf.dtype) and floats_refused:
                    self.fail(
                        f"T.{what}: a region index must be an integer expression, got a "
                        f"load of the {buf.dtype} buffer {buf.name!r}",
                        node.pos,
                    )
                stack.extend(x for x in idx if isinstance(x, A.Node))
                continue
            if isinstance(node, A.Call):  # T.min(...), T.int64(...): check the arguments
                fn = callee(node) or ""
                if not fn:
                    self.fail(f"unknown function {A.dotted_name(node.func) or 'call'!r}", node.pos)
                if fn.startswith("axis."):
                    self.fail(f"T.{fn} cannot be used inside an expression", node.pos)
                if fn not in EXPR_CALLS and fn not in DTYPES and _fixed_arity(fn) is None:
                    self.fail(f"T.{what}: T.{fn} is not an expression", node.pos)
                if fn == "pow":  # (TVM's pow of integers fails too)
                    self.fail(f"T.{what}: T.pow is not an integer expression", node.pos)
                if fn in DTYPES and is_float(fn) and floats_refused:
                    self.fail(
                        f"T.{what}: a region index must be an integer expression, got T.{fn}(...)",
                        node.pos,
                    )
                if fn in DTYPES and all(n.id == "T" for n in A.names_used(node.args)):
                    self.ex.eval(node)  # a literal out of its dtype's range: an error
                n = _fixed_arity(fn)
                if n is not None and len(node.args) != n:
                    self.fail(
                        f"T.{fn} takes {n} argument{'s' if n != 1 else ''}, got {len(node.args)}",
                        node.pos,
                    )
                children = list(node.args) + [v for _, v, _ in node.kwargs]
                cast_to = fn
                if fn == "Cast" and children and isinstance(children[0], A.Const):
                    cast_to, children = children[0].value, children[1:]  # T.Cast("int32", x)
                    if cast_to not in DTYPES:
                        self.fail(f"T.Cast: unknown dtype {cast_to!r}", node.pos)
                    if is_float(cast_to) and floats_refused:
                        self.fail(
                            f"T.{what}: a region index must be an integer expression, "
                            f"got T.Cast({cast_to!r}, ...)",
                            node.pos,
                        )
                if cast_to in DTYPES and not is_float(cast_to) or not floats_refused:
                    in_cast.update(map(id, children))
                stack.extend(children)
                continue
            children = []
            for value in vars(node).values() if isinstance(node, A.Node) else ():
                if isinstance(value, A.Node):
                    children.append(value)
                elif isinstance(value, (list, tuple)):
                    children.extend(v for v in value if isinstance(v, A.Node))
            if not floats_refused:
                in_cast.update(map(id, children))
            stack.extend(children)

    # --- simple statements --------------------------------------------------------------------
    def assign(self, s):
        t, v = s.target, s.value
        name = callee(v)
        if isinstance(t, A.Subscript):
            return self.store(t, self.ex.eval(v), s.pos)
        if name in AXIS_KINDS or name == "axis.remap":
            self.fail(f"T.{name} must be directly inside a T.block", s.pos)
        if name == "match_buffer":
            if (
                self.in_block
                and v.args
                and isinstance(v.args[0], A.Subscript)
                and isinstance(t, A.Name)
            ):
                return self.match_region(t.id, v, s.pos)
            self.fail(
                "T.match_buffer must be at the top level of the function body, or in a "
                "block with a buffer region: T.match_buffer(A[vi, 0:16], (16,))",
                s.pos,
            )
        if not isinstance(t, A.Name):
            self.fail("can only assign to a buffer element A[...] or a name", t.pos)
        if name == "alloc_buffer":
            return self.alloc(t.id, v, s.pos)
        if name == "allocate_const":
            return constants.allocate_const(self, t.id, v, s.pos)
        if name == "env_thread":
            return launch_thread.env_thread(self, t.id, v, s.pos)
        if name == "decl_buffer" and v.kw("data") is None:  # TVM allocates it
            return self.alloc(t.id, v, s.pos)
        if name in ("decl_buffer", "Buffer"):
            return constants.decl_buffer(self, t.id, v, s.pos)
        self.let(t.id, self.ex.eval(v), s.pos)

    def ann_assign(self, s):
        if not isinstance(s.target, A.Name):
            self.fail("an annotated assignment needs a name", s.pos)
        if s.value is None:
            self.fail(f"{s.target.id!r} needs a value", s.pos)
        dtype = self.dtype_of(s.annotation)
        self.let(s.target.id, self.ex.materialize(self.ex.eval(s.value), s.pos, dtype), s.pos)

    def let(self, name, val, pos):
        if isinstance(val, Lit):
            self.env[name] = val
            return
        if not isinstance(val, Val):
            self.fail(f"cannot bind {name!r} to {describe(val)}", pos)
        owner = val.value.owner
        if isinstance(owner, ir.OpView) or isinstance(owner, ir.Operation):
            attrs = owner.attributes
            if "tir.let_name" not in attrs:
                attrs["tir.let_name"] = ir.StringAttr.get(name)
        self.env[name] = val

    def alloc(self, name, call, pos):
        old = self.env.get(name)
        if isinstance(old, Buffer):
            self.fail(f"buffer {name!r} is already defined", pos, [old.declared()])
        shape, dtype, scope, index = self.buffer_spec(
            call, call.args, "T.alloc_buffer", "global", symbolic=True
        )
        shape = tuple(
            d if isinstance(d, int) else self.sym_expr(d, "a buffer dimension", as_written=True)
            for d in shape
        )
        sizes = [self.size_value(d) for d in shape if isinstance(d, SymExpr)]
        op = memref.AllocOp(self.memref_type(shape, dtype), sizes, [], loc=self.loc(pos))
        op.attributes["tir.name"] = ir.StringAttr.get(name)
        op.attributes[SCOPE] = scope_attr(scope)
        if is_unsigned(dtype):
            op.attributes["tir.dtype"] = ir.StringAttr.get(dtype)
        if buffer_attr(index) is not None:
            op.attributes[INDEX_DTYPE] = buffer_attr(index)
        for k, v in self.layout_attrs(call, len(shape), offset_factor=False).items():
            op.attributes[k] = v
        self.env[name] = Buffer(name, op.result, shape, dtype, index, pos)

    def match_region(self, name, call, pos):
        """`As = T.match_buffer(A[vi * 4:vi * 4 + 4, 0:16], (4, 16), offset_factor=1)` in a
        block: a view of a region of A (`memref.subview`), dropping leading unit dimensions as
        TVM does; `offset_factor`/`align`/`scope` are kept and printed back."""
        region = call.args[0]
        src = self.ex.eval(region.value)
        if not isinstance(src, Buffer):
            self.fail(f"T.match_buffer needs a buffer region, found {describe(src)}", region.pos)
        items = region.indices
        if len(items) == 1 and isinstance(items[0], A.Tuple_):
            items = items[0].items
        if len(items) != len(src.shape):
            self.fail(
                f"buffer {src.name!r} has {len(src.shape)} dimensions but the region has "
                f"{len(items)}",
                region.pos,
            )
        offsets, extents = [], []
        for k, it in enumerate(items):
            if isinstance(it, A.Slice):
                if it.step is not None:
                    self.fail("a region slice takes no step", it.pos)
                lo = it.lo if it.lo is not None else A.Const(0, it.pos)
                hi = it.hi if it.hi is not None else A.Const(src.shape[k], it.pos)
                ab = AffineBuilder(self.env)
                try:
                    span = ab.expr(hi)[0] - ab.expr(lo)[0]
                except NotAffine as e:
                    self.fail(
                        f"T.match_buffer: region bounds must be affine: {e.args[0]}",
                        e.args[1] or it.pos,
                    )
                ext = const_of(ir.AffineExpr.simplify_affine_expr(span, len(ab.dims), 0))
                if ext is None or ext <= 0:
                    self.fail(
                        "T.match_buffer: the extent of a region must be a positive constant", it.pos
                    )
            else:
                lo, ext = it, 1
            offsets.append(self.ex.index(self.ex.eval(lo), getattr(lo, "pos", pos)))
            extents.append(ext)
        call, kept = self.layout_kwargs(call)
        shape, dtype, scope, index = self.buffer_spec(
            call, call.args[1:], "T.match_buffer", "global"
        )
        if dtype != src.dtype:
            self.fail(f"T.match_buffer of {dtype} on buffer {src.name!r} of {src.dtype}", pos)
        n = len(shape)
        lead, tail = extents[: len(extents) - n], extents[len(extents) - n :]
        if n > len(extents) or any(e != 1 for e in lead) or tuple(tail) != tuple(shape):
            self.fail(
                f"T.match_buffer: region {tuple(extents)} of {src.name!r} cannot be matched "
                f"to shape {tuple(shape)} (the higher dimensions must be 1, the others "
                f"equal)",
                pos,
            )
        src_type = ir.MemRefType(src.value.type)
        strides, _ = src_type.get_strides_and_offset()
        layout = ir.StridedLayoutAttr.get(
            ir.ShapedType.get_dynamic_stride_or_offset(), strides[len(strides) - n :]
        )
        rtype = ir.MemRefType.get(list(shape), src_type.element_type, layout)
        op = memref.subview(
            src.value, offsets, extents, [1] * len(extents), result_type=rtype, loc=self.loc(pos)
        ).owner
        attrs = op.attributes
        attrs["tir.name"] = ir.StringAttr.get(name)
        attrs[SCOPE] = scope_attr(scope)
        attrs["tir.match_buffer"] = ir.UnitAttr.get()
        for k, v in kept.items():
            attrs[k] = v
        if is_unsigned(dtype):
            attrs["tir.dtype"] = ir.StringAttr.get(dtype)
        self.env[name] = Buffer(name, op.results[0], shape, dtype, index)

    def store(self, target, value, pos):
        buf = self.ex.eval(target.value)
        if not isinstance(buf, Buffer):
            self.fail(f"only buffers can be indexed, found {describe(buf)}", target.pos)
        if not isinstance(value, (Val, Lit)):
            self.fail(
                f"cannot store {describe(value)} into buffer {buf.name!r}", pos, [buf.declared()]
            )
        self.ex.subscript_slices.update(id(i) for i in target.indices if isinstance(i, A.Slice))
        idx, lanes = self.ex.access(buf, [self.ex.eval(i) for i in target.indices], target)
        dtype = f"{buf.dtype}x{lanes}" if lanes else buf.dtype  # A[b:b + 4] = vector
        if lanes and (isinstance(value, Lit) or value.dtype == buf.dtype):
            self.fail(
                f"cannot store a scalar into {lanes} lanes of buffer {buf.name!r} "
                f"(use T.Broadcast(value, {lanes}))",
                pos,
            )
        if isinstance(value, Val) and value.dtype != dtype and value.dtype != "index":
            self.fail(
                f"cannot store a {value.dtype} value into "
                f"{'a vector of ' if lanes else ''}buffer {buf.name!r} of "
                f"{dtype} (use T.Cast)",
                pos,
                [buf.declared()],
            )
        v = self.ex.materialize(value, pos, dtype)
        self.ex.op(
            "vector.store" if lanes else "memref.store", [v.value, buf.value] + idx, None, pos
        )

    def aug_assign(self, s):
        if not isinstance(s.target, A.Subscript):
            self.fail(f"'{s.op}=' needs a buffer element on the left (A[i] {s.op}= v)", s.pos)
        value = A.BinOp(s.op, s.target, s.value, s.pos)
        self.store(s.target, self.ex.eval(value), s.pos)

    def expr_stmt(self, s):
        v = s.value
        name = callee(v)
        if isinstance(v, A.Const) and isinstance(v.value, str):
            return None  # docstring
        if not isinstance(v, A.Call):
            self.fail("this expression has no effect (use T.evaluate(...) to keep it)", s.pos)
        if (
            name == "assume"
            or name == "evaluate"
            and len(v.args) == 1
            and callee(v.args[0]) == "assume"
        ):
            return self.assume(v if name == "assume" else v.args[0])
        if (
            name in ("evaluate", "call_extern", "call_pure_extern", "call_packed", "tvm_access_ptr")
            or name in TVM_BUILTINS
        ):
            if name == "evaluate" and len(v.args) != 1:
                self.fail("T.evaluate takes one expression", v.pos)
            # a bare call statement is evaluated for its effect, as in TVM
            x = self.ex.materialize(self.ex.eval(v.args[0] if name == "evaluate" else v), v.pos)
            self.ex.op("tir.evaluate", [x.value], None, v.pos)
            return None
        if name in ("reads", "writes", "where", "block_attr", "bind"):
            self.fail(f"T.{name} must be directly inside a T.block", v.pos)
        if name == "func_attr":
            self.fail("T.func_attr must be at the top level of the function body", v.pos)
        if isinstance(v, A.Call):
            self.ex.eval(v)  # reports unknown functions; a known one has no effect here
        self.fail("this expression has no effect (use T.evaluate(...) to keep it)", s.pos)

    def assume(self, call):
        """`T.assume(n % 4 == 0)`: a `tir.assume` fact about the function's symbols, at the
        top level of the body."""
        if len(call.args) != 1 or call.kwargs:
            self.fail("T.assume takes one condition", call.pos)
        if ir.InsertionPoint.current.block.owner.operation.name != "func.func":
            self.fail("T.assume must be at the top level of the function body", call.pos)
        ab = AffineBuilder(self.env, symbols=True)
        try:
            exprs, eqs, _ = ab.conditions(call.args[0])
        except NotAffine as e:
            self.fail(
                f"T.assume needs comparisons of affine expressions of the function's "
                f"symbolic vars joined by 'and': {e.args[0]}",
                e.args[1] or call.pos,
            )
        if ab.dims:
            self.fail("T.assume may use only the function's symbolic vars", call.pos)
        m = len(ab.syms)
        exprs = [ir.AffineExpr.simplify_affine_expr(e, 0, m) for e in exprs]
        ir.Operation.create(
            ASSUME,
            operands=list(ab.syms),
            attributes={"condition": ir.IntegerSetAttr.get(ir.IntegerSet.get(0, m, exprs, eqs))},
            loc=self.loc(call.pos),
        )


def _is_loop_var(value: ir.Value) -> bool:
    owner = value.owner
    return (
        isinstance(owner, ir.Block)
        and owner.owner is not None
        and owner.owner.operation.name == "affine.for"
    )


def _fixed_arity(fn: str):
    """How many arguments the expression function T.fn takes, where that is fixed."""
    if fn in ("if_then_else", "Select", "select"):
        return 3
    if fn in _BINARY_INDEX_CALLS or fn in MATH_BINARY or fn in CALL_BINARY or fn == "Cast":
        return 2
    if fn in MATH_UNARY or fn in MATH_PREDICATE or fn in CALL_UNARY or fn in DTYPES:
        return 1
    return None
