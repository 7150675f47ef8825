"""Block bindings and `T.where` predicates -> AffineExpr / IntegerSet over the block's dims.

The dims are index values (loop vars, outer iter vars) numbered in order of first use. Walks
are iterative, like expression evaluation, so long binding expressions cannot overflow the stack.
"""

import dataclasses
from typing import Optional

from mlir import ir

from tir_mlir.ir import first_iteration_or
from tir_mlir.analysis.iter_map import add, floordiv, floormod, mul
from tir_mlir.analysis.symbolic import is_symbol
from tir_mlir.frontend import ast as A
from tir_mlir.frontend.intrinsics import callee
from tir_mlir.frontend.values import Lit, Val


class NotAffine(Exception):
    """Carries (message, pos); the caller words the error for its construct."""


class AffineBuilder:
    """`ex` (an ExprBuilder), when given, lets a non-affine subexpression (`i * j`, `i % j`,
    `T.min(i, j)`, a buffer load) stand as one dim: its ops are built at the current insertion
    point (right before the block) and its value becomes a block operand, as TVM keeps such
    bindings and predicates. Schedule primitives then refuse the block (not an affine binding).

    With `symbols=True`, the function's symbols (`n = T.int32()`, integer scalar parameters,
    docs/symbolic.md) are affine symbols (`syms`, in order of first use), not dims."""

    def __init__(self, env, ex=None, symbols=False):
        self.env = env
        self.ex = ex
        self.dims = []  # ir.Value, in order of first appearance
        self.dim_vals = []  # the Val of each dim (for its domain)
        self.symbols = symbols
        self.syms = []  # ir.Value of each symbol, with symbols=True
        self.atoms = {}  # shape of a non-affine subexpression -> its dim (one value each)

    def dim(self, val: Val) -> ir.AffineExpr:
        if self.symbols and is_symbol(val.value):
            for i, s in enumerate(self.syms):
                if s == val.value:
                    return ir.AffineSymbolExpr.get(i)
            self.syms.append(val.value)
            return ir.AffineSymbolExpr.get(len(self.syms) - 1)
        for i, d in enumerate(self.dims):
            if d == val.value:
                return ir.AffineDimExpr.get(i)
        self.dims.append(val.value)
        self.dim_vals.append(val)
        return ir.AffineDimExpr.get(len(self.dims) - 1)

    def expr(self, root):
        """(AffineExpr, constant value or None) of an index expression."""
        out, stack = [], [(root, False)]
        while stack:
            node, ready = stack.pop()
            kids = _children(node)
            if not ready and self.ex is not None and self._non_affine(node, kids):
                out.append(self._atom(node))
            elif kids is None:
                out.append(self._leaf(node))
            elif not ready:
                stack.append((node, True))
                stack.extend((k, False) for k in reversed(kids))
            else:
                args = out[len(out) - len(kids) :]
                del out[len(out) - len(kids) :]
                out.append(self._combine(node, args))
        return out[0]

    def _non_affine(self, node, kids) -> bool:
        """A node whose value is no affine function of its operands: a product of two
        non-constants, a division by a non-constant, any call or load the affine forms lack."""
        if kids is None:
            if isinstance(node, (Val, A.Const)) or callee(node) in ("int32", "int64"):
                return False
            v = self.env.get(node.id) if isinstance(node, A.Name) else None
            return not (
                isinstance(node, A.Name)
                and (v is None or isinstance(v, Lit) or isinstance(v, Val) and v.dtype == "index")
            )
        if isinstance(node, A.BinOp) and node.op == "*":
            return not (_constant(node.lhs, self.env) or _constant(node.rhs, self.env))
        if isinstance(node, A.BinOp) and node.op in ("//", "%") or callee(node) in _CALLS:
            return not _constant(kids[1], self.env)
        return False

    def _atom(self, node):
        key = expr_shape(node)
        if key in self.atoms:  # `i * chunk` in the binding and in T.where: one dim
            return self.atoms[key]
        self.atoms[key] = got = self._new_atom(node)
        return got

    def _new_atom(self, node):
        if self.ex is None:  # (_is_atom asks for an atom only with an ExprBuilder)
            raise NotAffine(
                "not an affine expression of loop variables", getattr(node, "pos", None)
            )
        v = self.ex.eval(node)
        if isinstance(v, Lit):
            if isinstance(v.value, int) and not isinstance(v.value, bool):
                return ir.AffineConstantExpr.get(v.value), v.value
            raise NotAffine("an index must be an integer", getattr(node, "pos", None))
        return self.dim(Val(self.ex.index(v, node.pos), "index")), None

    def _leaf(self, node):
        if isinstance(node, Val):  # a loop var resolved by the caller (2021 auto-binding)
            return self.dim(node), None
        if (
            isinstance(node, A.Const)
            and isinstance(node.value, int)
            and not isinstance(node.value, bool)
        ):
            return ir.AffineConstantExpr.get(node.value), node.value
        if isinstance(node, A.Call) and callee(node) in ("int32", "int64") and len(node.args) == 1:
            c = _int_const(node.args[0])  # T.int64(4)
            if c is not None:
                return ir.AffineConstantExpr.get(c), c
        if isinstance(node, A.Name):
            v = self.env.get(node.id)
            if isinstance(v, Lit) and isinstance(v.value, int) and not isinstance(v.value, bool):
                return ir.AffineConstantExpr.get(v.value), v.value
            if isinstance(v, Val) and v.dtype == "index":
                return self.dim(v), None
            if v is None:
                raise NotAffine(f"undefined variable {node.id!r}", node.pos)
            raise NotAffine(f"{node.id!r} is not a loop or block variable", node.pos)
        raise NotAffine("not an affine expression of loop variables", getattr(node, "pos", None))

    def _combine(self, node, args):
        a, ca = args[0]
        if isinstance(node, A.UnaryOp):
            if node.op == "-":
                return a * -1, (-ca if ca is not None else None)
            if ca is None:  # unary + of a variable: an error in TVM (see exprs.unary)
                raise NotAffine("unary + of a variable", node.pos)
            return a, ca
        op = node.op if isinstance(node, A.BinOp) else _CALLS[callee(node) or ""]
        b, cb = args[1]
        if op == "+":
            return a + b, (ca + cb if ca is not None and cb is not None else None)
        if op == "-":
            return a - b, (ca - cb if ca is not None and cb is not None else None)
        if op == "*":
            if ca is None and cb is None:
                raise NotAffine("product of two variables is not affine", node.pos)
            return a * b, (ca * cb if ca is not None and cb is not None else None)
        if op == "ceildiv":  # TVM 0.21's T.ceildiv(a, b) is (a + b - 1) // b
            if cb is None or cb <= 0:
                raise NotAffine(
                    "T.ceildiv needs a positive constant divisor to be affine", node.pos
                )
            if ca is not None:
                return ir.AffineConstantExpr.get(-(-ca // cb)), -(-ca // cb)
            return ir.AffineFloorDivExpr.get(a + (cb - 1), b), None
        if op in ("//", "%"):
            if cb is None or cb <= 0:
                raise NotAffine(f"'{op}' needs a positive constant divisor to be affine", node.pos)
            if ca is not None:
                return (
                    ir.AffineConstantExpr.get(ca // cb if op == "//" else ca % cb),
                    ca // cb if op == "//" else ca % cb,
                )
            return (ir.AffineFloorDivExpr.get(a, b) if op == "//" else a % b), None
        raise NotAffine(f"operator {op!r} is not affine", node.pos)

    def tree(self, root):
        """The binding as written, a tree of analysis/iter_map.py over the dims this builder
        gave its AffineExpr (`(f0 * 1024 + f1) // 512`, which MLIR folds); None for anything
        but +, *, //, % of loop variables and int constants."""
        out, stack = [], [(root, False)]
        while stack:
            node, ready = stack.pop()
            op = node.op if isinstance(node, A.BinOp) else None
            if op not in ("+", "*", "//", "%"):
                out.append(self._tree_leaf(node))
            elif not ready:
                stack.extend(((node, True), (node.rhs, False), (node.lhs, False)))
            else:
                b, a = out.pop(), out.pop()
                if a is None or b is None or op != "+" and (type(b) is not int or type(a) is int):
                    out.append(None)
                elif op in ("//", "%") and b <= 0:
                    out.append(None)
                else:
                    build = {"+": add, "*": mul, "//": floordiv, "%": floormod}[op]
                    out.append(build(a, b))
        return out[0]

    def bound_trees(self, root) -> list:
        """Per constraint of `conditions(root)`, in its order: the tree (`tree`) of `x` in a
        `x < c` comparison, None for any other."""
        out, stack = [], [root]
        while stack:
            node = stack.pop()
            if isinstance(node, A.BinOp) and node.op == "and":
                stack.extend([node.rhs, node.lhs])
            elif isinstance(node, A.Call) and callee(node) == "And":
                stack.extend(reversed(node.args))
            elif isinstance(node, A.Compare):
                single = node.ops == ["<"] and _int_const(node.operands[1]) is not None
                out.extend([self.tree(node.operands[0]) if single else None] * len(node.ops))
            else:
                out.append(None)
        return out

    def _tree_leaf(self, node):
        if isinstance(node, A.Const):
            return node.value if type(node.value) is int else None
        v = self.env.get(node.id) if isinstance(node, A.Name) else node
        if isinstance(v, Lit):
            return v.value if type(v.value) is int else None
        if isinstance(v, Val):
            return next((("v", k) for k, d in enumerate(self.dims) if d == v.value), None)
        return None

    # --- predicates ---------------------------------------------------------------------------
    def conditions(self, root):
        """T.where(cond) -> ([AffineExpr], [is_equality], [operator]) meaning expr >= 0 /
        expr == 0, and the comparison operator each was written with."""
        exprs, eqs, ops, stack = [], [], [], [root]
        while stack:
            node = stack.pop()
            if isinstance(node, A.BinOp) and node.op == "and":
                stack.extend([node.rhs, node.lhs])
                continue
            if isinstance(node, A.Call) and callee(node) == "And":
                stack.extend(reversed(node.args))
                continue
            if isinstance(node, A.BinOp) and node.op == "or":
                exprs.append(self._first_iteration_or(node))
                eqs.append(False)
                continue
            if not isinstance(node, A.Compare):
                raise NotAffine(
                    "a condition must be comparisons joined by 'and'", getattr(node, "pos", None)
                )
            for i, op in enumerate(node.ops):
                a, _ = self.expr(node.operands[i])
                b, _ = self.expr(node.operands[i + 1])
                if op == "!=":
                    raise NotAffine("'!=' is not affine", node.pos)
                e = {
                    "<": lambda: b - a - 1,
                    "<=": lambda: b - a,
                    ">": lambda: a - b - 1,
                    ">=": lambda: a - b,
                    "==": lambda: a - b,
                }[op]()
                exprs.append(e)
                eqs.append(op == "==")
                ops.append(op)
        return exprs, eqs, ops

    def _first_iteration_or(self, node) -> ir.AffineExpr:
        """`w < m + 1 or k <= e` (w a loop var over [m, m + n), e >= 0 everywhere), as
        rolling_buffer writes it: `e - k * ind(w) >= 0` (tir_mlir/ir/first_iteration_or.py)."""
        bad = NotAffine(
            "'or' in a condition must read 'i < min + 1 or k <= e' (i a loop "
            "variable, e >= 0), as TVM's rolling_buffer writes it",
            node.pos,
        )
        first, bound = node.lhs, node.rhs
        if not (
            isinstance(first, A.Compare)
            and first.ops == ["<"]
            and isinstance(first.operands[0], A.Name)
            and isinstance(bound, A.Compare)
            and len(bound.ops) == 1
            and bound.ops[0] in ("<=", ">=")
        ):
            raise bad
        w = self.env.get(first.operands[0].id)
        limit = _int_const(first.operands[1])
        if not (isinstance(w, Val) and w.dom is not None and limit == w.dom[0] + 1):
            raise bad
        lo, hi = bound.operands if bound.ops[0] == "<=" else bound.operands[::-1]
        k = _int_const(lo)
        e, _ = self.expr(hi)
        low = _lower_bound(e, self.dim_vals)
        if k is None or k <= 0 or low is None or low < 0:
            raise bad
        m, n = w.dom
        return e - first_iteration_or.indicator(self.dim(w), m, n) * k


def _lower_bound(e: ir.AffineExpr, dims) -> Optional[int]:
    """The least value of a linear expression over the dims' domains (None if not linear)."""
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineConstantExpr):
        return e.value
    if isinstance(e, ir.AffineDimExpr):
        return dims[e.position].dom[0]
    if isinstance(e, ir.AffineAddExpr):
        a, b = _lower_bound(e.lhs, dims), _lower_bound(e.rhs, dims)
        return None if a is None or b is None else a + b
    rhs = e.rhs.maybe_downcast() if isinstance(e, ir.AffineMulExpr) else None
    if isinstance(e, ir.AffineMulExpr) and isinstance(rhs, ir.AffineConstantExpr):
        c = rhs.value
        lhs = e.lhs.maybe_downcast()
        if isinstance(lhs, ir.AffineDimExpr):
            lo, ext = dims[lhs.position].dom
            return min(c * lo, c * (lo + ext - 1))
    return None


_CALLS = {"floordiv": "//", "floormod": "%", "ceildiv": "ceildiv"}


def _constant(node, env) -> bool:
    """No loop, block or let variable anywhere in `node` (literals and names bound to them)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Val):
            return False
        if isinstance(n, A.Name):
            if not isinstance(env.get(n.id), Lit):
                return False
        elif isinstance(n, A.Call):
            stack.extend(n.args)
            stack.extend(v for _, v, _ in n.kwargs)
        elif isinstance(n, A.Node):
            for value in vars(n).values():
                if isinstance(value, A.Node):
                    stack.append(value)
                elif isinstance(value, (list, tuple)):
                    stack.extend(v for v in value if isinstance(v, A.Node))
    return True


def expr_shape(node):
    """A hashable form of an expression without its positions (iterative: may be deep)."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, A.Node) and dataclasses.is_dataclass(n):
            out.append(type(n).__name__)
            stack.extend(
                getattr(n, f.name) for f in reversed(dataclasses.fields(n)) if f.name != "pos"
            )
        elif isinstance(n, (list, tuple)):
            out.append(("seq", len(n)))
            stack.extend(reversed(n))
        else:
            out.append(n if isinstance(n, (str, int, float, bool, type(None))) else id(n))
    return tuple(out)


def _int_const(node):
    if isinstance(node, A.UnaryOp) and node.op == "-":
        c = _int_const(node.operand)
        return None if c is None else -c
    if isinstance(node, A.Const) and type(node.value) is int:
        return node.value
    return None


def _children(node):
    if isinstance(node, A.BinOp) and node.op in ("+", "-", "*", "//", "%"):
        return [node.lhs, node.rhs]
    if isinstance(node, A.UnaryOp) and node.op in ("-", "+"):
        return [node.operand]
    if isinstance(node, A.Call) and callee(node) in _CALLS and len(node.args) == 2:
        return node.args
    return None
