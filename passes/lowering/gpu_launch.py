"""Stage `gpu-map-threads` (affine level, GPU targets): each outermost loop nest bound to GPU
threads becomes one `gpu.launch`; bound loops become block/thread ids:

    affine.for %i0 = 0 to 32 {blockIdx.x}         gpu.launch blocks(%bx, ..) in (32, 1, 1)
      affine.for %i1 = 0 to 128 {threadIdx.x}  =>            threads(%tx, ..) in (128, 1, 1) {
        BODY(%i0, %i1)                                 BODY(%bx, %tx)
                                                     }
The launch size on each axis is the largest extent bound to it; a loop with a smaller extent
runs under `affine.if id < extent`. Unbound loops inside stay serial loops (run by every
thread); unbound loops around stay on the host (one launch per iteration). After each outermost
threadIdx loop that touches shared memory a `gpu.barrier` is placed (at a point every thread of
the block reaches), so the next loop sees its writes and does not overwrite what it still reads.
`gpu.launch` is an affine scope, so the ids are valid affine dims for the ops inside.
"""
from mlir import ir
from mlir.dialects import affine, gpu

from tir_mlir.dialect.ops import Loop
from tir_mlir.passes.lowering.common import build_error, functions, index_const, move_body, walk
from tir_mlir.passes.lowering.gpu_bindings import is_thread_bound
from tir_mlir.passes.lowering.gpu_scopes import address_space

# Thread tag -> position among the launch body's ids (bx, by, bz, tx, ty, tz).
AXES = {f"{kind}.{axis}": 3 * k + a for k, kind in enumerate(("blockIdx", "threadIdx"))
        for a, axis in enumerate("xyz")}


class GpuMapThreads:
    name = "gpu-map-threads"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for root in _kernel_roots(f):
                _launch(root)


def _kernel_roots(op):
    """The outermost thread-bound loops under `op`."""
    roots = []
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                roots += [child] if is_thread_bound(child) else _kernel_roots(child)
    return roots


def _axis(loop) -> int:
    tag = Loop(loop).thread
    if tag not in AXES:
        raise build_error(loop, f"thread tag '{tag}' is not supported on GPU targets "
                                f"(use {', '.join(AXES)})")
    if Loop(loop).step != 1:
        raise build_error(loop, "a thread-bound loop needs step 1")
    return AXES[tag]


def _launch(root):
    loops = [root] + [o for o in walk(root) if is_thread_bound(o)]
    sizes = [1] * 6
    for loop in loops:
        axis = _axis(loop)
        parent = loop.parent
        while parent != root.parent:
            if is_thread_bound(parent) and _axis(parent) == axis:
                raise build_error(loop, f"loop '{Loop(loop).name}' is bound to "
                                        f"{Loop(loop).thread} inside a loop bound to it too")
            parent = parent.parent
        sizes[axis] = max(sizes[axis], Loop(loop).extent)
    loc = root.location
    with ir.InsertionPoint(root), loc:
        consts = [index_const(s, loc) for s in sizes]
        launch = gpu.LaunchOp(consts[:3], consts[3:], loc=loc)
        body = launch.regions[0].blocks[0]
        with ir.InsertionPoint(body):
            term = gpu.TerminatorOp(loc=loc)
    root.move_before(term.operation)
    for loop in loops:
        if _axis(loop) >= 3 and not _inside_thread_loop(loop, launch.operation) \
                and _touches_workgroup(loop) and _next(loop) != term.operation:
            with ir.InsertionPoint(_next(loop)):
                gpu.BarrierOp(loc=loop.location)
    ids = list(body.arguments)[:6]
    for loop in loops:
        axis = _axis(loop)
        _to_id(loop, ids[axis], sizes[axis])
    ops = [o.operation for o in body.operations]
    if len(ops) > 1 and ops[-2].name == "gpu.barrier":   # nothing left to wait for
        ops[-2].erase()


def _inside_thread_loop(loop, launch) -> bool:
    parent = loop.parent
    while parent != launch:
        if is_thread_bound(parent) and _axis(parent) >= 3:
            return True
        parent = parent.parent
    return False


def _touches_workgroup(loop) -> bool:
    return any(address_space(v.type) == "workgroup" for o in walk(loop) for v in o.operands
               if isinstance(v.type, ir.MemRefType))


def _next(op):
    ops = _block_ops(op)
    return ops[ops.index(op) + 1]


def _block_ops(op):
    """The ops of the block holding `op`."""
    for region in op.parent.regions:
        for block in region.blocks:
            ops = [o.operation for o in block.operations]
            if op in ops:
                return ops
    raise AssertionError("op not in its parent")


def _to_id(loop, tid, size):
    """Replace a bound loop by its body, its IV by `tid` (+ min), guarded when it is shorter
    than the launch on its axis."""
    view, loc = Loop(loop), loop.location
    with ir.InsertionPoint(loop), loc:
        iv = tid
        if view.min:
            m = ir.AffineMap.get(1, 0, [ir.AffineDimExpr.get(0) + view.min])
            iv = affine.AffineApplyOp(m, [tid], loc=loc).result
        anchor = loop
        if view.extent < size:
            last = ir.AffineConstantExpr.get(view.extent - 1)
            cond = ir.IntegerSet.get(1, 0, [last - ir.AffineDimExpr.get(0)], [False])
            guard = affine.AffineIfOp(cond, cond_operands=[tid], loc=loc)
            with ir.InsertionPoint(guard.then_block):
                anchor = affine.AffineYieldOp([], loc=loc).operation
    view.iv.replace_all_uses_with(iv)
    move_body(view.body, anchor)
    loop.erase()
