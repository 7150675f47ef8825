"""Readable block names for imported linalg ops.

A named op keeps its name ("matmul", "conv_2d_nchw_fchw", "transpose"). A `linalg.generic`
(and `map`/`reduce`, whose names say little) is named after what its body computes:
"generic_relu", "generic_sum", "generic_argmax", "generic_dot" (a contraction), "generic_exp",
"generic_transpose", or the body's arithmetic in order ("generic_div_erf_add" for torch's exact GELU).
"""

from mlir import ir

# Short names of the body ops that say what a block computes (casts and constants say little).
_SHORT = {
    "arith.addf": "add",
    "arith.addi": "add",
    "arith.subf": "sub",
    "arith.subi": "sub",
    "arith.mulf": "mul",
    "arith.muli": "mul",
    "arith.divf": "div",
    "arith.divsi": "div",
    "arith.maximumf": "max",
    "arith.maxnumf": "max",
    "arith.maxsi": "max",
    "arith.minimumf": "min",
    "arith.minnumf": "min",
    "arith.minsi": "min",
    "arith.negf": "neg",
    "arith.select": "select",
    "arith.cmpf": "cmp",
    "arith.cmpi": "cmp",
    "arith.andi": "and",
    "arith.ori": "or",
    "arith.xori": "xor",
}
_MAX_PARTS = 3


def block_name(op, kind: str, dead=()) -> str:
    """The block's name; `dead`: outputs not computed (their body ops say nothing)."""
    if kind not in ("generic", "map", "reduce"):
        return kind
    return f"{kind}_{_describe(op, dead)}"


def _describe(op, dead) -> str:
    body = op.regions[0].blocks[0]
    ops = [o.operation for o in list(body.operations)[:-1]]
    if dead:
        ops = [o for o in ops if o in _computing(body, dead)]
    names = [o.name for o in ops]
    reduction = any("reduction" in str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"]))
    if reduction:
        if "linalg.index" in names:
            return (
                "argmax"
                if any(n in ("arith.maximumf", "arith.maxnumf") for n in names)
                else "argmin"
                if any(n in ("arith.minimumf", "arith.minnumf") for n in names)
                else "argreduce"
            )
        parts = [p for p in (_SHORT.get(n) for n in names) if p]
        if parts in (["add"], ["max"], ["min"]):
            return "sum" if parts == ["add"] else parts[0]
        if parts == ["mul", "add"]:
            return "dot"
    if _is_relu(ops):
        return "relu"
    parts = []
    for o in ops:
        p = _SHORT.get(o.name) or (o.name[5:] if o.name.startswith("math.") else None)
        if p and p not in parts:
            parts.append(p)
    if parts:
        return "_".join(parts[:_MAX_PARTS])
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if (
        len(maps) == 2
        and len(maps[0].results) == len(maps[1].results)
        and str(maps[0]) != str(maps[1])
    ):
        return "transpose"
    if len(maps) == 2 and len(maps[0].results) < len(maps[1].results):
        return "broadcast"
    return "copy" if ops == [] else "cast"


def _computing(body, dead) -> set:
    """The body ops the yielded values of the outputs not in `dead` use."""
    yielded = list(list(body.operations)[-1].operation.operands)
    todo = [v for i, v in enumerate(yielded) if i not in dead]
    out = set()
    while todo:
        v = todo.pop()
        if isinstance(v.owner, ir.Block) or v.owner.operation in out:
            continue
        out.add(v.owner.operation)
        todo += list(v.owner.operands)
    return out


def _is_relu(ops) -> bool:
    """`max(x, 0)`, or torch-mlir's `select(x > 0, x, 0)`."""
    names = [o.name for o in ops if o.name != "arith.constant"]
    return names in (["arith.maximumf"], ["arith.maxnumf"], ["arith.cmpf", "arith.select"]) and any(
        _is_zero(v) for o in ops for v in o.operands
    )


def _is_zero(v: ir.Value) -> bool:
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return False
    attr = owner.attributes["value"]
    return isinstance(attr, ir.FloatAttr) and attr.value == 0.0
