"""The scalar body of a `linalg.generic` -> the statements of a `tir.block`.

A body block argument is the element of its operand at the operand's indexing map applied to
the iter vars: a `memref.load` (one per use, as TVMScript reads `A[i, k]` where it is used). The
body's arith/math ops are cloned per use, so expressions stay trees the printer inlines;
`linalg.index d` is iter var d; a scalar defined outside the op (torch-mlir hoists constants)
must be an `arith.constant` and is cloned. The yielded values are stored at the outputs'
indexing maps; with several outputs (argmax: the max and its index) every value is computed
into a let before the first store, since a later value may read an output an earlier store
changes.
"""

from typing import Callable, Union

from mlir import ir
from mlir.dialects import arith, memref

from tir_mlir.frontend.linalg_import.source import LinalgSource
from tir_mlir.dialect.expr_ops import BINARY, CALLS, CASTS, MATH_SAME

# Body ops a block can hold: what the TVMScript printer prints, so what a program holds.
SUPPORTED = {
    *BINARY,
    *CALLS,
    *CASTS,
    *(f"math.{n}" for n in MATH_SAME),
    "arith.constant",
    "arith.cmpi",
    "arith.cmpf",
    "arith.andi",
    "arith.ori",
    "arith.xori",
    "arith.negf",
    "linalg.index",
}
# Body ops with no result that the import leaves out: torch-mlir's run-time checks (batch
# norm asserts its variance is positive), which TensorIR has no op for. Values are built from
# what the body yields, so nothing else refers to them.
DROPPED = {"cf.assert"}
# arith.cmpf predicates with no TVMScript comparison: false, ord, uno, true.
_CMPF_UNSUPPORTED = {0: "false", 7: "ord", 14: "uno", 15: "true"}
# TVMScript compares floats with ordered predicates (and `!=` is une). The others, which
# torch-mlir uses (relu is `select(x ugt 0, x, 0)`), are written with them, NaN cases kept:
# predicate -> (negate?, ordered predicates or-ed).
_OLT, _OLE, _OGT, _OGE = 4, 5, 2, 3
_CMPF_REWRITE = {
    6: (False, (_OLT, _OGT)),
    8: (True, (_OLT, _OGT)),
    9: (True, (_OLE,)),
    10: (True, (_OLT,)),
    11: (True, (_OGE,)),
    12: (True, (_OGT,)),
}


def emit_index(expr: ir.AffineExpr, ivs) -> ir.Value:
    """An affine expression of the iter vars as index arith ops at the insertion point
    (`%` is `tir.call "floormod"`, as the TVMScript parser builds it)."""
    e = expr.maybe_downcast()
    index = ir.IndexType.get()
    if isinstance(e, ir.AffineConstantExpr):
        return arith.ConstantOp(index, e.value).result
    if isinstance(e, ir.AffineDimExpr):
        return _leaf(ivs[e.position])
    if not isinstance(e, ir.AffineBinaryExpr):
        raise ValueError(f"unsupported index expression {expr}")
    lhs, rhs = e.lhs.maybe_downcast(), e.rhs.maybe_downcast()
    if isinstance(e, ir.AffineAddExpr):
        if isinstance(rhs, ir.AffineConstantExpr) and rhs.value < 0:  # i - 1, not i + -1
            return arith.SubIOp(
                emit_index(lhs, ivs), emit_index(ir.AffineExpr.get_constant(-rhs.value), ivs)
            ).result
        return arith.AddIOp(emit_index(lhs, ivs), emit_index(rhs, ivs)).result
    if isinstance(e, ir.AffineMulExpr):
        return arith.MulIOp(emit_index(lhs, ivs), emit_index(rhs, ivs)).result
    if isinstance(e, ir.AffineFloorDivExpr):
        return arith.FloorDivSIOp(emit_index(lhs, ivs), emit_index(rhs, ivs)).result
    if isinstance(e, ir.AffineModExpr):
        return ir.Operation.create(
            "tir.call",
            results=[index],
            operands=[emit_index(lhs, ivs), emit_index(rhs, ivs)],
            attributes={"callee": ir.StringAttr.get("floormod")},
        ).result
    raise ValueError(f"unsupported index expression {expr}")


def _leaf(iv: Union[ir.Value, Callable[[], ir.Value]]) -> ir.Value:
    """An iteration index: an iter var, or a callable building a fresh index expression per
    use (a T.init computing a producer's value at the reduction's output element)."""
    return iv() if callable(iv) else iv


def convert(value: ir.Value, to: ir.Type, loc=None) -> ir.Value:
    """`value` as type `to`: an int8 element of a bool constant buffer read as a bool
    (`T.Cast("bool", x)`, `x != 0`); any other value is already of its type."""
    if value.type == to:
        return value
    zero = arith.ConstantOp(value.type, 0, loc=loc).result
    cmp = arith.CmpIOp(arith.CmpIPredicate.ne, value, zero, loc=loc)
    cmp.attributes["tir.cast"] = ir.UnitAttr.get()
    return cmp.result


def read(buf, indices, to: ir.Type, loc=None) -> ir.Value:
    """The element of planned buffer `buf` at `indices()` (index values, made only for a real
    buffer) as type `to`: a load, or a splat constant's scalar."""
    if buf.splat is not None:
        attr = buf.splat
        if isinstance(attr, ir.BoolAttr):
            attr = ir.IntegerAttr.get(ir.IntegerType.get_signless(1), int(attr.value))
        value = ir.Operation.create(
            "arith.constant", results=[buf.element_type], attributes={"value": attr}, loc=loc
        ).result
    else:
        value = memref.LoadOp(buf.value, indices(), loc=loc).result
    return convert(value, to, loc)


def clone_constant(src: LinalgSource, v: ir.Value, user) -> ir.Value:
    """A copy, at the insertion point, of the scalar constant `v` that `user` reads."""
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        what = "a function argument" if isinstance(owner, ir.Block) else f"'{owner.name}'"
        raise src.error(
            f"a scalar used by '{user.name}' comes from {what}: only constants "
            f"defined outside a linalg op are supported",
            user,
        )
    return ir.Operation.create(
        "arith.constant",
        results=[v.type],
        attributes={"value": owner.attributes["value"]},
        loc=src.location(owner),
    ).result


class GenericBody:
    def __init__(self, src: LinalgSource, op, buffers, maps, iter_vars):
        self.src = src
        self.op = op
        self.buffers = buffers  # per operand: a planned Buffer, None for a scalar
        self.maps = maps
        self.ivs = list(iter_vars)
        body = op.regions[0].blocks[0]
        self.args = {a: j for j, a in enumerate(body.arguments)}
        self.defs = {r: o.operation for o in body.operations for r in o.operation.results}
        self.yield_op = list(body.operations)[-1].operation
        for o in list(body.operations)[:-1]:
            self._check(o.operation)

    def _check(self, o):
        if o.name in DROPPED:
            return
        if o.name not in SUPPORTED or len(o.regions):
            raise self.src.error(f"unsupported op '{o.name}' in the body of a linalg op", o)
        if o.name == "arith.cmpf":
            pred = ir.IntegerAttr(o.attributes["predicate"]).value
            if pred in _CMPF_UNSUPPORTED:
                raise self.src.error(
                    f"unsupported comparison 'arith.cmpf "
                    f"{_CMPF_UNSUPPORTED[pred]}' in the body of a linalg op",
                    o,
                )

    def yielded(self, k: int = 0) -> ir.Value:
        """The k-th yielded value, built at the insertion point."""
        return self.value(self.yield_op.operands[k])

    def emit(self):
        """The stores of the yielded values (at the insertion point, inside the block)."""
        loc = self.src.location(self.yield_op)
        n_out = len(self.yield_op.operands)
        n_in = len(self.buffers) - n_out
        # an output with no buffer is one nothing reads (linalg_ops.dead_outputs)
        kept = [i for i in range(n_out) if self.buffers[n_in + i] is not None]
        values = {i: self.value(self.yield_op.operands[i]) for i in kept}
        if len(kept) > 1:
            for i, v in values.items():
                if not isinstance(v, ir.BlockArgument):
                    v.owner.attributes["tir.let_name"] = ir.StringAttr.get(
                        f"v_{self.buffers[n_in + i].name}"
                    )
        for i, v in values.items():
            idx = [emit_index(e, self.ivs) for e in self.maps[n_in + i].results]
            memref.StoreOp(v, self.buffers[n_in + i].value, idx, loc=loc)

    def value(self, v: ir.Value) -> ir.Value:
        j = self.args.get(v)
        if j is not None:
            buf = self.buffers[j]
            if buf is None:  # a scalar operand (a fill's value)
                return clone_constant(self.src, self.op.operands[j], self.op)
            return read(
                buf,
                lambda: [emit_index(e, self.ivs) for e in self.maps[j].results],
                v.type,
                self.src.location(self.op),
            )
        o = self.defs.get(v)
        if o is None:
            return clone_constant(self.src, v, self.op)
        if o.name == "linalg.index":
            return _leaf(self.ivs[ir.IntegerAttr(o.attributes["dim"]).value])
        operands = [self.value(x) for x in o.operands]
        if o.name == "arith.cmpf":
            pred = ir.IntegerAttr(o.attributes["predicate"]).value
            if pred in _CMPF_REWRITE:
                return self._compare(pred, operands, self.src.location(o))
        new = ir.Operation.create(
            o.name,
            results=[r.type for r in o.results],
            operands=operands,
            attributes={n: o.attributes[n] for n in o.attributes},
            loc=self.src.location(o),
        )
        return new.results[ir.OpResult(v).result_number]

    def _compare(self, pred: int, operands, loc) -> ir.Value:
        """An unordered (or `one`) float comparison as `not`/`or` of ordered ones: `x ugt 0`
        is `not x <= 0`."""
        negate, preds = _CMPF_REWRITE[pred]
        lhs, rhs = operands
        out = None
        for p in preds:
            if out is not None:  # each comparison reads its operands afresh (a tree)
                lhs, rhs = (self._again(lhs), self._again(rhs))
            c = arith.CmpFOp(arith.CmpFPredicate(p), lhs, rhs, loc=loc).result
            out = c if out is None else arith.OrIOp(out, c, loc=loc).result
        if out is None:
            raise ValueError(f"no ordered comparisons for predicate {pred}")
        if negate:
            true = arith.ConstantOp(ir.IntegerType.get_signless(1), 1, loc=loc).result
            out = arith.XOrIOp(out, true, loc=loc).result
        return out

    def _again(self, v: ir.Value) -> ir.Value:
        """A fresh copy of the expression tree `v` (already built in this block)."""
        if isinstance(v, ir.BlockArgument):
            return v
        o = v.owner
        operands = [self._again(x) for x in o.operands]
        return ir.Operation.create(
            o.name,
            results=[r.type for r in o.results],
            operands=operands,
            attributes={n: o.attributes[n] for n in o.attributes},
            loc=self.src.location(o),
        ).results[ir.OpResult(v).result_number]
