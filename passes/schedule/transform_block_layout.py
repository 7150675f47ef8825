"""transform_block_layout: re-express a block's iteration space through a bijective index map
over its iter vars, rebuilding its loops (TVM 0.21's output):

    for i, j, k in T.grid(16, 16, 16):            for ax0, ax1 in T.grid(256, 16):
        with T.block("C"):                            with T.block("C"):
            vi, vj, vk = remap("SSR", [i, j, k])  ==>     v0, v1 = T.axis.remap("SR", [ax0, ax1])
            C[vi, vj] += A[vi, vk] * ...                  C[v0 // 16, v0 % 16] += A[v0 // 16, v1] * ...
    transform_block_layout(C, lambda i, j, k: (i * 16 + j, k))

New iter var j (`vj`, loop `axj`) ranges over result j of the map; its kind is that of the old
iter vars it combines. The body sees each old iter var as the inverse map of the new ones.

Legality: every iter var is bound to its own enclosing loop over its whole domain (from 0), the
loops hold only this block, no T.where; the map takes one argument per iter var and is a
bijective reshape: each result a mixed-radix sum of pieces (`x`, `x // c`, `x % c`,
`(x // c) % d`) of the arguments, the pieces of each argument tiling it exactly; a result does
not mix spatial and reduction iter vars.

A map may name the function's sizes (`lambda x, y, k: (x * n + y, k)`, as transform_layout's):
a digit's stride or size is then a size (`n * 32` loops, the body reading `v0 // n`, `v0 % n`;
an iter var of extent 1 reads 0), and `v0 // n * n + v0 % n` in the body folds to `v0`.
"""

from typing import Callable, List, Tuple

from mlir import ir

from tir_mlir.analysis.symbolic import Int, SymExpr, substitute
from tir_mlir.ir.affine_exprs import const_of, dims_of
from tir_mlir.dialect.ops import INDEX_DTYPE, Block, Loop, index_dtype_attr
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import structure as analysis
from tir_mlir.schedule import lambda_exprs as symbolic
from tir_mlir.analysis.buffer_util import emit_index, move_body, replace_uses, simplify
from tir_mlir.analysis.expr_tree import erase_dead
from tir_mlir.passes.schedule.decompose_padding import _resimplify

WHO = "transform_block_layout"
Piece = Tuple[int, Int, Int, Int]  # (argument, scale, size, stride in its result)


def _pieces(e: ir.AffineExpr, extents: List[Int], text: str, sizes) -> List[Piece]:
    """The digits of one result: coeff * piece-of-an-argument terms; a coeff may be a size
    of the function (`y * n`, the map's symbol k standing for sizes[k])."""
    out, stack = [], [e]
    while stack:
        x = stack.pop().maybe_downcast()
        if isinstance(x, ir.AffineAddExpr):
            stack += [x.lhs, x.rhs]
            continue
        coeff: Int = 1
        while isinstance(x, ir.AffineMulExpr):
            factor = x.rhs if not dims_of(x.rhs) else x.lhs if not dims_of(x.lhs) else None
            if factor is None:
                break
            coeff = coeff * _size_of(factor, sizes)
            x = (x.lhs if factor == x.rhs else x.rhs).maybe_downcast()
        piece = _piece(x, extents)
        if piece is None or (isinstance(coeff, int) and coeff <= 0):
            raise ScheduleError(f"{WHO}: the index map {text} is not bijective affine")
        out.append((*piece, coeff))
    return out


def _size_of(e: ir.AffineExpr, sizes) -> Int:
    """A factor without dims: a constant, or an expression of the function's sizes."""
    c = const_of(e)
    if c is not None:
        return c
    return SymExpr.from_affine(e, list(sizes))


def _piece(x, extents):
    """(argument, scale, size) for x, x // c, x % d, (x // c) % d, (x % d) // c."""
    if isinstance(x, ir.AffineDimExpr):
        return x.position, 1, extents[x.position]
    if isinstance(x, (ir.AffineFloorDivExpr, ir.AffineModExpr)) and const_of(x.rhs):
        c, inner = const_of(x.rhs), x.lhs.maybe_downcast()
        if isinstance(inner, ir.AffineDimExpr):
            n = extents[inner.position]
            if n % c:
                return None
            return (
                (inner.position, c, n // c)
                if isinstance(x, ir.AffineFloorDivExpr)
                else (inner.position, 1, c)
            )
        sub = _piece(inner, extents)
        if sub is None:
            return None
        arg, scale, size = sub
        if isinstance(x, ir.AffineModExpr) and size % c == 0:  # (x // s) % c
            return arg, scale, c
        if isinstance(x, ir.AffineFloorDivExpr) and size % c == 0:  # (x % d) // c
            return arg, scale * c, size // c
    return None


def plan(blk: Block, index_map: Callable) -> Tuple[list, List[Int], List[str], list]:
    """Checks; returns (enclosing loops, new extents, new kinds, inverse exprs over the new
    iter vars, then the sizes the map names as dims after them)."""
    n = len(blk.iter_names)
    exprs = symbolic.exprs(index_map, n)
    sizes = symbolic.size_values()
    text = symbolic.lambda_text(index_map, n)
    loops = analysis.enclosing_loops(blk.op)
    results = blk.bindings.results
    bound = [r.position for r in results if isinstance(r, ir.AffineDimExpr)]
    ivs = [Loop(lp).iv for lp in loops]
    if (
        blk.predicate is not None
        or len(bound) != n
        or len(set(bound)) != n
        or len(loops) != n
        or any(not any(blk.dims[p] == iv for iv in ivs) for p in bound)
    ):
        raise ScheduleError(
            f"{WHO}: the binding values of block {blk.name!r} are not "
            f"variables of its own outer loops"
        )
    for k, p in enumerate(bound):
        lp = Loop(next(lp for lp in loops if Loop(lp).iv == blk.dims[p]))
        if (lp.min, lp.extent) != tuple(blk.domains[k]) or lp.min != 0:
            raise ScheduleError(
                f"{WHO}: iter var {blk.iter_names[k]!r} of block {blk.name!r} "
                f"does not cover its loop's range from 0"
            )
    if any(o != blk.op for o in analysis.blocks_under(loops[0])) or any(
        len(analysis.loop_children(lp)) != 1 for lp in loops
    ):
        raise ScheduleError(f"{WHO}: the loops of block {blk.name!r} hold other statements")
    extents = [d[1] for d in blk.domains]
    digits = [_chain(_pieces(e, extents, text, sizes), text) for e in exprs]
    new_extents, kinds = [], []
    for j, ds in enumerate(digits):
        stride: Int = 1
        for arg, scale, size, s in ds:
            stride = stride * size
        new_extents.append(stride)
        types = {blk.iter_types[arg] for arg, *_ in ds}
        if stride == 1:  # a new iter of one point is data parallel (TVM)
            types = {"S"}
        if len(types) > 1:
            raise ScheduleError(
                f"{WHO}: cannot detect the block iter type for new iter value "
                f"{j} of the index map {text}: it contains more than one type "
                f"of original iter vars"
            )
        kinds.append(types.pop() if types else "S")
    inverse = []
    for k in range(n):
        if sizes and extents[k] == 1:  # (always 0)
            inverse.append(ir.AffineExpr.get_constant(0))
            continue
        mine = list(
            (
                (scale, size, j, s)
                for j, ds in enumerate(digits)
                for arg, scale, size, s in ds
                if arg == k
            )
        )
        if not sizes:
            mine.sort()
        scale_next: Int = 1
        expr = ir.AffineExpr.get_constant(0)
        for scale, size, j, s in mine if not sizes else _by_scale(mine, text):
            if scale != scale_next:
                raise ScheduleError(f"{WHO}: the index map {text} is not bijective affine")
            digit = ir.AffineExpr.get_dim(j)  # TVM's form: v % (s * size) // s
            if s * size != new_extents[j]:
                digit = ir.AffineExpr.get_mod(digit, _affine(s * size, len(exprs), sizes))
            if s != 1:
                digit = ir.AffineExpr.get_floor_div(digit, _affine(s, len(exprs), sizes))
            expr = expr + digit * _affine(scale, len(exprs), sizes)
            scale_next = scale * size
        if scale_next != extents[k]:
            raise ScheduleError(f"{WHO}: the index map {text} is not bijective affine")
        inverse.append(expr if sizes else simplify(expr, len(exprs)))
    return loops, new_extents, kinds, inverse


def _chain(pieces: List[Piece], text: str) -> List[Piece]:
    """The pieces of one result in radix order (strides 1, size0, size0 * size1, ...); a unit
    piece (an iter var of extent 1, always 0) may stand anywhere. Refused when they are no
    mixed radix."""
    units = [p for p in pieces if isinstance(p[2], int) and p[2] == 1]
    out, stride, rest = [], 1, [p for p in pieces if not (isinstance(p[2], int) and p[2] == 1)]
    while rest:
        k = next((k for k, p in enumerate(rest) if p[3] == stride), None)
        if k is None:
            raise ScheduleError(f"{WHO}: the index map {text} is not bijective affine")
        out.append(rest.pop(k))
        stride = stride * out[-1][2]
    return out + [(arg, scale, 1, stride) for arg, scale, _, _ in units]


def _by_scale(mine: list, text: str) -> list:
    """An iter var's digits, lowest scale first (scales 1, size0, ...)."""
    out, scale, rest = [], 1, list(mine)
    while rest:
        k = next((k for k, p in enumerate(rest) if p[0] == scale), None)
        if k is None:
            raise ScheduleError(f"{WHO}: the index map {text} is not bijective affine")
        out.append(rest.pop(k))
        scale = scale * out[-1][1]
    return out


def _affine(x: Int, ndims: int, sizes) -> ir.AffineExpr:
    """x as an expression over ndims dims, size k (a symbol of x) as dim ndims + k."""
    if isinstance(x, int):
        return ir.AffineExpr.get_constant(x)
    dims = [ir.AffineExpr.get_dim(ndims + list(sizes).index(v)) for v in x.symbols]
    return substitute(x.expr, [], dims)


def transform_block_layout(blk: Block, index_map: Callable) -> Block:
    loops, extents, kinds, inverse = plan(blk, index_map)
    sizes = symbolic.size_values()

    # --- rewrite: new loops and block in place of the old nest --------------------------------
    top, loc = loops[0], blk.op.location
    ip, new_loops = ir.InsertionPoint(top), []
    # int64 loops give int64 ones, as TVM legalizes the new iter vars to the old ones' dtype
    dtype = "int64" if all(Loop(lp).index_dtype == "int64" for lp in loops) else "int32"
    for j, ext in enumerate(extents):
        lp = Loop.build(f"ax{j}", ext, loc=loc, ip=ip, index_dtype=dtype)
        new_loops.append(lp)
        ip = ir.InsertionPoint(analysis.terminator(lp.body))
    m = len(extents)
    new = Block.build(
        blk.name,
        [f"v{j}" for j in range(m)],
        kinds,
        [(0, e) for e in extents],
        ir.AffineMap.get_identity(m),
        [lp.iv for lp in new_loops],
        annotations=blk.annotations,
        has_init=blk.init is not None,
        loc=loc,
        ip=ip,
    )
    analysis.move_sid(blk.op, new.op)
    for old_region, new_region in zip(blk.region_blocks, new.region_blocks):
        args = list(new_region.arguments) + list(sizes)
        for k, e in enumerate(inverse):
            replace_uses(
                old_region.arguments[k],
                lambda user, e=e, a=args, k=k: _typed(emit_index(e, a), blk.index_dtypes[k]),
            )
        move_body(old_region, new_region)
    if sizes:
        _fold_div_mod(new.op)
    analysis.erase(top)
    _resimplify(new, list(new.iter_vars) + (list(new.init.arguments) if new.init else []))
    return new


def _typed(v: ir.Value, dtype: str) -> ir.Value:
    """A constant standing for an int64 iter var is an int64 one (`T.int64(0)`)."""
    if dtype == "int64" and not isinstance(v.owner, ir.Block) and v.owner.name == "arith.constant":
        v.owner.attributes[INDEX_DTYPE] = index_dtype_attr("int64")
    return v


def _fold_div_mod(root: ir.Operation):
    """`x // n * n + x % n` is x (TVM's simplifier does it): what the body's index
    `v_i1 * n + v_i3` becomes once `v_i1 = v0 // n`, `v_i3 = v0 % n`."""

    def owner(v, name):
        o = v.owner
        return None if isinstance(o, ir.Block) or o.name != name else o

    for add in [o for o in analysis.walk(root) if o.name == "arith.addi"]:
        for a, b in (tuple(add.operands), tuple(add.operands)[::-1]):
            mul, mod = owner(a, "arith.muli"), owner(b, "tir.call")
            if mul is None or mod is None or "floormod" not in str(mod.attributes["callee"]):
                continue
            div = owner(mul.operands[0], "arith.floordivsi")
            x, n = tuple(mod.operands)
            if div is not None and div.operands[0] == x and div.operands[1] == n == mul.operands[1]:
                add.result.replace_all_uses_with(x)
                erase_dead(add.result)
                break
