"""Stage `alloc-check` (CPU, scf level, last before `scf-to-llvm`): a heap buffer whose `malloc`
fails at run time makes the call fail with an error naming the buffer, instead of the code
writing through a null pointer.

tir-to-affine puts every `memref.alloc` at the start of its function or of a parallel loop's
body; everything that uses the buffers follows them in that block. So:

    %A = memref.alloc()                      %A = memref.alloc()
    %B = memref.alloc()                      %B = memref.alloc()
    REST                            =>       scf.if (%A is null or %B is null) {
    return                                     @tir_mlir_alloc_failure = site of the first null
                                               memref.dealloc %A, %B       // free(NULL) is a no-op
                                             } else { REST }
                                             return

The status global and the site table (`name|bytes|file:line:col` per line, site k on line k)
are part of the compiled code, with public functions returning their addresses, so a library
loaded by `load_module` reports as well as a fresh build: the runtime reads the status after
each call (runtime/alloc_status.py).
"""

import re

import numpy as np
from mlir import ir
from mlir.dialects import arith, func, memref, scf, ub

from tir_mlir.passes.lowering.alloc_limit import nbytes
from tir_mlir.passes.lowering.common import else_block, functions, source_loc, walk

STATUS = "tir_mlir_alloc_failure"
SITES = "tir_mlir_alloc_sites"
ADDRESS = "_address"  # `STATUS + ADDRESS`: the function returning its address


class AllocCheck:
    name = "alloc-check"

    def __call__(self, module: ir.Module):
        sites = []
        for f in functions(module):
            groups = {}
            for op in walk(f):
                if op.name == "memref.alloc":
                    groups.setdefault(op.operation.block, []).append(op)
            for allocs in groups.values():
                first = len(sites)
                sites += [_site(op) for op in allocs]
                _guard(allocs, first)
        if sites:
            add_status_globals(module, sites, STATUS, SITES)


def _site(op) -> str:
    m = re.match(r'loc\("(\w+)"\(', str(op.location))  # tir-to-affine's name location
    name = m[1] if m else "?"
    mtype = ir.MemRefType(op.results[0].type)
    size = nbytes(mtype) if mtype.has_static_shape else "?"  # (a symbolic size)
    return f"{name}|{size}|{source_loc(op) or '?'}"


def _guard(allocs, first_site: int):
    block = allocs[0].operation.block
    last = allocs[-1]
    ops = list(block.operations)
    start = next(k for k, o in enumerate(ops) if o.operation == last.operation) + 1
    rest, term = ops[start:-1], ops[-1].operation
    loc = last.location
    i64, index = ir.IntegerType.get_signless(64), ir.IndexType.get()
    with ir.InsertionPoint(term), loc:
        zero = arith.ConstantOp(index, 0).result
        nulls = [
            arith.cmpi(
                arith.CmpIPredicate.eq,
                memref.ExtractAlignedPointerAsIndexOp(a.results[0]).result,
                zero,
            )
            for a in allocs
        ]
        failed = nulls[0]
        for n in nulls[1:]:
            failed = arith.ori(failed, n)
        # The block's terminator may return values computed in REST: the if yields them.
        types = [v.type for v in term.operands]
        guard = scf.IfOp(failed, types, has_else=True)
        with ir.InsertionPoint(guard.then_block):
            status = memref.GetGlobalOp(ir.MemRefType.get([], i64), STATUS).result
            for k in reversed(range(len(allocs))):  # the first null is stored last
                report = scf.IfOp(nulls[k])
                with ir.InsertionPoint(report.then_block):
                    memref.StoreOp(arith.ConstantOp(i64, first_site + k + 1).result, status, [])
                    scf.YieldOp([])
            for a in allocs:
                memref.DeallocOp(a.results[0])
            scf.YieldOp([ub.PoisonOp(t).result for t in types])
        with ir.InsertionPoint(else_block(guard)):
            yielded = scf.YieldOp(list(term.operands))
    for o in rest:
        o.operation.move_before(yielded.operation)
    for k, r in enumerate(guard.results):
        term.operands[k] = r


def add_status_globals(module: ir.Module, sites, status: str, table_name: str, shape=()):
    """The status (i64s of `shape`, zero) and the site table, and a function returning the
    address of each (what the runtime calls: a JIT does not look up data symbols)."""
    i64, i8 = ir.IntegerType.get_signless(64), ir.IntegerType.get_signless(8)
    table = "\n".join(sites).encode() + b"\0"
    with ir.InsertionPoint.at_block_begin(module.body), module.operation.location:
        status_t = ir.MemRefType.get(list(shape), i64)
        memref.GlobalOp(
            status,
            status_t,
            sym_visibility="private",
            initial_value=ir.DenseElementsAttr.get_splat(
                ir.RankedTensorType.get(list(shape), i64), ir.IntegerAttr.get(i64, 0)
            ),
        )
        table_t = ir.MemRefType.get([len(table)], i8)
        memref.GlobalOp(
            table_name,
            table_t,
            constant=True,
            sym_visibility="private",
            initial_value=ir.DenseElementsAttr.get(  # pyright: ignore[reportCallIssue]
                np.frombuffer(table, "int8"),  # pyright: ignore[reportArgumentType]  (an ndarray has the buffer protocol)
                type=ir.RankedTensorType.get([len(table)], i8),
            ),
        )
        for name, t in ((status, status_t), (table_name, table_t)):
            getter = func.FuncOp(name + ADDRESS, ir.FunctionType.get([], [i64]))
            with ir.InsertionPoint(getter.add_entry_block()):
                ptr = memref.ExtractAlignedPointerAsIndexOp(memref.GetGlobalOp(t, name).result)
                func.ReturnOp([arith.index_cast(i64, ptr.result)])
