"""The sizes a symbolic function states, as small expression trees over its
parameters' names: read from the IR (the `tir.match_shape` maps and the top-level ops that
compute their symbols), evaluated on a call's values, printed in TVM's spelling for errors,
and stored as JSON next to an exported library.

A tree is an `int`, a parameter name (`str`), or `(op, a, b)` with op one of `+ - * // % min
max ceildiv`; JSON holds the tuples as lists.
"""

from mlir import ir

from tir_mlir.errors import BuildError

Tree = int | str | tuple

_ARITH = {
    "arith.addi": "+",
    "arith.subi": "-",
    "arith.muli": "*",
    "arith.floordivsi": "//",
    "arith.divsi": "//",
    "arith.ceildivsi": "ceildiv",
    "arith.remsi": "%",
    "arith.minsi": "min",
    "arith.maxsi": "max",
}
_CASTS = ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci")


def of_affine(expr: ir.AffineExpr, operands, names: dict) -> Tree:
    """The tree of an affine expression (no dims) over symbol operands; `names` maps each
    argument of the function to its parameter name."""
    e = expr.maybe_downcast()
    if isinstance(e, ir.AffineConstantExpr):
        return e.value
    if isinstance(e, ir.AffineSymbolExpr):
        return of_value(operands[e.position], names)
    if isinstance(e, ir.AffineDimExpr):
        raise BuildError(f"a size uses a loop variable ({expr})")
    if not isinstance(e, ir.AffineBinaryExpr):
        raise TypeError(f"unknown affine expression {e}")
    lhs, rhs = of_affine(e.lhs, operands, names), of_affine(e.rhs, operands, names)
    if isinstance(e, ir.AffineAddExpr):
        if isinstance(rhs, int) and rhs < 0:
            return ("-", lhs, -rhs)
        if isinstance(rhs, tuple) and rhs[0] == "*" and rhs[2] == -1:
            return ("-", lhs, rhs[1])
        return ("+", lhs, rhs)
    if isinstance(e, ir.AffineMulExpr):
        return ("*", lhs, rhs)
    if isinstance(e, ir.AffineModExpr):
        return ("%", lhs, rhs)
    if isinstance(e, ir.AffineFloorDivExpr):
        return ("//", lhs, rhs)
    return ("ceildiv", lhs, rhs)


def of_value(value: ir.Value, names: dict) -> Tree:
    """The tree of a top-level index value: a parameter, or arith/affine ops over them."""
    if isinstance(value.owner, ir.Block):
        if value in names:
            return names[value]
        raise BuildError("a size is a value that is not a parameter of the function")
    op = value.owner.operation
    if op.name == "arith.constant":
        return ir.IntegerAttr(op.attributes["value"]).value
    if op.name in _ARITH:
        return (_ARITH[op.name], *(of_value(v, names) for v in op.operands))
    if op.name in _CASTS:
        return of_value(op.operands[0], names)
    if op.name in ("affine.apply", "affine.min", "affine.max"):
        amap = ir.AffineMapAttr(op.attributes["map"]).value
        trees = [of_affine(r, list(op.operands), names) for r in amap.results]
        out = trees[0]
        for t in trees[1:]:
            out = (op.name.split(".")[1], out, t)
        return out
    raise BuildError(f"a size is computed by '{op.name}', which the runtime cannot evaluate")


def evaluate(tree: Tree, env: dict) -> int:
    if isinstance(tree, int):
        return tree
    if isinstance(tree, str):
        return env[tree]
    op, a, b = tree[0], evaluate(tree[1], env), evaluate(tree[2], env)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "//":
        return a // b
    if op == "%":
        return a % b
    if op == "ceildiv":
        return -(-a // b)
    return min(a, b) if op == "min" else max(a, b)


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "//": 2, "%": 2}


def to_text(tree: Tree) -> str:
    """TVM's spelling: `n * m + 1`, `n // 2`, `T.min(n, 64)`, `T.ceildiv(n, 4)`."""
    if not isinstance(tree, tuple):
        return str(tree)
    op, a, b = tree
    if op not in _PRECEDENCE:
        return f"T.{op}({to_text(a)}, {to_text(b)})"
    p = _PRECEDENCE[op]

    def side(t, right):
        text = to_text(t)
        q = _PRECEDENCE.get(t[0], 3) if isinstance(t, tuple) else 3
        return f"({text})" if q < p or (right and q == p) else text

    return f"{side(a, False)} {op} {side(b, True)}"


def names_in(tree: Tree) -> list:
    if isinstance(tree, str):
        return [tree]
    if isinstance(tree, tuple):
        return names_in(tree[1]) + [n for n in names_in(tree[2]) if n not in names_in(tree[1])]
    return []


def from_json(data) -> Tree:
    return (
        tuple(from_json(x) if k else x for k, x in enumerate(data))
        if isinstance(data, list)
        else data
    )
