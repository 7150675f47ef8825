"""rfactor's argmax / argmin: a reduction over a pair of buffers (TVM's tuple comm_reducer).

The forms TVM's rfactor recognises (argmin: `<=` and the highest value as identity)::

    with T.init():
        Wi[I] = -1
        Wv[I] = T.min_value(dtype)
    v_Wi: T.int32 = T.Select(Wv[I] >= y, Wi[I], x)
    v_Wv: dtype = T.Select(Wv[I] >= y, Wv[I], y)
    Wi[I] = v_Wi
    Wv[I] = v_Wv

and topi's, which keeps the lowest index among equal values (argmin: `<` for `>`)::

    v_Wi: T.int32 = T.Select(Wv[I] > y or Wv[I] == y and Wi[I] < x, Wi[I], x)
    v_Wv: dtype = T.Select(Wv[I] > y, Wv[I], y)

in either order of the lets, the stores or the init stores; the result is in the order above
(TVM's reducer order: the index, then the value), its lets named after the buffers written.
"""

import math

from mlir import ir
from mlir.dialects import memref

from tir_mlir.ir import region_overrides as overrides
from tir_mlir.dialect.ops import Block, _op as op_of, body_ops
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis.structure import erase
from tir_mlir.analysis.expr_tree import erase_dead
from tir_mlir.ir.regions import block_regions
from tir_mlir.analysis.buffer_util import (
    NotAffine,
    accesses,
    buffer_name,
    emit_index,
    substitute,
    to_affine,
)

# cmpf / cmpi predicates (MLIR's enum values) -> argmax (>=) or argmin (<=)
_CMPF = {3: "argmax", 10: "argmax", 5: "argmin", 12: "argmin"}  # oge, uge, ole, ule
_CMPI = {5: "argmax", 9: "argmax", 3: "argmin", 7: "argmin"}  # sge, uge, sle, ule
# the tie-breaking form compares strictly: ogt, ugt, olt, ult / sgt, ugt, slt, ult
_CMPF_STRICT = {2: "argmax", 9: "argmax", 4: "argmin", 11: "argmin"}
_CMPI_STRICT = {4: "argmax", 8: "argmax", 2: "argmin", 6: "argmin"}
_EQ = {"arith.cmpf": (1, 8), "arith.cmpi": (0,)}  # oeq, ueq / eq


class TupleReduction:
    """The argmax / argmin pattern of a block with two update stores (see module doc)."""

    def __init__(self, block: Block, stores, err: str):
        self.block = block
        leaves = list(block.iter_vars)
        if len(stores) != 2:
            raise ScheduleError(
                err + f"it updates {len(stores)} buffers; only argmax/argmin pairs reduce several"
            )
        sels = [s.operands[0].owner for s in stores]
        if (
            any(
                isinstance(o, ir.Block)
                or o.name != "arith.select"
                or "tir.let_name" not in o.attributes
                for o in sels
            )
            or sels[0] == sels[1]
        ):
            raise ScheduleError(
                err + "each update store must store its own let variable, a T.Select"
            )
        bufs = [s.operands[1] for s in stores]
        if bufs[0] == bufs[1] or (
            ir.MemRefType(bufs[0].type).shape != ir.MemRefType(bufs[1].type).shape
        ):
            raise ScheduleError(err + "the two updated buffers must differ and have one shape")
        self.indices = self._index(stores[0], leaves, err)
        if self._index(stores[1], leaves, err) != self.indices:
            raise ScheduleError(err + "the two updates store at different indices")
        # the value buffer is the one compared: Select(Wv[I] cmp y, ...) (the index's
        # condition may be the tie-breaking `or`)
        first = next(
            (
                c
                for c in (s.operands[0].owner for s in sels)
                if not isinstance(c, ir.Block) and c.name != "arith.ori"
            ),
            None,
        )
        value = (
            []
            if first is None
            else [p for p in (0, 1) if self._self_load(first.operands[0], bufs[p])]
        )
        if len(value) != 1:
            raise ScheduleError(err + "the update is not an argmax/argmin pair")
        v = value[0]
        i = 1 - v
        self.buffers = [bufs[i], bufs[v]]  # TVM's order: index, then value
        self.stores = [stores[i], stores[v]]
        self.sels = [sels[i], sels[v]]
        conds = [s.operands[0].owner for s in self.sels]
        self.tie_loads = self._tie_break(
            conds[0], conds[1], bufs[i], bufs[v], self.sels[0].operands[2]
        )
        self.tie_break = self.tie_loads is not None
        if self.tie_break:
            conds = [conds[1], conds[1]]
        kinds = {self._kind(c, bufs[v]) for c in conds}
        kind = kinds.pop() if len(kinds) == 1 else None
        if kind is None:
            raise ScheduleError(
                err + "the update is not an argmax/argmin pair (a Select on "
                "value >= / <= the new value)"
            )
        self.kind = kind
        if not (
            self._self_load(self.sels[0].operands[1], bufs[i])
            and self._self_load(self.sels[1].operands[1], bufs[v])
            and _same(conds[0].operands[1], conds[1].operands[1])
            and _same(conds[1].operands[1], self.sels[1].operands[2])
        ):
            raise ScheduleError(err + "the update is not an argmax/argmin pair")
        self_loads = (
            [op_of(c.operands[0].owner) for c in conds]
            + [op_of(s.operands[1].owner) for s in self.sels]
            + (self.tie_loads or [])
        )
        if any(
            k == "load" and any(val == b for b in self.buffers) and op_of(o) not in self_loads
            for o, k, val in accesses(block.op)
        ):
            raise ScheduleError(err + "a reduced buffer is read outside the update")
        self._check_init(err, leaves)
        regions = block_regions(block.op)  # TVM's rf block keeps the block's lists
        self.orders = {
            k: [buffer_name(r.buffer) for r in rs]
            for k, rs in (("read", regions.reads), ("write", regions.writes))
        }

    def _index(self, store, leaves, err):
        try:
            return [to_affine(x, leaves) for x in store.operands[2:]]
        except NotAffine:
            raise ScheduleError(err + "the store index is not affine in the iter vars") from None

    def _self_load(self, value, buf) -> bool:
        o = value.owner
        if isinstance(o, ir.Block) or o.name != "memref.load" or o.operands[0] != buf:
            return False
        try:
            return [
                to_affine(x, list(self.block.iter_vars)) for x in o.operands[1:]
            ] == self.indices
        except NotAffine:
            return False

    def _kind(self, cond, value_buf) -> str | None:
        if isinstance(cond, ir.Block) or not self._self_load(cond.operands[0], value_buf):
            return None
        tables = (
            {"arith.cmpf": _CMPF_STRICT, "arith.cmpi": _CMPI_STRICT}
            if self.tie_break
            else {"arith.cmpf": _CMPF, "arith.cmpi": _CMPI}
        )
        table = tables.get(cond.name)
        if table is None:
            return None
        return table.get(ir.IntegerAttr(cond.attributes["predicate"]).value)

    def _tie_break(self, cond, vcond, ibuf, vbuf, x):
        """The loads of Wi / Wv in `cond` when it is `vcond or (Wv == y and Wi < x)` (TVM's
        tie-breaking argmax / argmin: the lowest index among equal values), else None."""

        def op(v, names):
            o = v.owner
            return None if isinstance(o, ir.Block) or o.name not in names else o

        if isinstance(cond, ir.Block) or cond.name != "arith.ori" or isinstance(vcond, ir.Block):
            return None
        strict, both = op(cond.operands[0], (vcond.name,)), op(cond.operands[1], ("arith.andi",))
        if strict is None or both is None or not _same(strict.result, vcond.result):
            return None
        eq, lt = op(both.operands[0], (vcond.name,)), op(both.operands[1], ("arith.cmpi",))
        if (
            eq is None
            or lt is None
            or ir.IntegerAttr(eq.attributes["predicate"]).value not in _EQ[eq.name]
            or ir.IntegerAttr(lt.attributes["predicate"]).value not in (2, 6)
        ):  # slt, ult
            return None
        if not (
            self._self_load(eq.operands[0], vbuf)
            and _same(eq.operands[1], vcond.operands[1])
            and self._self_load(lt.operands[0], ibuf)
            and _same(lt.operands[1], x)
        ):
            return None
        return [
            op_of(strict.operands[0].owner),
            op_of(eq.operands[0].owner),
            op_of(lt.operands[0].owner),
        ]

    def _check_init(self, err, leaves):
        init = self.block.init
        stores = [o for o in body_ops(init) if o.name == "memref.store"] if init else []
        if (
            init is None
            or len(stores) != 2
            or not all(any(s.operands[1] == b for s in stores) for b in self.buffers)
            or any("tir.let_name" in o.attributes for o in body_ops(init))
        ):
            raise ScheduleError(
                err + "the init must be one store of the identity to each reduced buffer"
            )
        self.init_stores = [next(s for s in stores if s.operands[1] == b) for b in self.buffers]
        for s, want in zip(self.init_stores, ("index", self.kind)):
            try:
                same = [to_affine(x, list(init.arguments)) for x in s.operands[2:]] == self.indices
            except NotAffine:
                same = False
            c = s.operands[0].owner
            if (
                not same
                or isinstance(c, ir.Block)
                or c.name != "arith.constant"
                or not _identity(want, c.attributes["value"])
            ):
                raise ScheduleError(
                    err + f"the init of {buffer_name(s.operands[1])} is not "
                    f"the {self.kind} identity at the stored index"
                )
        self.identities = [s.operands[0].owner for s in self.init_stores]

    # --- the rewrite -------------------------------------------------------------------
    def finish_rf(self, rfb: Block, rf_bufs):
        """The rf block's update and init in TVM's order, the lets named after W_rf."""
        stores = [o for o in body_ops(rfb.body) if o.name == "memref.store"]
        sts = [next(s for s in stores if s.operands[1] == b) for b in rf_bufs]
        sels = [s.operands[0].owner for s in sts]
        _reorder(rfb.body, sels + sts)
        for sel, b in zip(sels, rf_bufs):
            sel.attributes["tir.let_name"] = ir.StringAttr.get("v_" + buffer_name(b))
        rename = {buffer_name(b): buffer_name(r) for b, r in zip(self.buffers, rf_bufs)}
        for kind, names in self.orders.items():
            overrides.set_order(rfb.op, kind, [rename.get(n, n) for n in names])
        if rfb.init is not None:
            inits = [o for o in body_ops(rfb.init) if o.name == "memref.store"]
            _reorder(rfb.init, [next(s for s in inits if s.operands[1] == b) for b in rf_bufs])

    def drop_combine(self, rfb: Block, rf_bufs):
        """The rf block of a wholly factored pair stores the new pair alone (as TVM: no lets)."""
        for st in [o for o in body_ops(rfb.body) if o.name == "memref.store"]:
            sel = st.operands[0].owner
            rhs = sel.operands[2]
            sel.result.replace_all_uses_with(rhs)
            rest = [sel.operands[0], sel.operands[1]]
            erase(sel)
            for v in rest:
                erase_dead(v)

    def fill_writeback(self, wb: Block, rf_bufs, spatial, axis, loc):
        """init: the identities; body: the pair combined with the rf pair (as TVM)."""
        sub = [
            ir.AffineExpr.get_dim(1 + spatial.index(k))
            if k in spatial
            else ir.AffineExpr.get_constant(0)
            for k in range(len(self.block.iter_types))
        ]
        init = wb.init
        assert init is not None  # the write-back block is built with an init
        for region_block, is_init in ((init, True), (wb.body, False)):
            args = list(region_block.arguments)
            ip = ir.InsertionPoint.at_block_terminator(region_block)
            with ip, loc:

                def idx():
                    return [emit_index(substitute(e, sub), args) for e in self.indices]

                def rf_idx():
                    i = idx()
                    return i[:axis] + [args[0]] + i[axis:]

                if is_init:
                    for c, b in zip(self.identities, self.buffers):
                        memref.StoreOp(c.clone(ip=ip).result, b, idx())
                    continue
                vbuf, vrf = self.buffers[1], rf_bufs[1]
                ibuf, irf = self.buffers[0], rf_bufs[0]

                def cmp(c, a, b):
                    return ir.Operation.create(
                        c.name,
                        results=[c.result.type],
                        operands=[a(), b()],
                        attributes={"predicate": c.attributes["predicate"]},
                        loc=c.location,
                    ).result

                def mine(buf):
                    return lambda: memref.LoadOp(buf, idx()).result

                def rf(buf):
                    return lambda: memref.LoadOp(buf, rf_idx()).result

                lets = []
                for b, rb, sel in zip(self.buffers, rf_bufs, self.sels):
                    c = sel.operands[0].owner
                    if c.name == "arith.ori":  # Wv > Wv_rf or (== and Wi < Wi_rf)
                        strict, both = (x.owner for x in c.operands)
                        eq, lt = (x.owner for x in both.operands)
                        tie = ir.Operation.create(
                            "arith.andi",
                            results=[both.result.type],
                            operands=[cmp(eq, mine(vbuf), rf(vrf)), cmp(lt, mine(ibuf), rf(irf))],
                            loc=both.location,
                        ).result
                        cond = ir.Operation.create(
                            "arith.ori",
                            results=[c.result.type],
                            operands=[cmp(strict, mine(vbuf), rf(vrf)), tie],
                            loc=c.location,
                        )
                    else:
                        cond = cmp(c, mine(vbuf), rf(vrf)).owner
                    lets.append(
                        ir.Operation.create(
                            "arith.select",
                            results=[sel.result.type],
                            operands=[
                                cond.result,
                                memref.LoadOp(b, idx()).result,
                                memref.LoadOp(rb, rf_idx()).result,
                            ],
                            attributes={"tir.let_name": ir.StringAttr.get("v_" + buffer_name(b))},
                            loc=sel.location,
                        )
                    )
                for b, let in zip(self.buffers, lets):
                    memref.StoreOp(let.result, b, idx())
        overrides.set_order(wb.op, "read", [buffer_name(b) for b in rf_bufs])


def _identity(want: str, attr: ir.Attribute) -> bool:
    if isinstance(attr, ir.IntegerAttr) and want == "index":
        return ir.IntegerAttr(attr).value == -1
    if isinstance(attr, ir.FloatAttr):
        v = ir.FloatAttr(attr).value
        return v == -math.inf or v <= -3.4e38 if want == "argmax" else v == math.inf or v >= 3.4e38
    if isinstance(attr, ir.IntegerAttr):
        v, w = ir.IntegerAttr(attr).value, ir.IntegerType(attr.type).width
        return v == (-(1 << (w - 1)) if want == "argmax" else (1 << (w - 1)) - 1)
    return False


def _same(a: ir.Value, b: ir.Value) -> bool:
    """The two tree-shaped expressions compute the same (same ops, attributes, leaves)."""
    if a == b:
        return True
    oa, ob = a.owner, b.owner
    if (
        isinstance(oa, ir.Block)
        or isinstance(ob, ir.Block)
        or oa.name != ob.name
        or len(oa.operands) != len(ob.operands)
        or len(oa.regions)
        or len(ob.regions)
    ):
        return False
    attrs = [
        {n: str(o.attributes[n]) for n in o.attributes if n != "tir.let_name"} for o in (oa, ob)
    ]
    return attrs[0] == attrs[1] and all(_same(x, y) for x, y in zip(oa.operands, ob.operands))


def _reorder(block: ir.Block, roots):
    """Move each root, with the ops computing its operands (not other lets), to the end of
    `block` in the order given (a let keeps its own expression)."""
    ops = [op_of(o) for o in body_ops(block)]
    term = list(block.operations)[-1]
    for root in roots:
        tree, todo = [], [op_of(root)]
        while todo:
            o = todo.pop()
            tree.append(o)
            for v in o.operands:
                d = v.owner
                if (
                    not isinstance(d, ir.Block)
                    and op_of(d) in ops
                    and op_of(d) not in tree
                    and "tir.let_name" not in d.attributes
                ):
                    todo.append(op_of(d))
        for o in sorted(tree, key=ops.index):
            o.move_before(term)
