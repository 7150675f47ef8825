"""Stage `gpu-lower-allreduce` (affine level, after `gpu-map-threads`): each `gpu.all_reduce`
marked `reduce_threads` (by gpu-lower-cross-thread-reduction) combines its value over the
threads of the named axes only (threads that differ on another axis stay separate groups), and
every thread of a group gets the result:

  * a group of consecutive lanes (the reduced axes are the block's lowest non-unit ones) of a
    32-bit type, in a block of whole warps (or one power-of-two partial warp):
      - size <= 32 and a power of two: a butterfly of `gpu.shuffle xor`, log2(size) steps;
      - size a multiple of 32: a butterfly in each warp; lane 0 of each warp stores its warp's
        value in shared memory; barrier; each warp loads its group's warp values and reduces
        them by a butterfly (lanes past the group's warp count take the identity); barrier;
  * any other group: a tree in shared memory (one slot per thread; each step, after a barrier,
    the lower half of the slots still in use combines the upper half).
The shared-memory forms end with a barrier, so the scratch buffer may be written again (by the
next iteration of a loop around, say). All threads of the block must reach the allreduce: one
under a guard (a thread loop shorter than the launch on its axis) is refused with its location.
"""

import math
from typing import cast

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf

from tir_mlir.passes.lowering.common import ancestors, build_error, functions, index_const, walk
from tir_mlir.passes.lowering.gpu_cross_thread import REDUCE_THREADS
from tir_mlir.passes.lowering.gpu_launch import AXES

WARP = 32
# gpu.all_reduce operation -> (float combiner, integer combiner).
COMBINERS = {
    "add": ("arith.addf", "arith.addi"),
    "mul": ("arith.mulf", "arith.muli"),
    "maximumf": ("arith.maximumf", None),
    "maxnumf": ("arith.maxnumf", None),
    "minimumf": ("arith.minimumf", None),
    "minnumf": ("arith.minnumf", None),
    "maxsi": (None, "arith.maxsi"),
    "minsi": (None, "arith.minsi"),
}


class GpuLowerAllReduce:
    name = "gpu-lower-allreduce"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for op in [
                o for o in walk(f) if o.name == "gpu.all_reduce" and REDUCE_THREADS in o.attributes
            ]:
                _lower(op)


class _Reducer:
    """Emits the combiner and identity of one allreduce at the current insertion point."""

    def __init__(self, marker):
        self.type = marker.results[0].type
        self.is_float = isinstance(self.type, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type))
        self.kind = str(marker.attributes["op"]).removeprefix("#gpu<all_reduce_op ").rstrip(">")
        self.op_name = COMBINERS[self.kind][0 if self.is_float else 1]
        self.loc = marker.location

    def combine(self, a, b):
        return ir.Operation.create(
            self.op_name, results=[self.type], operands=[a, b], loc=self.loc
        ).result

    def identity(self):
        kind, t = self.kind, self.type
        if self.is_float:
            v = {"add": 0.0, "mul": 1.0}.get(
                kind, -math.inf if kind.startswith("max") else math.inf
            )
            return arith.constant(t, ir.FloatAttr.get(t, v), loc=self.loc)
        w = ir.IntegerType(t).width
        v = {"add": 0, "mul": 1, "maxsi": -(1 << (w - 1)), "minsi": (1 << (w - 1)) - 1}[kind]
        return arith.constant(t, ir.IntegerAttr.get(t, v), loc=self.loc)


def _lower(marker):
    launch = next(p for p in ancestors(marker) if p.name == "gpu.launch")
    tags = [ir.StringAttr(a).value for a in ir.ArrayAttr(marker.attributes[REDUCE_THREADS])]
    for p in ancestors(marker):
        if p == launch:
            break
        if p.name in ("affine.if", "scf.if"):
            raise build_error(
                marker,
                f"a cross-thread reduction over {', '.join(tags)} needs "
                f"every thread of the block, but it runs under a guard (a thread "
                f"loop shorter than the launch on its axis): give the loops bound "
                f"to these threads in this kernel the same extent",
            )
    view = cast(gpu.LaunchOp, launch.opview)
    sizes = [
        ir.IntegerAttr(v.owner.attributes["value"]).value
        for v in (view.blockSizeX, view.blockSizeY, view.blockSizeZ)
    ]
    ids = list(launch.regions[0].blocks[0].arguments)[3:6]
    axes = sorted(AXES[t] - 3 for t in tags)
    red = _Reducer(marker)
    loc = marker.location
    with ir.InsertionPoint(marker), loc:
        value = marker.operands[0]
        result = _emit(red, value, ids, sizes, axes, launch)
    marker.results[0].replace_all_uses_with(result)
    marker.erase()


def _emit(red, value, ids, sizes, axes, launch):
    group = math.prod(sizes[a] for a in axes)
    total = math.prod(sizes)
    others = [a for a in range(3) if a not in axes]
    nontrivial = [a for a in range(3) if sizes[a] > 1]
    in_axes = [a in axes for a in nontrivial]
    contiguous = in_axes == sorted(in_axes, reverse=True)
    bits32 = _width(red.type) == 32
    if group == 1:
        return value
    if contiguous and bits32 and _pow2(group) and group <= WARP:
        if total % WARP == 0:
            return _butterfly(red, value, group, WARP)
        if _pow2(total) and total < WARP:
            return _butterfly(red, value, group, total)
    if contiguous and bits32 and group % WARP == 0:
        return _across_warps(red, value, ids, sizes, group, total, launch)
    return _tree(red, value, ids, sizes, axes, others, group, total, launch)


def _width(t) -> int:
    return t.width if hasattr(t, "width") else 0


def _pow2(n: int) -> bool:
    return n & (n - 1) == 0


def _butterfly(red, value, group, width):
    """Combine over aligned runs of `group` lanes: xor offsets group/2 .. 1."""
    i32 = ir.IntegerType.get_signless(32)
    w = arith.ConstantOp(i32, width).result
    mode = ir.Attribute.parse("#gpu<shuffle_mode xor>")
    offset = group // 2
    while offset:
        other = gpu.ShuffleOp(value, arith.ConstantOp(i32, offset).result, w, mode).results[0]
        value = red.combine(value, other)
        offset //= 2
    return value


def _linear(ids, sizes, axes):
    """The row-major-by-x linear index of the ids on `axes`."""
    out, stride = None, 1
    for a in [a for a in axes if sizes[a] > 1]:  # a unit axis's id is 0
        term = ids[a] if stride == 1 else arith.muli(ids[a], index_const(stride, None))
        out = term if out is None else arith.addi(out, term)
        stride *= sizes[a]
    return out if out is not None else index_const(0, None)


def _scratch(launch, etype, n):
    """A workgroup buffer of n elements allocated before the launch (gpu-place-buffers makes
    it an attribution of the kernel)."""
    space = ir.Attribute.parse("#gpu.address_space<workgroup>")
    with ir.InsertionPoint(launch):
        return memref.AllocOp(
            ir.MemRefType.get([n], etype, memory_space=space), [], [], loc=launch.location
        ).result


def _across_warps(red, value, ids, sizes, group, total, launch):
    value = _butterfly(red, value, WARP, WARP)
    warps = group // WARP
    if warps == 1:
        return value
    smem = _scratch(launch, red.type, total // WARP)
    tid = _linear(ids, sizes, [0, 1, 2])
    c_warp = index_const(WARP, None)
    lane, warp = arith.remui(tid, c_warp), arith.divui(tid, c_warp)
    first = arith.cmpi(arith.CmpIPredicate.eq, lane, index_const(0, None))
    store = scf.IfOp(first)
    with ir.InsertionPoint(store.then_block):
        memref.StoreOp(value, smem, [warp])
        scf.YieldOp([])
    gpu.BarrierOp()
    # this group's warp values: slots base .. base + warps - 1, base = group index * warps
    base = arith.muli(arith.divui(tid, index_const(group, None)), index_const(warps, None))
    # every aligned run of `run` lanes holds them all, so every lane ends with the result
    run = 1 << (warps - 1).bit_length()
    k = arith.remui(lane, index_const(run, None))
    slot = arith.addi(base, arith.minui(k, index_const(warps - 1, None)))
    loaded = memref.LoadOp(smem, [slot]).result
    inside = arith.cmpi(arith.CmpIPredicate.ult, k, index_const(warps, None))
    value = arith.select(inside, loaded, red.identity())
    value = _butterfly(red, value, run, WARP)
    gpu.BarrierOp()
    return value


def _tree(red, value, ids, sizes, axes, others, group, total, launch):
    smem = _scratch(launch, red.type, total)
    r = _linear(ids, sizes, axes)
    base = arith.muli(_linear(ids, sizes, others), index_const(group, None))
    slot = arith.addi(base, r)
    memref.StoreOp(value, smem, [slot])
    gpu.BarrierOp()
    step = 1 << (group - 1).bit_length() - 1  # the largest power of two < group
    while step:
        # slots r < min(step, group - step) combine slot r + step
        active = arith.cmpi(arith.CmpIPredicate.ult, r, index_const(min(step, group - step), None))
        body = scf.IfOp(active)
        with ir.InsertionPoint(body.then_block):
            mine = memref.LoadOp(smem, [slot]).result
            theirs = memref.LoadOp(smem, [arith.addi(slot, index_const(step, None))]).result
            memref.StoreOp(red.combine(mine, theirs), smem, [slot])
            scf.YieldOp([])
        gpu.BarrierOp()
        step //= 2
    value = memref.LoadOp(smem, [base]).result
    gpu.BarrierOp()
    return value
