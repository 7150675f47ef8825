"""What the importer reads of a `linalg.generic` (its attributes, its body's block
arguments), in one place."""

from mlir import ir


def iterator_types(op) -> list:
    """ "S" (parallel) or "R" (reduction) per dimension."""
    return [
        "R" if "reduction" in str(a) else "S" for a in ir.ArrayAttr(op.attributes["iterator_types"])
    ]


def indexing_maps(op) -> list:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def n_inputs(op) -> int:
    return ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])[0]


def has_uses(v: ir.Value) -> bool:
    """Whether a value (a body block argument: the op reads that operand) is used."""
    return next(iter(v.uses), None) is not None


def dead_outputs(op, returned) -> set:
    """Outputs of a tensor-form op nothing reads (its result unused and not in `returned`)
    whose yielded value the other yielded values do not depend on: torch's `max` along a
    dimension is an argmax whose index output softmax never reads. They are not computed."""
    if len(op.results) < 2:
        return set()
    n_in = n_inputs(op)
    block = op.regions[0].blocks[0]
    yielded = list(list(block.operations)[-1].operation.operands)
    unused = {i for i, r in enumerate(op.results) if not has_uses(r) and r not in returned}
    if len(unused) == len(yielded):
        return set()  # (an op nothing reads at all is still imported)
    needed = set()
    todo = [v for i, v in enumerate(yielded) if i not in unused]
    while todo:
        v = todo.pop()
        if v in needed:
            continue
        needed.add(v)
        if not isinstance(v.owner, ir.Block):
            todo += list(v.owner.operands)
    return {i for i in unused if block.arguments[n_in + i] not in needed}
