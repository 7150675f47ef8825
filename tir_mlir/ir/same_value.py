"""Whether two SSA values compute the same thing: the same value, or results of the same op with
equal attributes over operands that are themselves the same.

Flattening blocks gives each access its own copy of its index computation: an accumulator's
load and store read `C[%i0, %j0]` and write `C[%i1, %j1]` where %i0 and %i1 are two
`affine.apply`s of one map over the same loop IVs. Comparing SSA values alone tells them apart;
this does not (without running CSE over the module, which would also merge what later stages
keep apart on purpose). A block's init and body give each of its index trees its own block
arguments for the same iter vars: `same_argument` says which arguments stand for one value.
"""

from collections.abc import Callable

from mlir import ir

from tir_mlir.ir.affine_exprs import dims_of

# Ops with no side effect and no region whose result depends only on operands and attributes.
PURE_PREFIXES = ("arith.", "affine.apply", "index.")


def same_value(
    a: ir.Value,
    b: ir.Value,
    *,
    ops: tuple[str, ...] | None = PURE_PREFIXES,
    same_argument: Callable[[ir.Value, ir.Value], bool] | None = None,
    depth: int | None = 16,
) -> bool:
    """Structural equality of the computations of `a` and `b`, through single-result ops without
    regions whose names start with one of `ops` (None: any such op), up to `depth` ops deep
    (None: no limit). Distinct block arguments are the same where `same_argument` says so."""
    if a == b:
        return True
    if depth == 0 or a.type != b.type:
        return False
    arg_a, arg_b = isinstance(a.owner, ir.Block), isinstance(b.owner, ir.Block)
    if arg_a or arg_b:
        return arg_a and arg_b and same_argument is not None and same_argument(a, b)
    oa, ob = a.owner.operation, b.owner.operation
    if (
        oa.name != ob.name
        or (ops is not None and not oa.name.startswith(ops))
        or len(oa.regions)
        or len(oa.results) != 1
        or len(oa.operands) != len(ob.operands)
        or _attributes(oa) != _attributes(ob)
    ):
        return False
    inner = None if depth is None else depth - 1
    return all(
        same_value(x, y, ops=ops, same_argument=same_argument, depth=inner)
        for x, y in _read_operands(oa, ob)
    )


def _read_operands(oa: ir.Operation, ob: ir.Operation) -> list[tuple[ir.Value, ir.Value]]:
    """The operand pairs the (equal) ops' results depend on: an `affine.apply` does not read
    the dims its map leaves out (an unrolled window's offsets, passed to the output's index map
    of every flattened block)."""
    pairs = list(zip(oa.operands, ob.operands))
    if oa.name != "affine.apply":
        return pairs
    amap = ir.AffineMapAttr(oa.attributes["map"]).value
    used = set().union(*(dims_of(r) for r in amap.results))
    return [p for n, p in enumerate(pairs) if n in used or n >= amap.n_dims]


def _attributes(op: ir.Operation) -> dict[str, str]:
    return {n: str(op.attributes[n]) for n in op.attributes}
