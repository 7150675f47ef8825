"""Stage `bounds-check` (only in debug builds, before `tir-to-affine`): guard every buffer access.

    memref.store %v, %C[%i, %j]        %ok = 0 <= %i < 128 and 0 <= %j < 128
                                 =>    scf.if (not 0 <= %i < 128) { call @tir_mlir_oob(SITE, 0, %i) }
                                       ...
                                       scf.if %ok { memref.store %v, %C[%i, %j] }

A bad load yields 0 instead. The process keeps running; `tir_mlir_oob` is a runtime callback that
records the event, and the runtime raises it as `OutOfBoundsError` when the call returns. The
site table (buffer name, access kind, source location of the access and of the buffer's
declaration, per SITE id) is kept on the module as `tir_mlir.bounds_sites`, a list of
"name|load or store|file:line:col|file:line:col" strings.
"""

from mlir import ir
from mlir.dialects import arith, func, memref, scf

from tir_mlir.dialect.buffers import buffer_name
from tir_mlir.errors import SourceLoc
from tir_mlir.passes.lowering.common import else_block, functions, index_const, source_loc, walk

CALLBACK = "tir_mlir_oob"
SITES_ATTR = "tir_mlir.bounds_sites"


class BoundsCheck:
    name = "bounds-check"

    def __call__(self, module: ir.Module):
        sites = []
        i64 = ir.IntegerType.get_signless(64)
        with ir.InsertionPoint.at_block_begin(module.body), module.operation.location:
            decl = func.FuncOp(CALLBACK, ir.FunctionType.get([i64] * 3, []))
            decl.sym_visibility = ir.StringAttr.get("private")
            decl.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        for f in functions(module):
            for op in list(walk(f)):
                if op.name in ("memref.load", "memref.store"):
                    _guard(op, len(sites))
                    kind = op.name.split(".")[1]
                    buf = op.operands[0 if kind == "load" else 1]
                    sites.append(
                        f"{_buffer_name(op)}|{kind}|{source_loc(op) or '?'}|"
                        f"{SourceLoc.of(buf.location) or '?'}"
                    )
        module.operation.attributes[SITES_ATTR] = ir.ArrayAttr.get(
            [ir.StringAttr.get(s) for s in sites]
        )


def _buffer_name(op) -> str:
    buf = op.operands[0] if op.name == "memref.load" else op.operands[1]
    if isinstance(buf.owner, ir.Block):
        return buffer_name(buf, f"arg{ir.BlockArgument(buf).arg_number}")
    return buffer_name(buf, "buffer")


def _guard(op, site: int):
    is_load = op.name == "memref.load"
    buf = op.operands[0] if is_load else op.operands[1]
    indices = list(op.operands)[1 if is_load else 2 :]
    mtype = ir.MemRefType(buf.type)
    loc = op.location
    i64 = ir.IntegerType.get_signless(64)
    with ir.InsertionPoint(op), loc:
        ok = arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result
        for axis, idx in enumerate(indices):
            inside = arith.andi(
                arith.cmpi(arith.CmpIPredicate.sge, idx, index_const(0, loc)),
                arith.cmpi(arith.CmpIPredicate.slt, idx, _extent(buf, mtype, axis, loc)),
            )
            bad = arith.xori(inside, arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result)
            report = scf.IfOp(bad)
            with ir.InsertionPoint(report.then_block):
                func.CallOp(
                    [],
                    ir.FlatSymbolRefAttr.get(CALLBACK),
                    [
                        arith.ConstantOp(i64, site).result,
                        arith.ConstantOp(i64, axis).result,
                        arith.index_cast(i64, idx),
                    ],
                )
                scf.YieldOp([])
            ok = arith.andi(ok, inside)
        run_only_if(op, ok)


def _extent(buf: ir.Value, mtype: ir.MemRefType, axis: int, loc) -> ir.Value:
    """The buffer's size on `axis`: a constant, or the run-time size of a dynamic (`?`) axis."""
    if mtype.is_dynamic_dim(axis):
        return memref.dim(buf, index_const(axis, loc))
    return index_const(mtype.get_dim_size(axis), loc)


def run_only_if(op, ok: ir.Value):
    """Move the memref.load/store `op` into an `scf.if ok` (at the insertion point and location
    of the caller); a skipped load yields 0."""
    if op.name == "memref.load":
        t = op.results[0].type
        guarded = scf.IfOp(ok, [t], has_else=True)
        with ir.InsertionPoint(else_block(guarded)):
            zero = arith.ConstantOp(t, 0 if isinstance(t, ir.IntegerType) else 0.0)
            scf.YieldOp([zero.result])
        with ir.InsertionPoint(guarded.then_block):
            y = scf.YieldOp([op.results[0]])
        op.results[0].replace_all_uses_with(guarded.results[0])
        y.operation.operands[0] = op.results[0]
    else:
        guarded = scf.IfOp(ok)
        with ir.InsertionPoint(guarded.then_block):
            y = scf.YieldOp([])
    op.move_before(y.operation)
