"""Checked indirect accesses in plain CPU builds: an index read from memory (`A[I[i]]`) is
outside the caller's control of shapes, so the plain build checks it, cheaply (a compare and a
branch on accesses that are already indirect), instead of letting a bad value in `I` write
anywhere in the process.

    IndirectMark (tir level, with static-bounds): every memref.load / store whose index depends
    on a value loaded from memory gets `tir_mlir.checked_access = "name|kind|file:l:c|file:l:c"`
    (the buffer, load or store, where the access is, where the buffer is declared).
    IndirectCheck (scf level, before alloc-check): each marked access runs only when its
    indices are inside the buffer; otherwise a load yields 0, a store is skipped, and the status
    global records [site + 1, axis, index] of the first bad access. The runtime reads the status
    after each call and raises OutOfBoundsError (runtime/code_status.py).
Accesses with affine indices are not checked here: static-bounds refuses the provably bad ones,
and a debug build checks all of them.
"""

from mlir import ir
from mlir.dialects import arith, memref, scf

from tir_mlir.dialect.buffers import buffer_name
from tir_mlir.errors import SourceLoc
from tir_mlir.passes.lowering.alloc_check import add_status_globals
from tir_mlir.passes.lowering.bounds_check import run_only_if
from tir_mlir.passes.lowering.common import functions, index_const, source_loc, walk

MARK = "tir_mlir.checked_access"
STATUS = "tir_mlir_oob_status"  # [site + 1, axis, index] of the first bad access
SITES = "tir_mlir_oob_sites"
ACCESSES = ("memref.load", "memref.store")


def _indices(op):
    return list(op.operands)[1 if op.name == "memref.load" else 2 :]


class IndirectMark:
    name = "indirect-mark"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            data = set()  # values computed from something read from memory
            for op in walk(f):
                if op.name == "memref.load" or len(op.regions) and len(op.results):
                    data.update(op.results)  # (a region op's results: conservatively)
                elif any(v in data for v in op.operands):
                    data.update(op.results)
                if (
                    op.name in ACCESSES
                    and any(v in data for v in _indices(op))
                    and not isinstance(
                        ir.MemRefType(op.operands[op.name == "memref.store"].type).element_type,
                        ir.VectorType,
                    )
                ):
                    op.attributes[MARK] = ir.StringAttr.get(_site(op))


def _site(op) -> str:
    load = op.name == "memref.load"
    buf = op.operands[0 if load else 1]
    fallback = (
        f"arg{ir.BlockArgument(buf).arg_number}" if isinstance(buf.owner, ir.Block) else "buffer"
    )
    return (
        f"{buffer_name(buf, fallback)}|{'load' if load else 'store'}|"
        f"{source_loc(op) or '?'}|{SourceLoc.of(buf.location) or '?'}"
    )


class IndirectCheck:
    name = "indirect-check"

    def __call__(self, module: ir.Module):
        sites = []
        for f in functions(module):
            for op in [o for o in walk(f) if o.name in ACCESSES and MARK in o.attributes]:
                sites.append(ir.StringAttr(op.attributes[MARK]).value)
                del op.attributes[MARK]
                _guard(op, len(sites))
        if sites:
            add_status_globals(module, sites, STATUS, SITES, shape=(3,))


def _guard(op, site: int):
    shape = ir.MemRefType(op.operands[0 if op.name == "memref.load" else 1].type).shape
    loc = op.location
    i1, i64 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(64)
    with ir.InsertionPoint(op), loc:
        ok = arith.ConstantOp(i1, 1).result
        status = memref.GetGlobalOp(ir.MemRefType.get([3], i64), STATUS).result
        for axis, (idx, dim) in enumerate(zip(_indices(op), shape)):
            inside = arith.andi(
                arith.cmpi(arith.CmpIPredicate.sge, idx, index_const(0, loc)),
                arith.cmpi(arith.CmpIPredicate.slt, idx, index_const(dim, loc)),
            )
            report = scf.IfOp(arith.xori(inside, arith.ConstantOp(i1, 1).result))
            with ir.InsertionPoint(report.then_block):  # the status is read only here
                first = scf.IfOp(
                    arith.cmpi(
                        arith.CmpIPredicate.eq,
                        memref.LoadOp(status, [index_const(0, loc)]).result,
                        arith.ConstantOp(i64, 0).result,
                    )
                )
                with ir.InsertionPoint(first.then_block):
                    for k, v in enumerate(
                        [
                            arith.ConstantOp(i64, site).result,
                            arith.ConstantOp(i64, axis).result,
                            arith.index_cast(i64, idx),
                        ]
                    ):
                        memref.StoreOp(v, status, [index_const(k, loc)])
                    scf.YieldOp([])
                scf.YieldOp([])
            ok = arith.andi(ok, inside)
        run_only_if(op, ok)
