"""Statements, loops, blocks and functions -> TVMScript lines (4-space indent, like TVM)."""

import re
import numpy as np
from mlir import ir

from tir_mlir.ir import first_iteration_or
from tir_mlir.ir.affine_exprs import const_of
from tir_mlir.analysis import binding_trees
from tir_mlir.analysis.symbolic import substitute
from tir_mlir.dialect.buffers import arg_attrs
from tir_mlir.dialect.ops import (
    CONST_DATA,
    CONST_UNDECLARED,
    EXPLICIT_ROOT,
    ITER_KINDS,
    Block,
    Loop,
    body_ops,
    integer_set,
    root_annotations,
    str_attr,
)
from tir_mlir.errors import TIRError
from tir_mlir.ir.index_dtypes import expr_dtype, wider
from tir_mlir.printer.affine_text import affine_text, constraint_text, tree_text
from tir_mlir.printer.precedence import ADD, wrap
from tir_mlir.printer.buffers import buffer_infos
from tir_mlir.printer.expr import ExprPrinter, value_dtype
from tir_mlir.printer.extern_calls import is_extern_call
from tir_mlir.printer.literals import dict_text, int_text, shape_text, string_text
from tir_mlir.printer.names import Namer
from tir_mlir.printer.symbols import (
    ASSUME,
    IMPLICIT,
    MATCH_SHAPE,
    alloc_dims,
    match_shapes,
    shape_dims,
    size_text,
)
from tir_mlir.ir.regions import block_regions

IND = "    "
ALLOCS = ("memref.alloc", "memref.alloca")
MATCH = "memref.subview"  # T.match_buffer of a region, in a block
# Ops with nothing to print (expression ops print inline where they are used).
SKIPPED = ("memref.dealloc", "scf.yield")


def _args_of(x) -> list:
    """The function arguments an op's operands (or a value) are computed from."""
    out, seen = [], set()
    stack = list(x.operands) if hasattr(x, "operands") else [x]
    while stack:
        v = stack.pop()
        if isinstance(v, ir.BlockArgument):
            if v not in out:
                out.append(v)
        elif id(v.owner) not in seen:
            seen.add(id(v.owner))
            stack.extend(v.owner.operands)
    return out


class FuncPrinter:
    def __init__(self, func_op):
        self.func = func_op
        self.namer = Namer()
        self.buffers = buffer_infos(func_op)
        self.ex = ExprPrinter(self.namer, self.buffers)
        self.lines = []
        self.depth = 0
        self.loop_of = {}  # loop IV -> Loop, for the loops enclosing the current point
        self.shapes = match_shapes(func_op)  # dynamic buffer parameter -> tir.match_shape
        self.sym_names = []  # the current block's symbols, as printed

    # --- output --------------------------------------------------------------------------
    def emit(self, text: str):
        self.lines.append(IND * self.depth + text)

    def print(self) -> str:
        fname = ir.StringAttr(self.func.attributes["sym_name"]).value
        entry = self.func.regions[0].blocks[0]
        params, match, implicit = [], [], []
        symbolic = bool(self.shapes) or any(
            not isinstance(a.type, ir.MemRefType) for a in entry.arguments
        )
        for arg, attrs in zip(entry.arguments, arg_attrs(self.func)):
            if IMPLICIT in attrs:
                implicit.append((arg, attrs))
                continue
            if arg not in self.buffers:
                if isinstance(arg.type, ir.MemRefType):
                    raise TIRError(f"parameter of type {arg.type} in {fname} cannot be printed")
                name = self.namer.define(arg, str_attr(attrs, "tir.name", "v"))
                params.append(f"{name}: T.{value_dtype(arg, self.buffers)}")  # a scalar
                continue
            info = self.buffers[arg]
            # TVM prints a parameter of static shape as a T.Buffer; a function parsed from
            # static text keeps the handle it was written with (tir.param)
            keep_handle = info.param and not symbolic
            if keep_handle or info.needs_match or arg in self.shapes:
                handle = info.param or f"{info.name}_handle"
                params.append(f"{self.namer.define(('handle', arg), handle)}: T.handle")
                match.append(arg)
            else:
                name = self.namer.define(arg, info.name)
                shape = shape_text(info.shape, info.dim_dtypes)
                params.append(f'{name}: T.Buffer({shape}, "{info.dtype}")')
        private = "tir.private" in self.func.attributes
        self.emit("@T.prim_func(private=True)" if private else "@T.prim_func")
        self.emit(f"def {fname}({', '.join(params)}):")
        self.depth += 1
        attrs = self._func_attrs(fname)
        if attrs:
            self.emit(f"T.func_attr({dict_text(attrs)})")
        unbound = [
            a for a, _ in implicit if not any(a in _args_of(o) for o in list(self.shapes.values()))
        ]
        self._declare(unbound, implicit)
        for arg in match:
            info = self.buffers[arg]
            if arg in self.shapes:
                self._declare(_args_of(self.shapes[arg]), implicit)
            handle = self.namer[("handle", arg)]
            self.emit(
                f"{self.namer.define(arg, info.name)} = "
                f"{self._decl('match_buffer', info, handle, dims=self._dims(arg))}"
            )
        ops = body_ops(entry)
        ops = [o for o in ops if o.name != "func.return"]
        root = self._implicit_root(ops)
        if root is not None:
            ops = body_ops(root.body)
        has_blocks = root is not None or self._contains_block(ops)
        allocs = [o for o in ops if o.name in ALLOCS]
        root_anns = root_annotations(self.func)
        if root_anns:  # TVM prints an annotated root block in full
            self.emit('with T.block("root"):')
            self.depth += 1
            self.emit("T.reads()")
            self.emit("T.writes()")
            self.emit(f"T.block_attr({dict_text(root_anns)})")
            self._allocs(allocs)
            self.stmts([o for o in ops if o.name not in ALLOCS])
            self.depth -= 1
            return "\n".join(self.lines)
        if (
            root is None
            and len(ops) == 1
            and Block.is_block(ops[0])
            and not Block(ops[0]).iter_names
        ):
            if Block(ops[0]).name == "root":  # a root TVM prints (attrs, regions)
                self.block(Block(ops[0]))
                return "\n".join(self.lines)
            # TVM would read a lone iter-less block as the root block itself: print the root
            self.emit('with T.block("root"):')
            self.depth += 1
            self.emit("T.reads()")
            self.emit("T.writes()")
            self.stmts(ops)
            self.depth -= 1
            return "\n".join(self.lines)
        if has_blocks or allocs:
            self.emit('# with T.block("root"):')
        self._allocs(allocs)
        self.stmts([o for o in ops if o.name not in ALLOCS])
        if not ops:
            self.emit("T.evaluate(0)")
        return "\n".join(self.lines)

    def _func_attrs(self, fname) -> dict:
        a = self.func.attributes
        if "tir.func_attrs" not in a:
            return {}
        d = {n.name: n.attr for n in ir.DictAttr(a["tir.func_attrs"])}
        gs = d.get("global_symbol")
        if gs is not None and isinstance(gs, ir.StringAttr) and gs.value == fname:
            del d["global_symbol"]  # TVM hides a global_symbol equal to the name
        return d

    @staticmethod
    def _implicit_root(ops):
        """An explicit `with T.block("root")` around the whole body prints as TVM's comment."""
        if len(ops) == 1 and Block.is_block(ops[0]):
            b = Block(ops[0])
            if (
                b.name == "root"
                and not b.iter_names
                and b.init is None
                and b.predicate is None
                and not b.annotations
                and EXPLICIT_ROOT not in b.op.attributes
            ):
                return b
        return None

    @staticmethod
    def _contains_block(ops):
        found = []

        def visit(op):
            if Block.is_block(op):
                found.append(op)
                return ir.WalkResult.INTERRUPT
            return ir.WalkResult.ADVANCE

        for op in ops:
            op.walk(visit)
            if found:
                return True
        return False

    def _declare(self, args, implicit):
        """`n = T.int32()` (`n, m = T.int32(), T.int64()`) for the implicit vars among `args`
        not declared yet: TVM declares them right before the first T.match_buffer using them."""
        new = [(a, attrs) for a, attrs in implicit if a in args and a not in self.namer]
        if not new:
            return
        names = [self.namer.define(a, str_attr(attrs, "tir.name", "v")) for a, attrs in new]
        calls = [f"T.{str_attr(attrs, 'tir.dtype', 'int32')}()" for _, attrs in new]
        self.emit(f"{', '.join(names)} = {', '.join(calls)}")

    def _dims(self, buf):
        """The sizes of a buffer with symbolic dimensions (ints and SymExprs), else None."""
        if buf in self.shapes:
            return shape_dims(self.shapes[buf])
        if (
            not isinstance(buf, ir.BlockArgument)
            and buf.owner.name in ALLOCS
            and not ir.MemRefType(buf.type).has_static_shape
        ):
            return alloc_dims(buf.owner)
        return None

    def _decl(self, fn, info, *args, dims=None) -> str:
        if dims is None:
            shape = shape_text(info.shape, info.dim_dtypes)
        else:
            items = [size_text(self.ex, d, t) for d, t in zip(dims, info.dim_dtypes)]
            shape = f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
        parts = list(args) + [shape]
        if info.dtype != "float32":
            parts.append(f'"{info.dtype}"')
        return f"T.{fn}({', '.join(parts + self._layout(info))})"

    @staticmethod
    def _layout(info) -> list:
        """scope=, align=, offset_factor=, axis_separators= in TVM's order (each only when not
        the default)."""
        out = [f'scope="{info.scope}"'] if info.scope != "global" else []
        if info.align != 64:
            out.append(f"align={info.align}")
        if info.offset_factor is not None:
            out.append(f"offset_factor={info.offset_factor}")
        if info.axis_separators:
            out.append(f"axis_separators={list(info.axis_separators)}")
        return out

    def _allocs(self, allocs, fn="alloc_buffer"):
        # alloc_buffer lines first: after a T.decl_buffer line TVM's parser is no longer in
        # the block's frame, where alloc_buffer must be
        allocs = sorted(allocs, key=lambda op: CONST_DATA in op.attributes)
        for op in allocs:
            info = self.buffers[op.results[0]]
            if CONST_DATA in op.attributes:
                self._allocate_const(op, info)
                continue
            decl = self._decl(fn, info, dims=self._dims(op.results[0]))
            name = self.namer.define(op.results[0], info.name)
            self.emit(f"{name} = {decl}")

    def _allocate_const(self, op, info):
        """TVM's two lines: the data (named after the buffer) and the buffer over it."""
        data = self.namer.define(("const", op.results[0]), info.name)
        values = np.array(ir.DenseElementsAttr(op.attributes[CONST_DATA])).reshape(-1)
        if info.dtype.startswith("uint"):
            values = values.astype(info.dtype)
        items = ", ".join(
            repr(float(v)) if info.dtype.startswith("float") else str(int(v)) for v in values
        )
        extents = ", ".join(str(n) for n in info.shape)
        self.emit(f'{data} = T.allocate_const([{items}], "{info.dtype}", [{extents}])')
        name = self.namer.define(op.results[0], info.name)
        fn = "Buffer" if CONST_UNDECLARED in op.attributes else "decl_buffer"
        self.emit(f"{name} = {self._decl(fn, info)[:-1]}, data={data})")

    def _match(self, op):
        """`As = T.match_buffer(A[vi * 4:vi * 4 + 4, vj], (4,), offset_factor=1)`."""
        view = op.results[0]
        info = self.buffers[view]
        src = op.operands[0]
        offsets = [v for v in op.operands[1:]]
        sizes = list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
        items = []
        for off, ext in zip(offsets, sizes):
            lo = self.ex.text(off)
            items.append(lo if ext == 1 else f"{lo}:{self.ex.slice_end(off, ext)}")
        parts = [f"{self.namer[src]}[{', '.join(items)}]", shape_text(info.shape, info.dim_dtypes)]
        if info.dtype != "float32":
            parts.append(f'"{info.dtype}"')
        parts += self._layout(info)
        self.emit(f"{self.namer.define(view, info.name)} = T.match_buffer({', '.join(parts)})")

    # --- statements ----------------------------------------------------------------------
    def stmts(self, ops):
        for op in ops:
            self.stmt(op)

    def stmt(self, op):
        name = op.name
        if "tir.let_name" in op.attributes:
            return self._let(op)
        if Loop.is_loop(op):
            return self.loop(op)
        if Block.is_block(op):
            return self.block(Block(op))
        if name in ("memref.store", "vector.store"):
            val, buf, idx = op.operands[0], op.operands[1], list(op.operands)[2:]
            lanes = ir.VectorType(val.type).shape[0] if name == "vector.store" else 0
            return self.emit(f"{self.ex.load(buf, idx, lanes)} = {self.ex.text(val)}")
        if name == MATCH_SHAPE:
            return None  # printed as the buffer's T.match_buffer
        if name == ASSUME:
            return self._assume(op)
        if name == "tir.evaluate":
            text = self.ex.text(op.operands[0])
            # TVM prints a call evaluated for its effect as a bare statement
            return self.emit(text if is_extern_call(op.operands[0]) else f"T.evaluate({text})")
        if name == "scf.if" and len(op.results) == 0:
            return self._if(op)
        if name in ALLOCS:  # in a loop: TVM's lowered form, which allocates at T.decl_buffer
            return self._allocs([op], "decl_buffer")
        if name in SKIPPED or len(op.results) == 1:
            return None  # an expression: printed where it is used
        raise TIRError(f"the printer does not know the statement '{name}'")

    def _assume(self, op):
        cond = ir.IntegerSetAttr(op.attributes["condition"])
        names = [self.ex.expr(v) for v in op.operands]
        iset = integer_set(cond)
        cs = [
            constraint_text(
                c.expr,
                c.is_eq,
                (),
                wider(*(value_dtype(v, self.buffers) for v in op.operands)),
                sym_names=names,
            )
            for c in iset.constraints
        ]
        self.emit(f"T.assume({' and '.join(cs)})")

    def _let(self, op):
        v = op.results[0]
        text = self.ex.op_expr(op, v)[0]
        name = self.namer.define(v, str_attr(op.attributes, "tir.let_name", "v"))
        self.emit(f"{name}: T.{value_dtype(v, self.buffers)} = {text}")

    def _nested(self, ops):
        self.depth += 1
        with self.namer.scope():
            if ops:
                self.stmts(ops)
            else:
                self.emit("T.evaluate(0)")
        self.depth -= 1

    def _if(self, op):
        self.emit(f"if {self.ex.text(op.operands[0])}:")
        self._nested(body_ops(op.regions[0].blocks[0]) if op.regions[0].blocks else [])
        if len(op.regions) > 1 and len(op.regions[1].blocks):
            ops = [o for o in body_ops(op.regions[1].blocks[0]) if o.name != "scf.yield"]
            if ops:
                self.emit("else:")
                self._nested(ops)

    # --- loops ---------------------------------------------------------------------------
    @staticmethod
    def _is_grid_loop(loop: Loop) -> bool:
        return (
            loop.kind == "serial"
            and const_of(loop.lower_bound[0].results[0]) == 0
            and not loop.annotations
        )

    @staticmethod
    def _is_expression(op) -> bool:
        return (
            len(op.results) == 1
            and "tir.let_name" not in op.attributes
            and not Loop.is_loop(op)
            and op.name not in ALLOCS
        )

    def loop(self, op):
        loops = [Loop(op)]
        while self._is_grid_loop(loops[-1]):
            # ops computing a non-affine block binding sit before their block: no statements
            inner = [o for o in body_ops(loops[-1].body) if not self._is_expression(o)]
            if (
                len(inner) == 1
                and Loop.is_loop(inner[0])
                and self._is_grid_loop(Loop(inner[0]))
                and not any(v == l.iv for v in Loop(inner[0]).op.operands for l in loops)
            ):
                loops.append(Loop(inner[0]))
            else:
                break
        with self.namer.scope():
            names = [self.namer.define(l.iv, l.name) for l in loops]
            for l in loops:
                self.loop_of[l.iv] = l
            if len(loops) > 1:
                extents = ", ".join(
                    size_text(self.ex, l.extent, l.index_dtype)
                    if l.constant_bounds
                    else self._bounds_text(l)[0]
                    for l in loops
                )
                self.emit(f"for {', '.join(names)} in T.grid({extents}):")
            else:
                self.emit(f"for {names[0]} in {self._loop_iter(loops[0])}:")
            self.depth += 1
            body = body_ops(loops[-1].body)
            self.stmts(body) if body else self.emit("T.evaluate(0)")
            self.depth -= 1
            for l in loops:
                del self.loop_of[l.iv]

    def _bounds_text(self, loop: Loop) -> list:
        """TVM's `range(lo, lo + (extent))` of a loop whose bounds use outer loop variables
        (`range(i + 1)` when lo is 0)."""
        (lmap, lops), (umap, uops) = loop.lower_bound, loop.upper_bound
        ldims, lsyms = lops[: lmap.n_dims], lops[lmap.n_dims :]
        udims, usyms = uops[: umap.n_dims], uops[umap.n_dims :]
        dims = ldims + [u for u in udims if u not in ldims]
        syms = lsyms + [u for u in usyms if u not in lsyms]  # sizes: `range(i, n)`

        def shift(m, ds, ss):
            return substitute(
                m.results[0],
                [ir.AffineDimExpr.get(dims.index(o)) for o in ds],
                [ir.AffineSymbolExpr.get(syms.index(o)) for o in ss],
            )

        lo, hi = shift(lmap, ldims, lsyms), shift(umap, udims, usyms)
        n, m = len(dims), len(syms)
        ext = ir.AffineExpr.simplify_affine_expr(hi - lo, n, m)
        names = [self.ex.text(d) for d in dims]
        sym_names = [self.ex.expr(v) for v in syms]
        dt = loop.index_dtype
        if const_of(lo) == 0:
            return [affine_text(ext, names, sym_names, dt)[0]]
        lo_text = affine_text(lo, names, sym_names, dt)
        ext_text = affine_text(ext, names, sym_names, dt)
        return [
            lo_text[0],
            f"{wrap(lo_text, ADD, right=False)} + {wrap(ext_text, ADD, right=True)}",
        ]

    def _loop_iter(self, loop: Loop) -> str:
        num = lambda v: size_text(self.ex, v, loop.index_dtype)  # noqa: E731
        if not loop.constant_bounds:
            args = self._bounds_text(loop)
        elif loop.min == 0:
            args = [num(loop.extent)]
        else:
            args = [num(loop.min), num(loop.min + loop.extent)]
        kind = loop.kind
        if kind == "thread_binding":
            assert loop.thread is not None, "a thread_binding loop names its thread"
            args.append(f"thread={string_text(loop.thread)}")
        if loop.annotations:
            args.append(f"annotations={dict_text(loop.annotations)}")
        fn = {
            "serial": "T.serial",
            "parallel": "T.parallel",
            "vectorized": "T.vectorized",
            "unroll": "T.unroll",
            "thread_binding": "T.thread_binding",
        }[kind]
        if kind == "serial" and not loop.annotations:
            fn = "range"
        return f"{fn}({', '.join(args)})"

    # --- blocks --------------------------------------------------------------------------
    def block(self, b: Block):
        self.emit(f"with T.block({string_text(b.name)}):")
        self.depth += 1
        with self.namer.scope():
            dim_names = [self.ex.text(d) for d in b.dims]
            dim_dtypes = [value_dtype(d, self.buffers) for d in b.dims]
            self.sym_names = [self.ex.expr(v) for v in b.symbols]
            self._iter_vars(b, dim_names, dim_dtypes)
            if b.predicate is not None:
                written, trees = b.where_spelling, b.where_trees
                cs = [
                    self._constraint(b, c, dim_names, dim_dtypes, written, trees)
                    for c in b.predicate.constraints
                ]
                if len(cs) > 1:
                    cs = [f"({c})" if " or " in c else c for c in cs]
                self.emit(f"T.where({' and '.join(cs)})")
            if b.init is not None:
                for arg, var in zip(b.init.arguments, b.iter_vars):
                    self.namer.alias(arg, self.namer[var])
            regions = block_regions(b.op)
            self.emit(f"T.reads({self._regions(regions.reads, b)})")
            self.emit(f"T.writes({self._regions(regions.writes, b)})")
            if b.annotations:
                self.emit(f"T.block_attr({dict_text(b.annotations)})")
            body = body_ops(b.body)
            self._allocs([o for o in body if o.name in ALLOCS])
            for o in body:
                if o.name == MATCH:
                    self._match(o)
            if b.init is not None:
                self.emit("with T.init():")
                self._nested(body_ops(b.init))
            rest = [o for o in body if o.name not in ALLOCS and o.name != MATCH]
            self.stmts(rest) if rest else self.emit("T.evaluate(0)")
        self.depth -= 1

    def _constraint(self, b: Block, c, dim_names, dim_dtypes, written, trees=None) -> str:
        bound = binding_trees.where_tree(b, c, trees) if trees else None
        if bound is not None:  # as TVM's split/fuse wrote it: `i_0 * 100 + (i_1_0 * 10 + i_1_1)`
            return f"{tree_text(bound[0], dim_names)[0]} < {bound[1]}"
        dtype = expr_dtype(c.expr, dim_dtypes, wider(*b.index_dtypes))
        first = None if c.is_eq else first_iteration_or.decode(c.expr)
        if first is not None:
            pos, m, n, k, rest = first
            loop = self.loop_of.get(b.dims[pos])
            if loop is not None and (loop.min, loop.extent) == (m, n):
                return (
                    f"{dim_names[pos]} < {int_text(m + 1, dtype)} or "
                    f"{int_text(k, dtype)} <= {affine_text(rest, dim_names, (), dtype)[0]}"
                )
        return constraint_text(
            c.expr, c.is_eq, dim_names, dtype, written.get(str(c.expr), ""), self.sym_names
        )

    def _iter_vars(self, b: Block, dim_names, dim_dtypes):
        """`vi, vj = T.axis.remap("SS", [i, j])` for runs of plain loop vars, like TVM."""
        results = b.bindings.results
        dtypes = b.index_dtypes
        run = []

        const_first = b.const_first_bindings
        start_first = b.start_first_bindings
        hints = b.binding_trees

        def binding(k):
            tree = binding_trees.tree(b, k, hints) if hints else None
            if tree is not None:  # as TVM's split/fuse wrote it: `(f0 * 1024 + f1) // 512`
                return tree_text(tree, dim_names)[0]
            text = affine_text(
                results[k], dim_names, self.sym_names, expr_dtype(results[k], dim_dtypes, dtypes[k])
            )[0]
            m = re.fullmatch(r"([^ ]+(?: \* [^ ]+)?) \+ (\d+)", text)
            if str(results[k]) in const_first and m:  # written `8 + i`: TVM keeps it so
                return f"{m[2]} + {m[1]}"
            m = re.fullmatch(r"(.+) \+ ([A-Za-z_]\w*) ([-+]) (\d+)", text)
            if str(results[k]) in start_first and m:  # compute_at's start + new loop
                return f"{m[1]} {m[3]} {m[4]} + {m[2]}"
            return text

        def flush():
            if len(run) == 1:
                single(run[0])
            elif run:
                lhs = ", ".join(self.namer.define(b.iter_vars[k], b.iter_names[k]) for k in run)
                kinds = "".join(b.iter_types[k] for k in run)
                rhs = ", ".join(binding(k) for k in run)
                self.emit(f'{lhs} = T.axis.remap("{kinds}", [{rhs}])')
            run.clear()

        def single(k):
            lo, ext = b.domains[k]
            num = lambda v: size_text(self.ex, v, dtypes[k])  # noqa: E731
            dom = num(ext) if lo == 0 else f"({num(lo)}, {num(lo + ext)})"
            text = binding(k)
            name = self.namer.define(b.iter_vars[k], b.iter_names[k])
            self.emit(f"{name} = T.axis.{ITER_KINDS[b.iter_types[k]]}({dom}, {text})")

        for k in range(len(b.iter_names)):
            # a hint tree (`(f0 * 512 + f1) // 512` of the map's `f0`) is no loop var: TVM's
            # T.axis.remap takes only vars
            hinted = bool(hints) and binding_trees.tree(b, k, hints) is not None
            if self._remappable(b, k) and not hinted:
                run.append(k)
            else:
                flush()
                single(k)
        flush()

    def _remappable(self, b: Block, k) -> bool:
        e = b.bindings.results[k]
        if b.iter_types[k] not in "SR" or not isinstance(e, ir.AffineDimExpr):
            return False
        loop = self.loop_of.get(b.dims[e.position])
        return (
            loop is not None
            and loop.constant_bounds
            and (loop.min, loop.extent) == tuple(b.domains[k])
            and loop.index_dtype == b.index_dtypes[k]
        )

    def _regions(self, regions, b: Block) -> str:
        out = []
        for r in regions:
            names = [self.namer[v] for v in b.iter_vars] + [self.ex.text(v) for v in r.free]
            dtypes = b.index_dtypes + [value_dtype(v, self.buffers) for v in r.free]
            dims = self.buffers[r.buffer].dim_dtypes if r.buffer in self.buffers else None
            idx = []
            points = r.points or [None] * len(r.ranges)
            for k, ((e, ext), point) in enumerate(zip(r.ranges, points)):
                if point is not None:
                    idx.append(self.ex.text(point))  # TVM keeps a point index verbatim
                    continue
                d = expr_dtype(e, dtypes, dims[k] if dims else "int32")
                lo = affine_text(e, names, (), d)[0]
                if ext == 1:
                    idx.append(lo)
                elif r.explicit and const_of(e) is None:
                    idx.append(f"{lo}:{lo} + {ext}")  # TVM prints min + extent unfolded
                else:
                    hi = affine_text(e + ext, names, (), d)[0]
                    idx.append(f"{lo}:{hi}")
            out.append(f"{self.namer[r.buffer]}[{', '.join(idx) if idx else '()'}]")
        return ", ".join(out)
