"""The layout a block reads a buffer in (TVM's SuggestIndexMap, for RewriteLayout).

A load `B[vk, vj]` of a 16x16 buffer in a block bound as `vk = k0 * 4 + k1`, `vj = j` under the
loops (i0, j, k0, i1, k1) walks the buffer's flat index `vk * 16 + vj = k0 * 64 + k1 * 16 + j`:
a sum of loop variables (or splits of them, `f // 32 % 4`) at strides that tile it exactly.
Stored with one axis per such split, in the order of the loops that walk them (outer loops
first), the buffer is read in order: `B'[j, k0, k1]`, the index map
`lambda i0, i1: (i1, i0 // 4, i0 % 4)`. The map is written as TVM's simplifier writes it
(`v3 % 4 // 2`, not `v3 // 2 % 2`), so the transformed program prints as TVM's.

Only what TVM's iter-map detection reduces to splits of loop variables is suggested: an index
linear in the block's iter vars, bindings that are sums of splits of loops starting at 0 (a
`T.where(loop < c)` narrowing a loop to c), the splits tiling the flat index with no gap or
overlap. Anything else gives None (no rewrite).
"""

from typing import Dict, List, NamedTuple, Optional, Tuple

from mlir import ir

from tir_mlir.analysis.buffer_util import NotAffine, to_affine
from tir_mlir.analysis.linear import Linear, linear
from tir_mlir.dialect.ops import Block, Loop


class _Split(NamedTuple):
    """`loop // lower % extent`, at `scale` in the flat index."""

    loop: int  # the loop's position among those around the block, outermost first
    lower: int
    extent: int
    scale: int


def suggest_index_map(block_op: ir.Operation, load: ir.Operation) -> Optional[str]:
    """The index map (lambda text) that stores the buffer `load` reads in the order the
    loops around `block_op` read it; None when the access is not a tiling of the loops."""
    shape = list(ir.MemRefType(load.operands[0].type).shape)
    if not shape or any(d <= 0 for d in shape):
        return None
    with load.context:
        splits = _splits(Block(block_op), list(load.operands)[1:], shape)
    if not splits:
        return None
    splits.sort(key=lambda s: -s.scale)  # TVM's iter-map order: the outermost digit first
    order = sorted(range(len(splits)), key=lambda k: (splits[k].loop, -splits[k].lower))
    digits = _digits(shape, [s.extent for s in splits])
    if digits is None:
        return None
    names = [f"i{k}" for k in range(len(shape))]
    results = [digits[k] for k in order]
    return f"lambda {', '.join(names)}: ({', '.join(results)},)"


def _splits(block: Block, indices: List[ir.Value], shape: List[int]) -> Optional[List[_Split]]:
    """The flat index of the access as splits of the loops around the block, merged where
    one loop's splits are adjacent; None unless they tile the index exactly."""
    ivs = block.iter_vars
    leaves: List[ir.Value] = list(ivs)
    try:
        exprs = [to_affine(v, leaves) for v in indices]
    except NotAffine:
        return None
    if len(leaves) != len(ivs) or block.symbols:
        return None  # reads something besides the iter vars
    bounds = _predicate_bounds(block)
    if bounds is None:
        return None
    flat = ir.AffineExpr.get_constant(0)
    stride = 1
    for e, d in reversed(list(zip(exprs, shape))):
        flat = e * stride + flat
        stride *= d
    bindings = block.bindings
    if len(ivs):
        flat = flat.compose(ir.AffineMap.get(bindings.n_dims, 0, list(bindings.results)))
    positions = _loop_positions(block)
    dims = list(block.dims)
    if any(d not in positions for d in dims):
        return None  # bound to an outer block's iter var
    form = linear(flat, division=_split_atom)
    if form is None:
        return None
    out = []
    for atom, scale in form.terms.items():
        loop_dim, lower, extent = atom if isinstance(atom, tuple) else (atom, 1, None)
        pos, lo, n = positions[dims[loop_dim]]
        if lo != 0 or n is None:
            return None
        n = min(n, bounds.get(loop_dim, n))
        if scale < 0 or n % lower:
            return None
        whole = n // lower
        extent = whole if extent is None or extent >= whole else extent
        if whole % extent:
            return None
        if extent > 1:
            out.append(_Split(pos, lower, extent, scale))
    return _tiling(out)


def _predicate_bounds(block: Block) -> Optional[Dict[int, int]]:
    """dim -> the extent a `T.where(loop < c)` narrows it to (TVM's iter-map detection takes
    such a bound); None for any other condition."""
    iset = block.predicate
    if iset is None:
        return {}
    bounds: Dict[int, int] = {}
    for c in iset.constraints:
        form = linear(c.expr)
        if c.is_eq or form is None or len(form.terms) != 1:
            return None
        ((d, coef),) = form.terms.items()
        if coef != -1:
            return None
        bounds[d] = min(bounds.get(d, form.const + 1), form.const + 1)  # c - 1 - d >= 0
    return bounds


def _split_atom(kind, lhs: Linear, rhs: Linear) -> Optional[Linear]:
    """`d // c`, `d % c` and `d // c % e` as atoms (dim, lower factor, extent or None)."""
    if not rhs.is_const or rhs.const <= 0 or lhs.const or len(lhs.terms) != 1:
        return None
    ((atom, coef),) = lhs.terms.items()
    if coef != 1:
        return None
    d, lower, extent = atom if isinstance(atom, tuple) else (atom, 1, None)
    c = rhs.const
    if kind is ir.AffineFloorDivExpr and extent is None:
        return Linear({(d, lower * c, None): 1})
    if kind is ir.AffineModExpr:
        return Linear({(d, lower, c if extent is None else min(c, extent)): 1})
    return None


def _tiling(splits: List[_Split]) -> Optional[List[_Split]]:
    """The splits in increasing scale, each starting where the one below ends (one loop's
    adjacent splits merged); None on a gap or an overlap (TVM's surjective check)."""
    splits = sorted(splits, key=lambda s: s.scale)
    merged: List[_Split] = []
    expect = 1
    for s in splits:
        if s.scale != expect:
            return None
        expect *= s.extent
        low = merged[-1] if merged else None
        if low is not None and low.loop == s.loop and s.lower == low.lower * low.extent:
            merged[-1] = low._replace(extent=low.extent * s.extent)
        else:
            merged.append(s)
    return merged


def _loop_positions(block: Block) -> Dict[ir.Value, Tuple[int, Optional[int], Optional[int]]]:
    """IV -> (position among the loops around the block up to the function, outermost first;
    min; extent), min and extent None unless constant."""
    loops = []
    p = block.op.parent
    while p is not None and p.operation.name != "func.func":
        if Loop.is_loop(p.operation):
            loops.append(Loop(p.operation))
        p = p.operation.parent
    loops.reverse()
    out = {}
    for k, lp in enumerate(loops):
        lo, n = lp.min, lp.extent
        const = isinstance(lo, int) and isinstance(n, int)
        out[lp.iv] = (k, lo, n) if const else (k, None, None)
    return out


def _digits(shape: List[int], radices: List[int]) -> Optional[List[str]]:
    """Digit k of the buffer's flat index in the mixed radix `radices` (the first the most
    significant), as an expression over the buffer's indices i0, i1, ...; None where a digit
    boundary falls inside a dimension at a place that is no multiple of its stride."""
    strides = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    places = [1] * len(radices)
    for k in range(len(radices) - 2, -1, -1):
        places[k] = places[k + 1] * radices[k + 1]
    out = []
    for place, radix in zip(places, radices):
        terms = []
        for k, (stride, n) in enumerate(zip(strides, shape)):
            lo, hi = max(place, stride), min(place * radix, stride * n)
            if lo >= hi or n == 1:
                continue
            if lo % stride or hi % lo or lo % place:
                return None
            below, count, scale = lo // stride, hi // lo, lo // place
            term = f"i{k}"
            if below > 1 and below * count >= n:
                term = f"{term} // {below}"
            elif below > 1:
                term = f"{term} % {below * count} // {below}"
            elif count < n:
                term = f"{term} % {count}"
            terms.append(f"{term} * {scale}" if scale > 1 else term)
        out.append(" + ".join(terms) if terms else "0")
    return out
