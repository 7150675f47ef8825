"""tensorize: replace a blockized computation by a tensor intrinsic's implementation.

tensorize(C_o, "mac16_f32") where C_o came from blockize and the intrinsic's desc is
`for j in range(16): block: C[vj] = C[vj] + A[0] * B[vj]`::

    block "C_o": vi_o, vj_o, vk_o                  block "C_o": vi_o, vj_o, vk_o
        for j_1 in range(16):                          T.reads / T.writes as before
            block "C": vj_i = S(16, j_1)       ->       A_1 = T.match_buffer(A[vi_o, vk_o], ())
                C[vi_o, vj_o*16 + vj_i] += ...          B_1 = T.match_buffer(B[vk_o, vj_o*16:+16], (16,))
                                                        C_1 = T.match_buffer(C[vi_o, vj_o*16:+16], (16,))
                                                        <impl body over A_1, B_1, C_1>

Matching is structural: the same loop extents (from 0), block iter types, domains and
bindings (up to renaming), then the same ops in the same order with the same attributes;
buffer accesses match when, for each desc buffer, every access to the target buffer it is bound
to equals `offset + desc index` on the trailing dims, with offsets (and the leading dims)
independent of the matched loops and iter vars and the same for all accesses (indices, and
index operands of other ops such as a cast of `vi % 8`, are compared after simplifying over the
inner iterators' ranges, as TVM's blockize does: `W[(vj_o * 16 + vj) // 16, (vj_o * 16 + vj) % 16]`
is `W[vj_o, vj]`, a layout transformed for the intrinsic). The impl then
replaces the block body, as TVM's tensorize does: impl parameter k becomes a T.match_buffer
view of the region of the target buffer bound to desc parameter k (at the offsets, the impl's
shape, its offset_factor/align/scope), so its loads, stores and `B.data`/`B.elem_offset`
arguments stay as written; the block keeps its T.reads/T.writes (a call handed pointers would
read and write whole views), its init, and takes the impl root block's annotations it lacks.

Legality: a ScheduleError says what differs (loop extent, iter type, op, buffer offset...).
"""

from typing import Dict, List

from mlir import ir
from mlir.dialects import memref

from tir_mlir.analysis import op_index
from tir_mlir.analysis.index import simplify as range_simplify
from tir_mlir.analysis.structure import SID, erase, walk_all
from tir_mlir.dialect import TERMINATOR
from tir_mlir.dialect.buffers import ALIGN, OFFSET_FACTOR, SCOPE, arg_attrs, scope_attr
from tir_mlir.dialect.ops import (
    EXTERN,
    INDEX_DTYPE,
    Block,
    Loop,
    body_ops,
    extern_args,
    extern_callee,
    index_dtype_attr,
)
from tir_mlir.errors import ScheduleError
from tir_mlir.ir import region_overrides as overrides
from tir_mlir.ir.index_dtypes import buffer_attr, mark_constants
from tir_mlir.ir.regions import block_regions
from tir_mlir.passes.schedule.blockize import blockize
from tir_mlir.analysis.buffer_util import (
    NotAffine,
    buffer_name,
    dims_of,
    emit_index,
    simplify,
    substitute,
    to_affine,
)


class Mismatch(Exception):
    pass


def _is_index(t) -> bool:
    return isinstance(t, ir.IndexType) or str(t) == "index"


def _index_only(op) -> bool:
    """Ops computing indices only (compared as affine expressions at the access)."""
    if op.name in (
        "arith.addi",
        "arith.subi",
        "arith.muli",
        "arith.floordivsi",
        "affine.apply",
    ) or (op.name == "arith.constant" and _is_index(op.results[0].type)):
        return all(_is_index(r.type) for r in op.results)
    return op.name == "tir.call" and _is_index(op.results[0].type)


def _stmts(block: ir.Block) -> list:
    return [o for o in body_ops(block) if not _index_only(o) and o.name != "func.return"]


def func_body(func) -> ir.Block:
    """The desc/impl statements, looking through an explicit `T.block("root")`."""
    body = func.regions[0].blocks[0]
    ops = [o for o in body_ops(body) if o.name != "func.return"]
    if len(ops) == 1 and Block.is_block(ops[0]) and not Block(ops[0]).iter_names:
        return Block(ops[0]).body
    return body


class Matcher:
    """Structural match of a desc subtree against a target subtree."""

    def __init__(self, desc_params: List[ir.Value], scope_leaves: List[ir.Value]):
        self.vals: Dict = {}  # desc value -> target value (hash by identity)
        self.params = desc_params
        self.binding: Dict[int, ir.Value] = {}  # desc param index -> target buffer
        self.offsets: Dict[int, list] = {}  # desc param index -> offsets per target dim
        self.leaves = list(scope_leaves)  # target values fixed for the tensorized block
        self.inner: List[ir.Value] = []  # target values varying inside (IVs, iters)
        # (value, (lo, hi)): the inclusive ranges of the inner values, so a target index
        # such as `W[(vj_o * 16 + vj) // 16, ..., (vj_o * 16 + vj) % 16]` (a transformed
        # layout) reads as `W[vj_o, ..., vj]` before it is compared with the intrinsic's
        self.ranges: List[tuple] = []

    def _inner(self, v: ir.Value, lo, extent):
        self.inner.append(v)
        if isinstance(lo, int) and isinstance(extent, int):
            self.ranges.append((v, (lo, lo + extent - 1)))

    def _map(self, d: ir.Value, t: ir.Value):
        for k, v in self.vals.items():
            if k == d:
                if v != t:
                    raise Mismatch("a value is used inconsistently")
                return
        self.vals[d] = t

    def _get(self, d):
        for k, v in self.vals.items():
            if k == d:
                return v
        return None

    def stmts(self, dops, tops, where):
        if len(dops) != len(tops):
            raise Mismatch(
                f"{where}: the intrinsic has {len(dops)} statement(s), the target {len(tops)}"
            )
        for d, t in zip(dops, tops):
            self.op(d, t, where)

    def op(self, d, t, where):
        if d.name != t.name:
            raise Mismatch(f"{where}: expected {d.name}, found {t.name}")
        if Loop.is_loop(d):
            dl, tl = Loop(d), Loop(t)
            if (dl.min, dl.extent) != (tl.min, tl.extent):
                raise Mismatch(
                    f"loop {tl.name!r} has range [{tl.min}, {tl.min + tl.extent}); "
                    f"the intrinsic's loop {dl.name!r} has [{dl.min}, "
                    f"{dl.min + dl.extent})"
                )
            self._map(dl.iv, tl.iv)
            self._inner(tl.iv, tl.min, tl.extent)
            return self.stmts(_stmts(dl.body), _stmts(tl.body), f"loop {tl.name!r}")
        if Block.is_block(d):
            return self.block(Block(d), Block(t))
        if d.name in ("memref.load", "memref.store"):
            return self.access(d, t, where)
        if len(d.operands) != len(t.operands) or len(d.results) != len(t.results):
            raise Mismatch(f"{where}: {t.name} has a different number of operands")
        for name in d.attributes:
            if name.startswith("tir.") or name == "sid":
                continue
            if name not in t.attributes or str(d.attributes[name]) != str(t.attributes[name]):
                raise Mismatch(f"{where}: {t.name} differs in attribute {name!r}")
        for a, b in zip(d.operands, t.operands):
            if _is_index(a.type) and _is_index(b.type) and self._get(a) is None:
                self._same_index(a, b, where)
                continue
            m = self._get(a)
            if m is None or m != b:
                raise Mismatch(f"{where}: operands of {t.name} differ")
        for a, b in zip(d.results, t.results):
            self._map(a, b)
        for dr, tr in zip(d.regions, t.regions):
            for dbk, tbk in zip(dr.blocks, tr.blocks):
                for a, b in zip(dbk.arguments, tbk.arguments):
                    self._map(a, b)
                self.stmts(_stmts(dbk), _stmts(tbk), where)

    def block(self, d: Block, t: Block):
        where = f"block {t.name!r}"
        if d.iter_types != t.iter_types:
            raise Mismatch(
                f"{where} has iter types {''.join(t.iter_types)}, the intrinsic "
                f"{''.join(d.iter_types)}"
            )
        if [x[1] for x in d.domains] != [x[1] for x in t.domains]:
            raise Mismatch(
                f"{where} has iter extents {[x[1] for x in t.domains]}, the "
                f"intrinsic {[x[1] for x in d.domains]}"
            )
        if (d.init is None) != (t.init is None):
            raise Mismatch(f"{where}: init presence differs from the intrinsic's")
        tl = []
        try:
            tdims = [to_affine(v, tl) for v in t.dims]
            ddims = []
            for v in d.dims:
                mv = self._get(v)
                if mv is None:
                    raise Mismatch(f"{where} is bound to a value the intrinsic does not have")
                ddims.append(to_affine(mv, tl))
        except NotAffine as e:
            raise Mismatch(f"{where}: {e}")
        n = max(len(tl), 1)
        dres = [simplify(substitute(r, ddims), n) for r in d.bindings.results]
        tres = [simplify(substitute(r, tdims), n) for r in t.bindings.results]
        if dres != tres:
            raise Mismatch(f"{where}: bindings differ from the intrinsic's")
        for a, b, (lo, extent) in zip(d.iter_vars, t.iter_vars, t.domains):
            self._map(a, b)
            self._inner(b, lo, extent)
        self.stmts(_stmts(d.body), _stmts(t.body), where)
        d_init, t_init = d.init, t.init
        if d_init is not None and t_init is not None:  # (both or neither: checked above)
            for a, b in zip(d_init.arguments, t_init.arguments):
                self._map(a, b)
            self.stmts(_stmts(d_init), _stmts(t_init), where + " (init)")

    def _index_forms(self, didx, tidx, where):
        """(desc forms, target forms, leaves): the index values as AffineExprs over the same
        leaves (the desc's mapped to the target values they match), simplified over the
        inner values' ranges."""
        leaves = list(self.leaves) + list(self.inner)
        dl = []
        try:
            de = [to_affine(v, dl) for v in didx]
            te = [to_affine(v, leaves) for v in tidx]
        except NotAffine as e:
            raise Mismatch(f"{where}: {e}")
        sub = []
        for v in dl:
            m = self._get(v)
            if m is None or m not in leaves:
                raise Mismatch(f"{where}: an intrinsic index uses an unknown value")
            sub.append(ir.AffineExpr.get_dim(leaves.index(m)))
        ranges = {k: r for v, r in self.ranges for k, x in enumerate(leaves) if x == v}
        de = [range_simplify(substitute(e, sub) if sub else e, ranges) for e in de]
        te = [range_simplify(e, ranges) for e in te]
        return de, te, leaves

    def _same_index(self, d: ir.Value, t: ir.Value, where):
        """An index operand of a matched op (`T.Cast("int32", vi % 8)`): equal as expressions."""
        (de,), (te,), leaves = self._index_forms([d], [t], where)
        if simplify(te - de, max(len(leaves), 1)) != ir.AffineConstantExpr.get(0):
            raise Mismatch(f"{where}: index operands differ ({te} for the intrinsic's {de})")

    def access(self, d, t, where):
        is_load = d.name == "memref.load"
        dbuf, tbuf = (d.operands[0], t.operands[0]) if is_load else (d.operands[1], t.operands[1])
        didx = list(d.operands[1:] if is_load else d.operands[2:])
        tidx = list(t.operands[1:] if is_load else t.operands[2:])
        if not is_load:
            m = self._get(d.operands[0])
            if m is None or m != t.operands[0]:
                raise Mismatch(f"{where}: stored values differ")
        k = next((i for i, p in enumerate(self.params) if p == dbuf), None)
        if k is None:
            raise Mismatch(f"{where}: the intrinsic accesses a buffer that is not a parameter")
        if ir.MemRefType(dbuf.type).element_type != ir.MemRefType(tbuf.type).element_type:
            raise Mismatch(f"{where}: element types of buffer differ")
        if k in self.binding and self.binding[k] != tbuf:
            raise Mismatch(f"{where}: intrinsic buffer #{k} is bound to two target buffers")
        self.binding[k] = tbuf
        lead = len(tidx) - len(didx)
        if lead < 0:
            raise Mismatch(f"{where}: the target buffer has fewer dims than the intrinsic's")
        de, te, leaves = self._index_forms(didx, tidx, where)
        n = max(len(leaves), 1)
        inner_dims = set(range(len(self.leaves), len(leaves)))
        offs = [simplify(e, n) for e in te[:lead]]
        offs += [simplify(a - b, n) for a, b in zip(te[lead:], de)]
        if any(dims_of(o) & inner_dims for o in offs):
            raise Mismatch(
                f"{where}: the access to {buffer_name(tbuf)} does not match the "
                f"intrinsic's access pattern"
            )
        if k in self.offsets and self.offsets[k] != offs:
            raise Mismatch(f"{where}: accesses to {buffer_name(tbuf)} have different offsets")
        self.offsets[k] = offs
        if is_load:
            self._map(d.result, t.result)


def tensorize(block: Block, desc_func, impl_func, intrin_name: str):
    dparams = list(desc_func.regions[0].blocks[0].arguments)
    iparams = list(impl_func.regions[0].blocks[0].arguments)
    if [p.type for p in dparams] != [p.type for p in iparams]:
        raise ScheduleError(
            f"tensorize: intrinsic {intrin_name!r}: desc and impl parameters differ"
        )
    m = Matcher(dparams, list(block.iter_vars))
    try:
        m.stmts(_stmts(func_body(desc_func)), _stmts(block.body), f"block {block.name!r}")
    except Mismatch as e:
        raise ScheduleError(
            f"tensorize: block {block.name!r} does not match intrinsic {intrin_name!r}: {e}"
        )
    unbound = [k for k in range(len(dparams)) if k not in m.binding]
    if unbound:
        raise ScheduleError(
            f"tensorize: intrinsic {intrin_name!r} parameter(s) {unbound} are "
            f"not accessed by its description"
        )
    for o, i in _uses(impl_func, iparams):
        if not (
            o.name == EXTERN
            or (o.name in ("memref.load", "vector.load") and i == 0)
            or (o.name in ("memref.store", "vector.store") and i == 1)
        ):
            raise ScheduleError(
                f"tensorize: the impl uses a buffer parameter in {o.name}; only loads, "
                f"stores (scalar or vector) and T.call_extern arguments are supported"
            )
    with block.op.location:
        _replace(block, impl_func, m)


def check_loop(
    mod, loop: Loop, desc_func, impl_func, intrin_name: str, preserve_unit_iters: bool = True
):
    """Refuse (ScheduleError) a tensorize of `loop` whose blockized block would not match
    the intrinsic. tensorize of a loop blockizes it first; the match is tried on a copy of
    `mod` (an IRModule holding the loop), so a refusal leaves `mod` as it was."""
    sid = loop.op.attributes[SID]
    scratch = mod.copy()
    found = [
        o
        for o in walk_all(scratch.module.operation)
        if o.name == Loop.OP_NAME and SID in o.attributes and o.attributes[SID] == sid
    ]
    prev = op_index.reporting_to(None)  # (the scratch copy is no schedule's module)
    try:
        block = blockize(Loop(found[0]), preserve_unit_iters)
        tensorize(block, desc_func, impl_func, intrin_name)
    finally:
        op_index.reporting_to(prev)


def _replace(block: Block, impl_func, m: Matcher):
    """The block body becomes the impl's, over TVM's match_buffer views: impl parameter k is
    `T.match_buffer(<target k>[offsets k : + shape], shape)`, so the impl's loads, stores and
    `B.data` / `B.elem_offset` arguments stay as written. The block keeps its T.reads /
    T.writes (an impl handing pointers to a call would read and write whole views) and takes
    the annotations of the impl's root block that it has not got."""
    before = block_regions(block.op)
    leaves = list(block.iter_vars)
    term = list(block.body.operations)[-1]
    for o in reversed(body_ops(block.body)):
        erase(o)
    # The impl's statements move out of a scratch copy of its function, so the values they
    # share (constants, pointers computed before a call) stay connected.
    scratch = impl_func.clone(ip=ir.InsertionPoint(term))
    params = list(scratch.regions[0].blocks[0].arguments)
    attrs = arg_attrs(scratch)
    with ir.InsertionPoint(term):
        views = [
            _view(p, attrs[k], m.binding[k], m.offsets[k], leaves) for k, p in enumerate(params)
        ]
    moved = [o for o in body_ops(func_body(scratch)) if o.name != "func.return"]
    for o in moved:
        o.move_before(term)
    for p, v in zip(params, views):
        p.replace_all_uses_with(v)
    if "int64" in block.index_dtypes:
        _widen(views, moved)
    _take_annotations(block, scratch)
    erase(scratch)
    _pin_regions(block, before)


def _view(param, attrs: dict, tbuf, offs, leaves) -> ir.Value:
    """`param` as a view of the region of `tbuf` it is bound to (leading dims of size 1)."""
    shape = list(ir.MemRefType(param.type).shape)
    ttype = ir.MemRefType(tbuf.type)
    strides, _ = ttype.get_strides_and_offset()
    n, rank = len(shape), len(ttype.shape)
    layout = ir.StridedLayoutAttr.get(
        ir.ShapedType.get_dynamic_stride_or_offset(), strides[rank - n :]
    )
    view = memref.subview(
        tbuf,
        [emit_index(e, leaves) for e in offs],
        [1] * (rank - n) + shape,
        [1] * rank,
        result_type=ir.MemRefType.get(shape, ttype.element_type, layout),
    )
    va = view.owner.attributes
    va["tir.name"] = attrs.get("tir.name", ir.StringAttr.get(buffer_name(tbuf)))
    va[SCOPE] = attrs.get(SCOPE, scope_attr("global"))
    va["tir.match_buffer"] = ir.UnitAttr.get()
    for key in (OFFSET_FACTOR, ALIGN, "tir.dtype"):
        if key in attrs:
            va[key] = attrs[key]
    return view


def _widen(views, moved):
    """An int64 block gets the impl in int64, as TVM's tensorize normalizes it: the views'
    shapes, their elem_offsets and the index arithmetic over them (`C.elem_offset // 256`)."""
    for v in views:
        rank = ir.MemRefType(v.type).rank
        if rank:
            v.owner.attributes[INDEX_DTYPE] = buffer_attr(["int64"] * rank)
    for root in moved:
        for op in [root, *walk_all(root)]:
            if (
                op.name == EXTERN
                and extern_callee(op) == "elem_offset"
                and any(extern_args(op)[0] == v for v in views)
            ):
                op.attributes[INDEX_DTYPE] = index_dtype_attr("int64")
        for op in [root, *walk_all(root)]:
            for r in op.results:
                mark_constants(r)


def _take_annotations(block: Block, impl_func):
    ops = [o for o in body_ops(impl_func.regions[0].blocks[0]) if o.name != "func.return"]
    if len(ops) != 1 or not Block.is_block(ops[0]):
        return
    have = block.annotations
    extra = {k: v for k, v in Block(ops[0]).annotations.items() if k not in have}
    if extra:
        block.set_attr("annotations", ir.DictAttr.get({**have, **extra}))


def _pin_regions(block: Block, before):
    """T.reads / T.writes as they were before the body was replaced (TVM keeps them)."""
    n = len(block.iter_names)
    after = block_regions(block.op)
    for kind, was, now in (
        ("read", before.reads, after.reads),
        ("write", before.writes, after.writes),
    ):
        names = [buffer_name(r.buffer) for r in was]
        for r in was:
            if not r.free and all(isinstance(ext, int) for _, ext in r.ranges):
                overrides.set_explicit(block.op, kind, buffer_name(r.buffer), n, r.ranges)
        gone = [buffer_name(r.buffer) for r in now if buffer_name(r.buffer) not in names]
        if gone:
            overrides.add_hidden(block.op, kind, gone)
        if len(names) > 1:
            overrides.set_order(block.op, kind, names)


def _uses(root, params):
    """(op, operand number) of every use of a parameter in `root`; a use by the `gpu.yield`
    of a `tir.extern` is reported as a use by the extern op (operand: its argument number)."""
    todo = []

    def visit(o):
        for i, v in enumerate(o.operands):
            if any(v == p for p in params):
                parent = o.parent
                if o.name == TERMINATOR and extern_callee(parent) is not None:
                    todo.append((parent, i))
                else:
                    todo.append((o, i))
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return todo
