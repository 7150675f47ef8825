"""Stage `stack-budget` (CPU, affine level, after `compact-buffers`): the stack buffers of one scope
(a function, a parallel loop's body: each thread's share) stay under STACK_BUDGET bytes.

Each buffer up to 64 KiB goes on the stack (tir-to-affine, compact-buffers), but many of them
together overflow a thread's stack (8 MiB for the caller, 4 MiB for an OpenMP worker) and
crash the process. Past the budget, the largest ones move to the heap, freed before the end
of their block (and checked by `alloc-check` like any other heap buffer).
"""

from mlir import ir
from mlir.dialects import memref

from tir_mlir.passes.lowering.alloc_limit import nbytes
from tir_mlir.passes.lowering.common import functions, walk

STACK_BUDGET = 1 << 20


class StackBudget:
    name = "stack-budget"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            blocks = {}
            for op in walk(f):
                if op.name == "memref.alloca" and not len(op.operands):
                    blocks.setdefault(op.operation.block, []).append(op)
            for allocas in blocks.values():
                _fit(allocas)


def _fit(allocas):
    sizes = {a: nbytes(ir.MemRefType(a.results[0].type)) for a in allocas}
    total = sum(sizes.values())
    for a in sorted(allocas, key=lambda a: -sizes[a]):
        if total > STACK_BUDGET:
            total -= sizes[a]
            to_heap(a)


def to_heap(alloca) -> ir.Value:
    """Replace `alloca` by a heap buffer freed before the end of its block; the new buffer."""
    block = alloca.operation.block
    term = list(block.operations)[-1].operation
    loc = alloca.location
    with ir.InsertionPoint(alloca), loc:
        heap = memref.AllocOp(ir.MemRefType(alloca.results[0].type), [], [])
    with ir.InsertionPoint(term), loc:
        memref.DeallocOp(heap.result)
    alloca.results[0].replace_all_uses_with(heap.result)
    alloca.operation.erase()
    return heap.result
