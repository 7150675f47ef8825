"""Stage `workspace-pool` (CPU, scf level, last before `scf-to-llvm`): a heap buffer of static
size (an intermediate too large for the stack, e.g. rfactor's partial sums) reuses one block of
the module's own memory across calls instead of a fresh `malloc` per call.

glibc serves a large `malloc` with a fresh `mmap` and returns it to the OS on `free` (its
adaptive threshold stops at 32 MiB), so such a buffer was page-faulted again on every call. TVM
pools its workspaces for the same reason (TVMBackendAllocWorkspace). Here each
allocation site gets a module global of its type (64-byte aligned, no initial value: zero-fill
memory, which a shared library maps on first touch and keeps until it is unloaded) and a busy
flag, taken with an atomic exchange:

    %A = memref.alloc()             %was = memref.atomic_rmw assign 1, @ws_k_busy[]
    ...                             %A = scf.if (%was == 0) { get_global @ws_k } else { alloc }
    memref.dealloc %A        =>     ...
                                    scf.if (%was == 0) { atomic_rmw assign 0, @ws_k_busy[] }
                                    else { memref.dealloc %A }

A concurrent or re-entrant call (kernels called from several threads, an allocation inside a
parallel loop's body, which every thread runs) finds the flag taken and falls back to `malloc`,
so two live buffers never share memory; the exchange that frees the flag releases the buffer's
writes to the next owner. The memory lives as long as the module, so no pointer is left behind
when it is unloaded; the lowered module needs nothing but upstream MLIR (no runtime symbol).

It runs after `alloc-check` (which guards the `memref.alloc`s of a block: the global never fails)
and after `buffer-tags` (which names each access's buffer from its allocation).
"""

from mlir import ir
from mlir.dialects import arith, memref, scf

from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.alloc_limit import nbytes
from tir_mlir.passes.lowering.common import else_block, functions
from tir_mlir.passes.lowering.scf_to_llvm import ALIGNMENT

PREFIX = "tir_mlir_workspace_"
BUSY = "_busy"
# The small code model, LLVM's default, reaches a library's code and data through 32-bit
# PC-relative offsets on x86-64 (4 GiB on AArch64): the pooled globals of one module take at
# most half of those 2 GiB; the buffers past that stay malloc'ed.
POOL_LIMIT = 1 << 30


class WorkspacePool:
    name = "workspace-pool"

    def __call__(self, module: ir.Module):
        taken = {
            ir.StringAttr(op.operation.attributes["sym_name"]).value
            for op in module.body.operations
            if "sym_name" in op.operation.attributes
        }
        # All sites first: pooling one erases its deallocs, which a walk's list still holds.
        sites, pooled = [], 0
        for f in functions(module):
            for op in walk_all(f):
                deallocs = _pooled_deallocs(op)
                if deallocs is None:
                    continue
                size = nbytes(ir.MemRefType(op.results[0].type))
                if pooled + size <= POOL_LIMIT:
                    sites.append((op, deallocs))
                    pooled += size
        count, top = 0, module.body.operations[0]  # (globals in site order, before it)
        for alloc, deallocs in sites:
            while f"{PREFIX}{count}" in taken or f"{PREFIX}{count}{BUSY}" in taken:
                count += 1
            _pool(ir.InsertionPoint(top), alloc, deallocs, f"{PREFIX}{count}")
            count += 1


def _pooled_deallocs(op):
    """The deallocs of `op` if it is a heap allocation the pool can serve, else None: a static
    shape in the default memory space, freed where it is allocated (a buffer a terminator passes
    on, or one never freed, outlives the call)."""
    if op.name != "memref.alloc":
        return None
    mtype = ir.MemRefType(op.results[0].type)
    if not mtype.has_static_shape or mtype.memory_space is not None:
        return None
    if mtype.affine_map != ir.AffineMap.get_identity(mtype.rank):
        return None
    deallocs = []
    for use in op.results[0].uses:
        user = use.owner
        if user.name == "memref.dealloc":
            deallocs.append(user)
        elif user.name in ("func.return", "scf.yield") or (
            user.name == "memref.store" and use.operand_number == 0  # (the value stored)
        ):
            return None
    return deallocs or None


def _pool(globals_at: ir.InsertionPoint, alloc, deallocs, name: str):
    mtype = ir.MemRefType(alloc.results[0].type)
    i64 = ir.IntegerType.get_signless(64)
    flag_t = ir.MemRefType.get([], i64)
    align = max(ALIGNMENT, _alignment(alloc))
    with globals_at, alloc.location:
        memref.GlobalOp(
            name,
            mtype,
            sym_visibility="private",
            initial_value=ir.UnitAttr.get(),  # uninitialized: zero-fill memory, no data
            alignment=align,
        )
        memref.GlobalOp(
            name + BUSY,
            flag_t,
            sym_visibility="private",
            initial_value=ir.DenseElementsAttr.get_splat(
                ir.RankedTensorType.get([], i64), ir.IntegerAttr.get(i64, 0)
            ),
        )
    with ir.InsertionPoint(alloc), alloc.location:
        flag = memref.GetGlobalOp(flag_t, name + BUSY).result
        one, zero = arith.ConstantOp(i64, 1).result, arith.ConstantOp(i64, 0).result
        was = memref.AtomicRMWOp(arith.AtomicRMWKind.assign, one, flag, []).result
        claimed = arith.cmpi(arith.CmpIPredicate.eq, was, zero)
        choose = scf.IfOp(claimed, [mtype], has_else=True)
        with ir.InsertionPoint(choose.then_block):
            scf.YieldOp([memref.GetGlobalOp(mtype, name).result])
        with ir.InsertionPoint(else_block(choose)):
            fallback = memref.AllocOp(mtype, [], [])
            for attr in alloc.attributes:
                fallback.operation.attributes[attr] = alloc.attributes[attr]
            scf.YieldOp([fallback.result])
    buffer = choose.results[0]
    for d in deallocs:
        with ir.InsertionPoint(d), d.location:
            release = scf.IfOp(claimed, [], has_else=True)
            with ir.InsertionPoint(release.then_block):
                flag = memref.GetGlobalOp(flag_t, name + BUSY).result
                memref.AtomicRMWOp(arith.AtomicRMWKind.assign, zero, flag, [])
                scf.YieldOp([])
            with ir.InsertionPoint(else_block(release)):
                memref.DeallocOp(buffer)
                scf.YieldOp([])
        d.erase()
    alloc.results[0].replace_all_uses_with(buffer)
    alloc.erase()


def _alignment(alloc) -> int:
    attr = alloc.attributes["alignment"] if "alignment" in alloc.attributes else None
    return ir.IntegerAttr(attr).value if attr is not None else 0
