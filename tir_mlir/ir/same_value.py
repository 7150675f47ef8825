"""Whether two SSA values compute the same thing: the same value, or results of the same pure op
(`affine.apply`, `arith.*`) with equal attributes over operands that are themselves the same.

Flattening blocks gives each access its own copy of its index computation: an accumulator's
load and store read `C[%i0, %j0]` and write `C[%i1, %j1]` where %i0 and %i1 are two
`affine.apply`s of one map over the same loop IVs. Comparing SSA values alone tells them apart;
this does not (without running CSE over the module, which would also merge what later stages
keep apart on purpose).
"""

from mlir import ir

# Ops with no side effect and no region whose result depends only on operands and attributes.
PURE_PREFIXES = ("arith.", "affine.apply", "index.")


def same_value(a: ir.Value, b: ir.Value, depth: int = 16) -> bool:
    """Structural equality of the computations of `a` and `b` (block arguments: identity),
    up to `depth` ops deep."""
    if a == b:
        return True
    if depth == 0 or a.type != b.type:
        return False
    if isinstance(a.owner, ir.Block) or isinstance(b.owner, ir.Block):
        return False
    oa, ob = a.owner.operation, b.owner.operation
    if (
        oa.name != ob.name
        or not oa.name.startswith(PURE_PREFIXES)
        or len(oa.regions)
        or len(oa.results) != 1
        or len(oa.operands) != len(ob.operands)
    ):
        return False
    if {n: str(oa.attributes[n]) for n in oa.attributes} != {
        n: str(ob.attributes[n]) for n in ob.attributes
    }:
        return False
    return all(same_value(x, y, depth - 1) for x, y in zip(oa.operands, ob.operands))
