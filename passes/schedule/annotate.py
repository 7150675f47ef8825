"""annotate / unannotate: set or remove one annotation of a block (`annotations`, printed as
T.block_attr) or a loop (`tir.annotations`, printed as `annotations={...}`), or of TVM's root
block (`get_block("root")`: the function body, its annotations kept on the func.func).

Values are str, bool, int (int32 like TVM's IntImm, int64 beyond), float (finite), and lists / dicts of
those. Keys such as `pragma_auto_unroll_max_step` and `pragma_unroll_explicit` are hints the
lowering may honour. unannotate of a missing key is an error (as in TVM).
"""

from mlir import ir

from tir_mlir.dialect.ops import Block, Loop, root_annotations, set_root_annotations
from tir_mlir.dtypes import FLOAT_MAX
from tir_mlir.errors import ScheduleError


def to_attr(value) -> ir.Attribute:
    if isinstance(value, bool):
        return ir.BoolAttr.get(value)
    if isinstance(value, int):
        for bits in (32, 64):
            if -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
                return ir.IntegerAttr.get(ir.IntegerType.get_signless(bits), value)
        raise ScheduleError(f"annotate: integer {value} does not fit in 64 bits")
    if isinstance(value, float):
        if not abs(value) <= FLOAT_MAX["float32"]:  # inf, nan: no TVMScript literal spells them
            raise ScheduleError(f"annotate: float {value!r} is not a finite float32")
        return ir.FloatAttr.get(ir.F64Type.get(), value)  # a Python float, as TVM keeps it
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    if isinstance(value, (list, tuple)):
        return ir.ArrayAttr.get([to_attr(v) for v in value])
    if isinstance(value, dict):
        return ir.DictAttr.get({str(k): to_attr(v) for k, v in value.items()})
    raise ScheduleError(
        f"annotate: unsupported annotation value {value!r} ({type(value).__name__})"
    )


def _get_set(op: ir.Operation):
    if op.name == "func.func":  # TVM's root block: the function body, annotations on the func
        return root_annotations(op), lambda d: set_root_annotations(op, d)
    if Block.is_block(op):
        b = Block(op)
        return b.annotations, lambda d: b.set_attr("annotations", ir.DictAttr.get(d) if d else None)
    lp = Loop(op)
    return lp.annotations, lambda d: lp.set(annotations=d)


def annotate(op: ir.Operation, key: str, value):
    if not isinstance(key, str):
        raise ScheduleError(f"annotate: the key must be a str, got {key!r}")
    attr = to_attr(value)
    anns, store = _get_set(op)
    anns[key] = attr
    store(anns)


def unannotate(op: ir.Operation, key: str):
    anns, store = _get_set(op)
    if key not in anns:
        raise ScheduleError(f"unannotate: cannot find annotation key {key!r}")
    del anns[key]
    store(anns)


def from_attr(attr: ir.Attribute):
    """The Python value of an annotation attribute (the inverse of `to_attr`)."""
    if isinstance(attr, (ir.BoolAttr, ir.IntegerAttr, ir.FloatAttr, ir.StringAttr)):
        return attr.value
    if isinstance(attr, ir.ArrayAttr):
        return [from_attr(a) for a in attr]
    if isinstance(attr, ir.DictAttr):
        return {n.name: from_attr(n.attr) for n in attr}
    return str(attr)
