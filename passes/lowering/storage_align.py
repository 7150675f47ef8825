"""Stages `storage-align` (tir level, before tir-to-affine) and `storage-pad` (affine level,
after compact-buffers): honour the `buffer_dim_align` block annotation (`sch.storage_align`, or a
hand-written `T.block_attr`) with padded strides.

`storage-align` reads the annotations and records each buffer's requests on its allocation, as
`tir_mlir.dim_align = [[axis, factor, offset], ...]`; tir-to-affine and compact-buffers carry it
to the buffer they make of it. `storage-pad` then pads the buffer as it is at that point:

    %Y = memref.alloca() {tir_mlir.dim_align = [[0, 16, 1]]} : memref<16x16xf32>
  =>
    %flat = memref.alloca() : memref<272xf32>                      // strides[0] * shape[0]
    %Y = memref.reinterpret_cast %flat to offset: [0], sizes: [16, 16], strides: [17, 1]
           : memref<272xf32> to memref<16x16xf32, strided<[17, 1]>>

Padding after compaction is TVM's order (CompactBufferAllocation computes the strides of the
compacted region): a cache_read tile of one column, [16, 1] per iteration of its loop, keeps
its natural strides and stays in registers, where padding the whole 512 x 1024 buffer first
left a 2 MiB copy that compact-buffers could not shrink (it compacts plain allocations only).

An axis of extent 1 is not aligned: its stride addresses nothing, and a one-row tile padded
(1 x 12 in 17 floats) kept a strided view and a tail of padding for nothing. A float buffer's
padding after a slice of a count that is not a power of two is zeroed where the buffer is
allocated (`_reachable_runs`, a loop nest of stores): LLVM does a row of 12 floats as 8 + 4
lanes and, the allocation being dereferenceable, loads the 4 as 8, so the padding's stack
garbage went through the float math in lanes it then dropped, and garbage that reads as a
denormal costs an FP assist per instruction (benchmarks/README.md, "session 13, storage_align
padding").

Every access keeps using %Y, now of the strided type. Strides follow TVM's rule: from the
innermost dimension out, the stride is the natural one (inner stride x inner extent), raised on
an aligned axis to the next value with `stride % factor == offset`; the allocation holds
strides[0] * shape[0] elements. The annotation names its buffer by index into the block's
writes; every block writing a buffer contributes (one request per axis, the last wins).
Upstream cannot allocate a strided memref directly (finalize-memref-to-llvm wants an identity
layout), hence the flat allocation and the view.
"""

from mlir import ir
from mlir.dialects import affine, arith, memref

from tir_mlir.dialect.buffers import buffer_name
from tir_mlir.dialect.ops import Block
from tir_mlir.passes.lowering.common import build_error, functions, walk
from tir_mlir.analysis.buffer_util import block_writes, is_func_arg

KEY = "buffer_dim_align"
# An allocation's requests, [[axis, factor, offset], ...], from storage-align to storage-pad.
ALIGN_ATTR = "tir_mlir.dim_align"


class StorageAlign:
    name = "storage-align"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            requests = {}  # alloc op -> {axis: (factor, offset)}
            for op in walk(f):
                if op.name == Block.OP_NAME and KEY in Block(op).annotations:
                    for buf, axis, factor, offset in _requests(Block(op)):
                        requests.setdefault(buf.owner, {})[axis] = (factor, offset)
            for alloc, aligns in requests.items():
                alloc.attributes[ALIGN_ATTR] = _align_attr(aligns)


class StoragePad:
    name = "storage-pad"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            for op in [o for o in walk(f) if ALIGN_ATTR in o.attributes]:
                aligns = {
                    axis: (factor, offset)
                    for axis, factor, offset in (
                        [ir.IntegerAttr(x).value for x in ir.ArrayAttr(e)]
                        for e in ir.ArrayAttr(op.attributes[ALIGN_ATTR])
                    )
                }
                del op.attributes[ALIGN_ATTR]
                _pad(op, aligns)


def _align_attr(aligns: dict) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get(
        [
            ir.ArrayAttr.get([ir.IntegerAttr.get(i64, v) for v in (axis, *aligns[axis])])
            for axis in sorted(aligns)
        ]
    )


def _requests(block: Block):
    """(buffer, axis, factor, offset) per entry of the block's annotation, validated."""
    writes = block_writes(block)
    try:
        entries = [
            [ir.IntegerAttr(x).value for x in ir.ArrayAttr(e)]
            for e in ir.ArrayAttr(block.annotations[KEY])
        ]
    except ValueError:
        raise build_error(
            block.op, f"{KEY} must be a list of [buffer_index, axis, factor, offset] integer lists"
        ) from None
    for entry in entries:
        if len(entry) != 4:
            raise build_error(
                block.op, f"{KEY} entry {entry} is not [buffer_index, axis, factor, offset]"
            )
        index, axis, factor, offset = entry
        if not 0 <= index < len(writes):
            raise build_error(
                block.op,
                f"{KEY}: block {block.name!r} writes {len(writes)} "
                f"buffer(s); index {index} is out of range",
            )
        buf = writes[index]
        name = buffer_name(buf)
        if is_func_arg(buf) or buf.owner.name != "memref.alloc":
            raise build_error(
                block.op,
                f"{KEY}: buffer {name!r} is a function parameter, "
                f"not an allocation; its layout belongs to the caller",
            )
        rank = len(ir.MemRefType(buf.type).shape)
        if not 0 <= axis < rank or factor <= 0 or offset < 0:
            raise build_error(
                block.op,
                f"{KEY}: bad request {entry} for buffer {name!r} of "
                f"rank {rank} (need 0 <= axis < rank, factor > 0, "
                f"offset >= 0)",
            )
        yield buf, axis, factor, offset


def aligned_strides(shape, aligns) -> list:
    """TVM's padded strides for `shape`; aligns: {axis: (factor, offset)}."""
    strides, stride = [0] * len(shape), 1
    for axis in reversed(range(len(shape))):
        if axis in aligns:
            factor, offset = aligns[axis]
            stride += (factor + offset - stride % factor) % factor
        strides[axis] = stride
        stride *= shape[axis]
    return strides


def _pad(alloc, aligns):
    """Replace `alloc` (a memref.alloc or alloca, after tir-to-affine) by a flat allocation of
    the same kind and a strided view of it; its deallocs free the flat one."""
    mtype = ir.MemRefType(alloc.results[0].type)
    if not mtype.has_static_shape:
        return  # (a symbolic shape keeps its natural layout: the padding is a hint)
    shape = list(mtype.shape)
    strides = aligned_strides(shape, {a: v for a, v in aligns.items() if shape[a] > 1})
    if strides == aligned_strides(shape, {}):
        return
    runs = _reachable_runs(shape, strides) if isinstance(mtype.element_type, ir.FloatType) else []
    flat_type = ir.MemRefType.get(
        [strides[0] * shape[0]], mtype.element_type, memory_space=mtype.memory_space
    )
    view_type = ir.MemRefType.get(
        shape,
        mtype.element_type,
        layout=ir.StridedLayoutAttr.get(0, strides),
        memory_space=mtype.memory_space,
    )
    make = memref.AllocaOp if alloc.name == "memref.alloca" else memref.AllocOp
    with ir.InsertionPoint(alloc), alloc.location:
        flat = make(flat_type, [], [])
        view = memref.ReinterpretCastOp(view_type, flat.result, [], [], [], [0], shape, strides)
        for run in runs:
            _zero_run(flat.result, strides, shape, run, ir.InsertionPoint(alloc))
    for name in alloc.attributes:
        flat.operation.attributes[name] = alloc.attributes[name]
    for use in list(alloc.results[0].uses):
        if use.owner.name == "memref.dealloc":
            use.owner.operands[0] = flat.result
    alloc.results[0].replace_all_uses_with(view.result)
    alloc.erase()


def pad_runs(shape, strides) -> list:
    """The padding of a layout as runs (axis, start, length): for every index (i0, ..., ik) of
    the axes up to `axis`, the `length` elements from sum(strides[j] * ij) + start hold no
    element (start: where the slice of axis `axis` ends, its natural extent). The runs of all
    axes are disjoint and cover every padding element of the strides[0] * shape[0]."""
    runs = []
    for axis in range(len(shape)):
        start = strides[axis + 1] * shape[axis + 1] if axis + 1 < len(shape) else 1
        if strides[axis] > start:
            runs.append((axis, start, strides[axis] - start))
    return runs


def _reachable_runs(shape, strides) -> list:
    """The pad runs a widened vector load may read: those after a slice whose element count is
    not a power of two. LLVM loads such a slice in power-of-two pieces and may widen the last
    one over what follows (8 + 4 lanes of 12, the 4 loaded as 8); a power-of-two slice is
    loaded in exact pieces, and its padding (9 floats after each 8-float row of a 1024-row
    tile) is left alone: zeroing it cost more stores than the tile's copy."""
    return [run for run in pad_runs(shape, strides) if run[1] & (run[1] - 1)]


def _zero_run(flat: ir.Value, strides, shape, run, ip: ir.InsertionPoint):
    """Store 0 to the padding elements of `run` (pad_runs) of the flat allocation at `ip`: a
    loop nest over the axes up to its axis (those of extent 1 left out) and over the run."""
    axis, start, length = run
    loops = [(shape[a], strides[a]) for a in range(axis + 1) if shape[a] > 1]
    loops += [(length, 1)] if length > 1 else []
    expr, ivs = ir.AffineExpr.get_constant(start), []
    for extent, stride in loops:
        loop = affine.AffineForOp(0, extent, ip=ip)
        with ir.InsertionPoint(loop.body):
            affine.AffineYieldOp([])
        ip = ir.InsertionPoint.at_block_begin(loop.body)
        expr = expr + ir.AffineExpr.get_dim(len(ivs)) * stride
        ivs.append(loop.induction_variable)
    element = ir.MemRefType(flat.type).element_type
    zero = arith.ConstantOp(element, 0.0, ip=ip)
    index = affine.AffineApplyOp(ir.AffineMap.get(len(ivs), 0, [expr]), ivs, ip=ip)
    memref.StoreOp(zero.result, flat, [index.result], ip=ip)
