"""Copying and deleting tree-shaped expressions (docs/design.md: one use per op, each value built
right before the statement that uses it), for the primitives that move computation between
blocks (compute_inline, reverse_compute_inline).

`clone_tree(v, before, subst)` rebuilds the ops computing `v` right before `before`, each value
in `subst` replaced by a fresh value `subst[value](user)` built right before its user, so the
copy stays tree-shaped; block arguments (loop IVs, iter vars) and values defined outside the
`within` op are used as they are.

`erase_unused(ops, removable)` is the one eraser of dead ops, for the primitives here and the
lowering stages (each with its own notion of an op that may go when unused).
"""

from typing import Callable, Dict, Iterable, List, Optional

from mlir import ir

from tir_mlir.analysis.structure import is_ancestor, op_of, walk
from tir_mlir.analysis.structure import erase

Subst = Dict[ir.Value, Callable[[ir.Operation], ir.Value]]

PURE_PREFIXES = ("arith.", "math.", "tir.call", "affine.apply", "memref.load", "scf.if")


def clone_tree(
    value: ir.Value, before: ir.Operation, subst: Subst, within: Optional[ir.Operation] = None
) -> ir.Value:
    """A copy of the expression computing `value`, built before `before` (see module doc).
    `within`: only ops nested in it are copied (None: every op-defined value is)."""
    if value in subst:
        return subst[value](before)
    owner = value.owner
    if isinstance(owner, ir.Block):
        return value
    op = op_of(owner)
    if within is not None and not is_ancestor(within, op):
        return value
    operands = [clone_tree(v, before, subst, within) for v in op.operands]
    new = op.clone(ip=ir.InsertionPoint(before))
    for k, v in enumerate(operands):
        new.operands[k] = v
    if "tir.let_name" in new.attributes:
        del new.attributes["tir.let_name"]
    # Values used inside the copy's regions (scf.if arms): substitute / copy them too.
    for inner in list(walk(new)):
        for k, v in enumerate(list(inner.operands)):
            if v in subst:
                inner.operands[k] = subst[v](inner)
            elif (
                not isinstance(v.owner, ir.Block)
                and not is_ancestor(new, op_of(v.owner))
                and (within is None or is_ancestor(within, op_of(v.owner)))
            ):
                inner.operands[k] = clone_tree(v, new, subst, within)
    return new.results[ir.OpResult(value).result_number]


def erase_unused(ops: Iterable[ir.Operation], removable: Callable[[ir.Operation], bool]):
    """Erase those of `ops` that `removable` accepts and nothing uses, over and over: an op
    whose users were erased goes in turn. `ops` may list an op twice (each is erased once: a
    wrapper of an erased op must not be read)."""
    left: List[ir.Operation] = []
    for op in ops:
        if op not in left and removable(op):
            left.append(op)
    while True:
        unused = [not any(True for r in op.results for _ in r.uses) for op in left]
        if not any(unused):
            return
        for op, gone in zip(left, unused):
            if gone:
                erase(op)
        left = [op for op, gone in zip(left, unused) if not gone]


def erase_dead(value: ir.Value):
    """Erase the pure op defining `value` if nothing uses it any more, then its operands'."""
    erase_unused(_pure_tree(value), _pure)


def _pure(op: ir.Operation) -> bool:
    return op.name.startswith(PURE_PREFIXES)


def _pure_tree(value: ir.Value) -> List[ir.Operation]:
    """The pure ops computing `value`, users first."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return []
    op = op_of(owner)
    if not _pure(op):
        return []
    return [op] + [o for v in op.operands for o in _pure_tree(v)]


def erase_with_operands(op: ir.Operation):
    """Erase a statement (a load or store) and then the expression ops only it used."""
    operands = list(op.operands)
    erase(op)
    for v in operands:
        erase_dead(v)
