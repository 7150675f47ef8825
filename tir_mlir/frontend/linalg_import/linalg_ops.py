"""What the importer reads of a `linalg.generic` (its attributes, its body's block
arguments), in one place."""
from mlir import ir


def iterator_types(op) -> list:
    """"S" (parallel) or "R" (reduction) per dimension."""
    return ["R" if "reduction" in str(a) else "S"
            for a in ir.ArrayAttr(op.attributes["iterator_types"])]


def indexing_maps(op) -> list:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def n_inputs(op) -> int:
    return ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])[0]


def has_uses(v: ir.Value) -> bool:
    """Whether a value (a body block argument: the op reads that operand) is used."""
    return next(iter(v.uses), None) is not None
