"""Shared helpers of the buffer/reduction primitives (cache_read, rfactor, blockize, tensorize...).

Three small toolkits over the `tir` representation of docs/design.md:
- buffers: a buffer is a memref value (function argument or `memref.alloc`); its name is the
  `tir.name` arg/alloc attribute; `block_reads`/`block_writes` give TVM's buffer order;
- index expressions: `to_affine` turns an index value tree (arith on index, affine.apply,
  `tir.call "floormod"`) into an AffineExpr over a list of leaf values; `emit_index` builds it
  back as tree-shaped arith ops (one use per op, as the printer expects);
- structure: walking ops, the enclosing loops of a block, substituting a value use by use.
"""

from typing import Callable, List, Optional, Union

from mlir import ir
from mlir.dialects import arith

from tir_mlir.analysis.structure import erase
from tir_mlir.ir import ir_walk
from tir_mlir.dialect.buffers import scope_of
from tir_mlir.ir.affine_exprs import const_of, dims_of  # noqa: F401  (dims_of re-exported)
from tir_mlir.dialect.ops import Block, Loop, _op, add_terminator, body_ops
from tir_mlir.ir.ir_walk import func_of  # noqa: F401  (re-exported for the primitives)
from tir_mlir.ir.index_dtypes import mark_constants
from tir_mlir.errors import ScheduleError
from tir_mlir.ir.region_overrides import accumulator_reads, writes_first

INDEX_OPS = (
    "arith.addi",
    "arith.subi",
    "arith.muli",
    "arith.floordivsi",
    "affine.apply",
    "arith.constant",
)


class NotAffine(Exception):
    """An index expression outside what the affine toolkit understands."""


# --- buffers ----------------------------------------------------------------------------------
def is_func_arg(value: ir.Value) -> bool:
    return isinstance(value.owner, ir.Block)


def buffer_name(value: ir.Value) -> str:
    """The `tir.name` of a memref argument or alloc."""
    if is_func_arg(value):
        func = ir.BlockArgument(value).owner.owner
        attrs = ir.ArrayAttr(func.attributes["arg_attrs"])[ir.BlockArgument(value).arg_number]
        return ir.StringAttr(ir.DictAttr(attrs)["tir.name"]).value
    return ir.StringAttr(value.owner.attributes["tir.name"]).value


def buffer_scope(value: ir.Value) -> str:
    if is_func_arg(value):
        return "global"
    return scope_of(value.owner.attributes)


def walk(op, pred: Callable = lambda o: True) -> list:
    """Ops nested in `op` (pre-order, `op` itself excluded) satisfying pred."""
    return [o for o in ir_walk.walk_all(op) if pred(o)]


def accesses(op, allocs: Optional[list] = None) -> list:
    """(op, "load"|"store", buffer) for every memref access nested in `op`, in program order
    (filtered inside MLIR's walk: primitives ask this of every block, many times); the buffers
    allocated inside are appended to `allocs` when given (from the same walk)."""
    res = []

    def visit(o):
        name = o.name
        if name == "memref.load":
            res.append((o, "load", o.operands[0]))
        elif name == "memref.store":
            res.append((o, "store", o.operands[1]))
        elif allocs is not None and name == "memref.alloc":
            allocs.append(o.result)
        return ir.WalkResult.ADVANCE

    _op(op).walk(visit, ir.WalkOrder.PRE_ORDER)
    return res


def _unique(values) -> list:
    out = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def _scan(block: Block):
    """(accesses, buffers allocated inside) of a block, from one walk."""
    local = []
    return accesses(block.op, local), local


def _writes(acc, local) -> list:
    return [b for b in _unique(buf for _, k, buf in acc if k == "store") if b not in local]


def block_writes(block: Block) -> list:
    """Buffers the block stores to (TVM's T.writes order: first store first)."""
    return _writes(*_scan(block))


def _host_load(load: ir.Operation) -> Optional[ir.Operation]:
    """The load whose index `load`'s value is (through index arithmetic): `A[B[i]]`'s A for
    B's load; None for a load that is not inside another's index."""
    seen, todo = [], [load.result]
    while todo:
        for u in todo.pop().uses:
            o = _op(u.owner)
            if o.name == "memref.load" and u.operand_number > 0:
                return o
            if o.name.startswith("arith.") and o.results and not any(o == s for s in seen):
                seen.append(o)
                todo.extend(o.results)
    return None


def _tvm_access_order(acc: list) -> list:
    """Accesses in TVM's order: an access before the loads in its indices (TVM visits
    `A[B[i]]` as A, then B; in program order B's load comes first)."""
    hosts = [(a, _host_load(a[0])) if a[1] == "load" else (a, None) for a in acc]
    if all(h is None for _, h in hosts):
        return acc
    out = []

    def emit(a):
        out.append(a)
        for b, h in hosts:
            if h is not None and h == a[0]:
                emit(b)

    for a, h in hosts:
        if h is None or not any(h == b[0] for b in acc):
            emit(a)
    return out


def block_reads(block: Block) -> list:
    """Buffers the block loads (T.reads order); a block with an init does not list the
    buffers it reduces into, like TVM's read/write inference."""
    acc, local = _scan(block)
    acc = _tvm_access_order(acc)
    written = _writes(acc, local) if block.init is not None else []
    loaded = [b for b in _unique(buf for _, k, buf in acc if k == "load") if b not in local]
    out = [b for b in loaded if b not in written]
    if block.init is None and writes_first(block.op):  # decompose_reduction's update
        mine = [b for b in _writes(acc, local) if b in out]
        out = mine + [b for b in out if b not in mine]
    # unless the written T.reads listed them (region_overrides.accumulator_reads): TVM's
    # buffer indices count them where they were written
    positions = accumulator_reads(block.op) if written else []
    acc = [b for b in written if b in loaded]
    if positions and len(positions) == len(acc):
        for pos, b in sorted(zip(positions, acc), key=lambda x: x[0]):
            out.insert(min(pos, len(out)), b)
    return out


def block_by_name(scope, name: str) -> Block:
    found = walk(scope, lambda o: o.name == Block.OP_NAME and Block(o).name == name)
    if len(found) != 1:
        raise ScheduleError(f"expected one block named {name!r}, found {len(found)}")
    return Block(found[0])


def enclosing_loops(op) -> List[Loop]:
    """Loops around `op` up to the nearest enclosing block or function, outermost first."""
    loops = []
    p = (op.operation if hasattr(op, "operation") else op).parent
    while p is not None and p.name == Loop.OP_NAME:
        loops.append(Loop(p))
        p = p.parent
    return loops[::-1]


def top_stmt(op) -> ir.Operation:
    """The outermost loop around `op` (op itself when it is not in a loop)."""
    loops = enclosing_loops(op)
    return loops[0].op if loops else (op.operation if hasattr(op, "operation") else op)


def replace_uses(old: ir.Value, make: Callable[[ir.OpView], ir.Value]):
    """Replace every use of `old` by a fresh value `make(user)` built right before the user, so
    expressions stay tree-shaped."""
    for use in list(old.uses):
        user, idx = use.owner, use.operand_number
        with ir.InsertionPoint(user), user.location:
            user.operands[idx] = make(user)


def move_body(src: ir.Block, dst: ir.Block):
    """Move the ops of a region block (not its terminator) before `dst`'s terminator."""
    term = list(dst.operations)[-1]
    for o in body_ops(src):
        o.move_before(term)


def new_region_block(region: ir.Region, nargs: int, loc) -> ir.Block:
    block = region.blocks.append(*([ir.IndexType.get()] * nargs))
    add_terminator(block, loc)
    return block


# --- index expressions ------------------------------------------------------------------------
def _const_index(value: ir.Value) -> Optional[int]:
    o = value.owner
    if isinstance(o, ir.Block) or o.name != "arith.constant":
        return None
    attr = o.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def to_affine(value: ir.Value, leaves: list) -> ir.AffineExpr:
    """AffineExpr for an index value; unknown roots (IVs, iter vars) become dims, appended to
    `leaves` on first sight."""
    c = _const_index(value)
    if c is not None:
        return ir.AffineExpr.get_constant(c)
    o = value.owner
    if isinstance(o, ir.Block):
        if value not in leaves:
            leaves.append(value)
        return ir.AffineExpr.get_dim(leaves.index(value))
    name = o.name
    ops = list(o.operands)
    if name == "arith.addi":
        return to_affine(ops[0], leaves) + to_affine(ops[1], leaves)
    if name == "arith.subi":
        return to_affine(ops[0], leaves) - to_affine(ops[1], leaves)
    if name in ("arith.muli", "arith.floordivsi") or (
        name == "tir.call" and ir.StringAttr(o.attributes["callee"]).value == "floormod"
    ):
        a, b = to_affine(ops[0], leaves), to_affine(ops[1], leaves)
        if name == "arith.muli":
            if const_of(a) is None and const_of(b) is None:
                raise NotAffine("product of two variables")
            return a * b
        divisor = const_of(b)
        if divisor is None or divisor <= 0:
            raise NotAffine("division by a non-constant")
        return (
            ir.AffineExpr.get_floor_div(a, b)
            if name == "arith.floordivsi"
            else ir.AffineExpr.get_mod(a, b)
        )
    if name == "affine.apply":
        m = ir.AffineMapAttr(o.attributes["map"]).value
        subs = [to_affine(v, leaves) for v in ops]
        return substitute(m.results[0], subs)
    raise NotAffine(f"unsupported index op {name}")


def substitute(expr: ir.AffineExpr, subs: list) -> ir.AffineExpr:
    """expr with dim k replaced by subs[k]."""
    if not subs:
        return expr
    return expr.compose(substitution(subs))


def substitution(subs: list) -> ir.AffineMap:
    """The map that replaces dim k by subs[k] (compose expressions with it: `substitute`)."""
    n = max([len(subs)] + [max(dims_of(s), default=-1) + 1 for s in subs])
    return ir.AffineMap.get(n, 0, list(subs))


def simplify(expr: ir.AffineExpr, ndims: int) -> ir.AffineExpr:
    return ir.AffineExpr.simplify_affine_expr(expr, ndims, 0)


def emit_index(expr: ir.AffineExpr, leaves: list) -> ir.Value:
    """Build `expr` (dims = leaves) as arith ops at the current insertion point; a leaf may be
    a callable making a fresh value per use (to keep expressions tree-shaped). Constants
    combined with T.int64 loop/iter vars are int64 ones."""
    return mark_constants(_emit_index(expr, leaves))


def _emit_index(expr: ir.AffineExpr, leaves: list) -> ir.Value:
    e = expr.maybe_downcast()
    index = ir.IndexType.get()
    if isinstance(e, ir.AffineConstantExpr):
        return arith.ConstantOp(index, e.value).result
    if isinstance(e, ir.AffineDimExpr):
        leaf: Union[ir.Value, Callable[[], ir.Value]] = leaves[e.position]
        return leaf() if callable(leaf) else leaf
    if not isinstance(e, ir.AffineBinaryExpr):
        raise NotAffine(f"cannot emit {expr}")
    lhs, rhs = e.lhs.maybe_downcast(), e.rhs.maybe_downcast()
    if isinstance(e, ir.AffineAddExpr):
        # a + b * -c prints as a - b * c, a + -c as a - c (TVM style)
        if isinstance(rhs, ir.AffineConstantExpr) and rhs.value < 0:
            return arith.SubIOp(
                emit_index(lhs, leaves), emit_index(ir.AffineExpr.get_constant(-rhs.value), leaves)
            ).result
        k = const_of(rhs.rhs) if isinstance(rhs, ir.AffineMulExpr) else None
        if isinstance(rhs, ir.AffineMulExpr) and k is not None and k < 0:
            pos = rhs.lhs * -k
            return arith.SubIOp(emit_index(lhs, leaves), emit_index(pos, leaves)).result
        return arith.AddIOp(emit_index(lhs, leaves), emit_index(rhs, leaves)).result
    if isinstance(e, ir.AffineMulExpr):
        return arith.MulIOp(emit_index(lhs, leaves), emit_index(rhs, leaves)).result
    if isinstance(e, ir.AffineFloorDivExpr):
        return arith.FloorDivSIOp(emit_index(lhs, leaves), emit_index(rhs, leaves)).result
    if isinstance(e, ir.AffineModExpr):
        return ir.Operation.create(
            "tir.call",
            results=[index],
            operands=[emit_index(lhs, leaves), emit_index(rhs, leaves)],
            attributes={"callee": ir.StringAttr.get("floormod")},
        ).result
    raise NotAffine(f"cannot emit {expr}")


def block_binding_exprs(block: Block, leaves: list) -> list:
    """Each iter var's binding as an AffineExpr over `leaves` (dims of the block resolved
    through their defining index ops)."""
    dims = [to_affine(d, leaves) for d in block.dims]
    return [substitute(r, dims) for r in block.bindings.results]


def i64_array(values) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.IntegerAttr.get(i64, int(v)) for v in values])


def erase_region_block(block: ir.Block):
    """Erase a region block (the bindings have no Block.erase): move it into a scratch op
    built beside its owner, then erase that op. Its ops must have no outside uses left."""
    owner = block.owner
    scratch = ir.Operation.create(
        Block.OP_NAME, regions=1, loc=owner.location, ip=ir.InsertionPoint(owner)
    )
    block.append_to(scratch.regions[0])
    erase(scratch)
