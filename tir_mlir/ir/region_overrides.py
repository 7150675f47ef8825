"""Read/write regions set by hand on a block: `annotate_buffer_access` (an explicit region for
one buffer) and `unsafe_hide_buffer_access` (a buffer left out of T.reads / T.writes).

The regions are otherwise inferred (regions.py); these discardable `tir.block` attributes
replace or drop entries of the inferred lists, keyed by buffer name (names are what survive
the rewrites that replace a buffer value, such as transform_layout). Their values are the
dialect's attributes (dialect/tir.irdl.mlir):

    tir.explicit_reads / tir.explicit_writes: #tir.regions<{name: affine_map<(iter vars) ->
                                               (min0, ext0, min1, ext1, ...)>}>, every ext a
                                               constant
    tir.hidden_reads / tir.hidden_writes:     #tir.buffers<[name, ...]>
    tir.accumulator_reads:                    #tir.positions<[position in the written T.reads,
                                               ...]>
    tir.writes_first:                         unit: T.reads lists the written buffers first
                                              (decompose_reduction's update block, as TVM)
    tir.reads_order / tir.writes_order:       #tir.buffers<[name, ...]>: T.reads / T.writes
                                              list these buffers first, in this order
                                              (rfactor's argmax blocks, whose regions TVM
                                              builds, not infers)

Only the printed T.reads / T.writes and the views follow them (as in TVM); legality checks and
lowering keep using the real accesses, so a wrong annotation cannot change the numbers.
"""

from typing import Dict, List, Tuple

from mlir import ir

from tir_mlir.dialect import attrs as tir_attrs

KINDS = ("read", "write")


def _key(kind: str, what: str) -> str:
    return f"tir.{what}_{kind}s"


def explicit(block_op, kind: str) -> Dict[str, List[Tuple[ir.AffineExpr, int]]]:
    """buffer name -> [(min over the iter vars, extent)] per dimension."""
    attrs = block_op.attributes
    if _key(kind, "explicit") not in attrs:
        return {}
    out = {}
    for entry in ir.DictAttr(tir_attrs.param(attrs[_key(kind, "explicit")], "regions")):
        results = list(ir.AffineMapAttr(entry.attr).value.results)
        out[entry.name] = [
            (results[k], ir.AffineConstantExpr(results[k + 1]).value)
            for k in range(0, len(results), 2)
        ]
    return out


def accumulator_reads(block_op) -> List[int]:
    """Positions in the written T.reads of a reduction block's accumulators (`C[vi, vj]`,
    which inference leaves out after T.init()): TVM keeps such an entry, so it prints."""
    a = block_op.attributes
    if "tir.accumulator_reads" not in a:
        return []
    return [
        ir.IntegerAttr(x).value
        for x in ir.ArrayAttr(tir_attrs.param(a["tir.accumulator_reads"], "positions"))
    ]


def writes_first(block_op) -> bool:
    return "tir.writes_first" in block_op.attributes


def order(block_op, kind: str) -> List[str]:
    a = block_op.attributes
    if f"tir.{kind}s_order" not in a:
        return []
    return _names(a[f"tir.{kind}s_order"])


def set_order(block_op, kind: str, names: List[str]):
    block_op.attributes[f"tir.{kind}s_order"] = _buffers(names)


def set_writes_first(block_op):
    block_op.attributes["tir.writes_first"] = ir.UnitAttr.get()


def set_accumulator_reads(block_op, positions: List[int]):
    block_op.attributes["tir.accumulator_reads"] = tir_attrs.make(
        "positions",
        ir.ArrayAttr.get(
            [ir.IntegerAttr.get(ir.IntegerType.get_signless(64), p) for p in positions]
        ),
    )


def hidden(block_op, kind: str) -> List[str]:
    attrs = block_op.attributes
    if _key(kind, "hidden") not in attrs:
        return []
    return _names(attrs[_key(kind, "hidden")])


def set_explicit(
    block_op, kind: str, name: str, n_iters: int, ranges: List[Tuple[ir.AffineExpr, int]]
):
    current = {k: v for k, v in _entries(block_op, _key(kind, "explicit"))}
    results = [x for lo, ext in ranges for x in (lo, ir.AffineExpr.get_constant(ext))]
    current[name] = ir.AffineMapAttr.get(ir.AffineMap.get(n_iters, 0, results))
    block_op.attributes[_key(kind, "explicit")] = tir_attrs.make(
        "regions", ir.DictAttr.get(current)
    )


def add_hidden(block_op, kind: str, names: List[str]):
    now = hidden(block_op, kind)
    now += [n for n in names if n not in now]
    block_op.attributes[_key(kind, "hidden")] = _buffers(now)


def _entries(block_op, key):
    if key not in block_op.attributes:
        return []
    return [
        (e.name, e.attr) for e in ir.DictAttr(tir_attrs.param(block_op.attributes[key], "regions"))
    ]


def _buffers(names: List[str]) -> ir.Attribute:
    return tir_attrs.make("buffers", ir.ArrayAttr.get([ir.StringAttr.get(n) for n in names]))


def _names(attr: ir.Attribute) -> List[str]:
    return [ir.StringAttr(x).value for x in ir.ArrayAttr(tir_attrs.param(attr, "buffers"))]
