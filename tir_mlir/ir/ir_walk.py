"""Walking MLIR operations: the traversals shared by the schedule primitives, the interpreter
and the lowering stages (kept here so that none of them depends on another)."""

from typing import Iterator, List, Optional

from mlir import ir

from tir_mlir.dialect.ops import _op


def walk(op) -> Iterator[ir.Operation]:
    """Nested operations of `op` in pre-order (not `op` itself); the list is taken eagerly per
    block, so callers may rewrite the ops already yielded."""
    for region in _op(op).regions:
        for block in region.blocks:
            for child in list(block.operations):
                child = child.operation
                yield child
                if len(child.regions):  # (iterating no regions costs 20 times more)
                    yield from walk(child)


def walk_all(op) -> List[ir.Operation]:
    """The same ops as `walk`, listed at once by MLIR's native walker (several times faster):
    for read-only scans that do not rewrite while iterating."""
    top = _op(op)
    out = []

    def visit(o):
        out.append(o)
        return ir.WalkResult.ADVANCE

    top.walk(visit, ir.WalkOrder.PRE_ORDER)
    return out[1:]


def first(op, name: str) -> Optional[ir.Operation]:
    """The first op named `name` nested in `op` (pre-order), or None. A fresh handle for a
    loop that rewrites between searches: `op.erase()` invalidates only the Python object it
    is called on, so any other handle of the op or of an op nested in it (taken by an
    earlier walk) dangles, and reading it is a use after free."""
    top = _op(op)
    found: List[ir.Operation] = []

    def visit(o):
        if o.name == name and o != top:
            found.append(o)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    top.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found[0] if found else None


def ancestors(op) -> Iterator[ir.Operation]:
    """The ops enclosing `op` inside its function, innermost first."""
    p = op.parent
    while p is not None and p.name != "func.func":
        yield p
        p = p.parent


def func_of(op) -> ir.Operation:
    """The func.func enclosing `op` (or `op` itself when it is one)."""
    op = _op(op)
    while op.name != "func.func":
        parent = op.parent
        if parent is None:
            raise ValueError(f"{op.name} is not inside a func.func")
        op = parent
    return op
