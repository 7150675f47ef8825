"""Structural equality of IRModules, up to renaming of variables, buffers and loops.

Each function becomes a tree of statements (loops, blocks, stores, ifs, lets, allocations)
whose expressions are inlined as trees, with SSA values numbered by definition order; names
of loops, iter vars, buffers and let variables are left out, block and function names are
kept. Block bindings and predicates are compared as affine text over the numbered operands,
so `T.axis.remap` and `T.axis.spatial` spellings compare equal, and so do operand orders that
mean the same binding. Independent expression ops may be ordered differently in the IR.
"""

from dataclasses import dataclass, field
from typing import List, Tuple

from mlir import ir

from tir_mlir.context import serialized

from tir_mlir.dialect.buffers import arg_attrs
from tir_mlir.dialect.ops import Block, Loop, body_ops, str_attr
from tir_mlir.printer.affine_text import affine_text, constraint_text

# Names and bookkeeping that do not change what a program computes.
_IGNORED = {
    "tir.name",
    "tir.let_name",
    "iter_names",
    "tir.sid",
    "tir.param",
    "arg_attrs",
    "sym_name",
    "function_type",
}
_ALLOCS = ("memref.alloc", "memref.alloca")


@dataclass
class Node:
    label: str
    items: Tuple = ()
    children: List["Node"] = field(default_factory=list)


class _Canon:
    def __init__(self):
        self.ids = {}

    def define(self, v):
        self.ids[v] = f"%{len(self.ids)}"

    def value(self, v):
        if v in self.ids:
            return self.ids[v]
        if isinstance(v, ir.BlockArgument):
            return f"<unbound {v.type}>"
        op = v.owner.operation
        return (
            op.name,
            _attrs(op),
            tuple(self.value(o) for o in op.operands),
            tuple(str(r.type) for r in op.results),
            tuple(tuple(self.stmt_list(list(b.operations)) for b in r.blocks) for r in op.regions),
        )

    @staticmethod
    def is_stmt(op):
        return (
            len(op.results) != 1
            or op.name in _ALLOCS
            or Loop.is_loop(op)
            or "tir.let_name" in op.attributes
        )

    def stmt_list(self, ops) -> list:
        out = []
        for op in ops:
            op = op.operation
            if not self.is_stmt(op) or (
                op.name in ("gpu.yield", "affine.yield") and not len(op.operands)
            ):
                continue
            out.append(self.stmt(op))
        return out

    def stmt(self, op) -> Node:
        if Loop.is_loop(op):
            loop = Loop(op)
            self.define(loop.iv)
            items = (
                ("kind", loop.kind),
                *self.bounds(loop),
                ("step", loop.step),
                ("index_dtype", loop.index_dtype),
                ("thread", loop.thread),
                ("annotations", _dict(loop.annotations)),
            )
            return Node("for", items, self.stmt_list(body_ops(loop.body)))
        if Block.is_block(op):
            return self.block(Block(op))
        if op.name in _ALLOCS:
            self.define(op.results[0])
            return Node(op.name, (("type", str(op.results[0].type)), ("attrs", _attrs(op))))
        items = (
            ("attrs", _attrs(op)),
            ("operands", tuple(self.value(o) for o in op.operands)),
            ("results", tuple(str(r.type) for r in op.results)),
        )
        children = []
        for r in op.regions:
            for b in r.blocks:
                for a in b.arguments:
                    self.define(a)
                children.append(Node("region", (), self.stmt_list(list(b.operations))))
        for r in op.results:  # a let: later uses refer to it by number
            self.define(r)
        return Node(op.name, items, children)

    def name(self, v) -> str:
        """The canonical name of a value: its number, or its expression tree spelled out."""
        got = self.value(v)
        return got if isinstance(got, str) else repr(got)

    def bound(self, amap: ir.AffineMap, operands) -> tuple:
        """A loop bound (a map over outer loop vars and symbols) as text over value names."""
        names = [self.name(o) for o in operands]
        dims, syms = names[: amap.n_dims], names[amap.n_dims :]
        return tuple(affine_text(e, dims, syms)[0] for e in amap.results)

    def bounds(self, loop: Loop) -> tuple:
        """(min, extent) items of a loop with constant bounds (most loops, and the usual
        message), else its lower and upper bounds over outer loop vars and symbols."""
        if not len(loop.op.operands):
            return ("min", loop.min), ("extent", loop.extent)
        return ("min", self.bound(*loop.lower_bound)), ("upper", self.bound(*loop.upper_bound))

    def size(self, x) -> str:
        """A domain's min or extent: an int, or a SymExpr over the function's symbols."""
        if isinstance(x, int):
            return str(x)
        return affine_text(x.expr, [], [self.name(s) for s in x.symbols])[0]

    def block(self, b: Block) -> Node:
        dim_names = [self.name(d) for d in b.dims]
        sym_names = [self.name(s) for s in b.symbols]
        bindings = tuple(affine_text(e, dim_names, sym_names)[0] for e in b.bindings.results)
        pred = None
        if b.predicate is not None:
            pred = tuple(
                constraint_text(c.expr, c.is_eq, dim_names, sym_names=sym_names)
                for c in b.predicate.constraints
            )
        domains = tuple((self.size(lo), self.size(ext)) for lo, ext in b.domains)
        items = (
            ("name", b.name),
            ("iter_types", tuple(b.iter_types)),
            ("domains", domains),
            ("index_dtypes", tuple(b.index_dtypes)),
            ("bindings", bindings),
            ("predicate", pred),
            ("annotations", _dict(b.annotations)),
            ("has_init", b.init is not None),
        )
        for v in b.iter_vars:
            self.define(v)
        children = []
        if b.init is not None:
            for a, v in zip(b.init.arguments, b.iter_vars):
                self.ids[a] = self.ids[v]
            children.append(Node("init", (), self.stmt_list(body_ops(b.init))))
        children.append(Node("body", (), self.stmt_list(body_ops(b.body))))
        return Node(f'block "{b.name}"', items, children)


def _dict(d: dict):
    return tuple(sorted((k, str(v)) for k, v in d.items()))


def _attrs(op):
    a = op.attributes
    return tuple(sorted((k, str(a[k])) for k in a if k not in _IGNORED))


def _func_node(func) -> Node:
    func = func.operation
    canon = _Canon()
    entry = func.regions[0].blocks[0]
    params = []
    for a, attrs in zip(entry.arguments, arg_attrs(func)):
        canon.define(a)
        params.append(
            (str(a.type), tuple(sorted((n, str(v)) for n, v in attrs.items() if n not in _IGNORED)))
        )
    items = (("params", tuple(params)), ("attrs", _attrs(func)))
    name = str_attr(func.attributes, "sym_name")
    return Node(f"func @{name}", items, canon.stmt_list(list(entry.operations)))


def _diff(a: Node, b: Node, path: str):
    """Message for the first difference between two trees, or None."""
    here = f"{path}/{a.label}" if path else a.label
    if a.label != b.label:
        return f"{path or '<module>'}: {a.label} != {b.label}"
    for (ka, va), (_, vb) in zip(a.items, b.items):
        if va != vb:
            if ka == "operands":
                va, vb = _first_diff(va, vb)
            return f"{here}: {ka} differs: {va!r} != {vb!r}"
    for k, (ca, cb) in enumerate(zip(a.children, b.children)):
        msg = _diff(ca, cb, f"{here}[{k}]" if ca.label != "init" and ca.label != "body" else here)
        if msg:
            return msg
    if len(a.children) != len(b.children):
        return f"{here}: {len(a.children)} statements != {len(b.children)} statements"
    return None


def _first_diff(a, b):
    """The innermost differing parts of two (nested tuple) values: `maximumf` vs `minimumf`."""
    while isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        k = next(k for k, (x, y) in enumerate(zip(a, b)) if x != y)
        a, b = a[k], b[k]
    return a, b


def _module_diff(a, b):
    fa, fb = _funcs(a), _funcs(b)
    if list(fa) != list(fb):
        return f"<module>: functions {list(fa)} != {list(fb)}"
    for name in fa:
        with fa[name].context:
            msg = _diff(_func_node(fa[name]), _func_node(fb[name]), "")
        if msg:
            return msg
    return None


def _funcs(x) -> dict:
    if hasattr(x, "functions"):
        return dict(sorted(x.functions.items()))
    op = x.operation
    return {str_attr(op.attributes, "sym_name"): op}


@serialized
def structural_equal(a, b) -> bool:
    """True when two IRModules (or two func ops) are the same program up to renaming."""
    return _module_diff(a, b) is None


def assert_structural_equal(a, b):
    """Raise AssertionError naming the first difference (a path of statements)."""
    msg = _module_diff(a, b)
    if msg:
        raise AssertionError(f"modules differ at {msg}")


def structural_hash(mod) -> str:
    """A hex digest equal for structurally equal modules (the same program up to renaming of
    variables, buffers and loops; function and block names count)."""
    import hashlib

    digest = hashlib.sha256()
    for name, func in _funcs(mod).items():
        with func.context:
            digest.update(repr(_func_node(func)).encode())
    return digest.hexdigest()
