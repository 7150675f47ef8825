"""Stage `gpu-map-threads` (affine level, GPU targets): each outermost loop nest bound to GPU
threads becomes one `gpu.launch`; bound loops become block/thread ids:

    affine.for %i0 = 0 to 32 {blockIdx.x}         gpu.launch blocks(%bx, ..) in (32, 1, 1)
      affine.for %i1 = 0 to 128 {threadIdx.x}  =>            threads(%tx, ..) in (128, 1, 1) {
        BODY(%i0, %i1)                                 BODY(%bx, %tx)
                                                     }
The launch size on each axis is the largest extent bound to it; a loop with a smaller extent
runs under `affine.if id < extent`. Unbound loops inside stay serial loops (run by every
thread); unbound loops around stay on the host (one launch per iteration). A loop bound to the
axis of a loop around it is the same id (TVM: the cooperative fetch of a shared tile under the
thread loops), allowed when it does not read the outer loop's IV. Barriers are
`gpu-insert-barriers`' job. `gpu.launch` is an affine scope, so the ids are valid affine dims
for the ops inside.
"""

from typing import List

from mlir import ir
from mlir.dialects import affine, gpu

from tir_mlir.analysis.symbolic import Int
from tir_mlir.dialect.ops import Loop
from tir_mlir.passes.lowering.common import (
    ancestors,
    build_error,
    constant_min,
    functions,
    index_const,
    move_body,
    walk,
)
from tir_mlir.passes.lowering.gpu_bindings import is_thread_bound

# Thread tag -> position among the launch body's ids (bx, by, bz, tx, ty, tz).
AXES = {
    f"{kind}.{axis}": 3 * k + a
    for k, kind in enumerate(("blockIdx", "threadIdx"))
    for a, axis in enumerate("xyz")
}


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
        raise build_error(
            loop, f"thread tag '{tag}' is not supported on GPU targets (use {', '.join(AXES)})"
        )
    if Loop(loop).step != 1:
        raise build_error(loop, "a thread-bound loop needs step 1")
    return AXES[tag]


def _launch(root):
    loops = [root] + [o for o in walk(root) if is_thread_bound(o)]
    sizes: List[Int] = [1] * 6
    for loop in loops:
        axis = _axis(loop)
        parent = loop.parent
        while parent != root.parent:
            if is_thread_bound(parent) and _axis(parent) == axis and _uses(loop, parent):
                raise build_error(
                    loop,
                    f"loop '{Loop(loop).name}' is bound to "
                    f"{Loop(loop).thread} inside loop "
                    f"'{Loop(parent).name}' bound to it too, and uses it",
                )
            parent = parent.parent
        sizes[axis] = _size(loop, axis, sizes[axis])
    loc = root.location
    with ir.InsertionPoint(root), loc:
        consts = [
            index_const(s, loc)
            if isinstance(s, int)
            else affine.AffineApplyOp(*s.to_map(), loc=loc).result
            for s in sizes
        ]
        bx, by, bz, tx, ty, tz = consts
        launch = gpu.LaunchOp((bx, by, bz), (tx, ty, tz), loc=loc)
        body = launch.regions[0].blocks[0]
        with ir.InsertionPoint(body):
            term = gpu.TerminatorOp(loc=loc)
    root.move_before(term.operation)
    ids = list(body.arguments)[:6]
    for loop in loops:
        axis = _axis(loop)
        _to_id(loop, ids[axis], sizes[axis])


def _size(loop, axis: int, size):
    """The launch size along `axis` with `loop` bound to it: the largest extent; an extent
    over a size (`range((n + 31) // 32)` bound to blockIdx.x: a grid that grows with n) is
    computed on the host, and must be the only extent of its axis."""
    extent = Loop(loop).extent
    if isinstance(extent, int) and isinstance(size, int):
        return max(size, extent)
    if axis >= 3:
        raise build_error(
            loop,
            f"loop '{Loop(loop).name}' bound to {Loop(loop).thread} has "
            f"a symbolic extent: a block's thread count must be a constant "
            f"(split the loop by a constant factor)",
        )
    if size == 1 or size == extent:
        return extent
    raise build_error(
        loop, f"loops of different extents, one symbolic, are bound to {Loop(loop).thread}"
    )


def _uses(loop, outer) -> bool:
    """Whether anything in `loop` reads the IV of `outer`."""
    return any(
        use.owner == loop or any(p == loop for p in ancestors(use.owner))
        for use in Loop(outer).iv.uses
    )


def _to_id(loop, tid, size):
    """Replace a bound loop by its body, its IV by `tid` (+ min), guarded when it is shorter
    than the launch on its axis."""
    view, loc = Loop(loop), loop.location
    with ir.InsertionPoint(loop), loc:
        iv, first = tid, constant_min(view)
        if first:
            m = ir.AffineMap.get(1, 0, [ir.AffineDimExpr.get(0) + first])
            iv = affine.AffineApplyOp(m, [tid], loc=loc).result
        anchor = loop
        if isinstance(view.extent, int) and isinstance(size, int) and view.extent < size:
            last = ir.AffineConstantExpr.get(view.extent - 1)
            cond = ir.IntegerSet.get(1, 0, [last - ir.AffineDimExpr.get(0)], [False])
            guard = affine.AffineIfOp(cond, cond_operands=[tid], loc=loc)
            with ir.InsertionPoint(guard.then_block):
                anchor = affine.AffineYieldOp([], loc=loc).operation
    view.iv.replace_all_uses_with(iv)
    move_body(view.body, anchor)
    loop.erase()
