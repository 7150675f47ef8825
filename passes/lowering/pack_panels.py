"""Stage `pack-panels` (tir level, before tir-to-affine): a register tile's strided input panel
is copied into a contiguous buffer once per reduction tile, as BLAS libraries pack B.

A matmul tile reads, per step of its reduction loop `k`, a vector segment of a row of B; B's
rows are `N * 4` bytes apart. When that stride maps the rows of one `k` tile into fewer L1 sets
than the tile has rows per way (a 1024-wide float B: every row in the same sets), the panel
never stays in L1: each row tile reloads it from L2 for every row of C it computes. The stage
applies the schedule primitives TVM's dense schedules use for it, so the copy is whatever
`cache_read` + `compute_at` make it (regions, compaction to the panel, bounds):

    for k_0 in range(8):                            for k_0 in range(8):
        for i_1, k_1, i_2 in T.grid(16, 128, 4):        B_global[0:128, 0:64] = B[k_0 * 128 ..., j ...]
            for j in T.vectorized(64):          =>      for i_1, k_1, i_2 in T.grid(16, 128, 4):
                C[i, j] += A[i, k] * B[k, j]                for j in T.vectorized(64):
                                                                C[i, j] += A[i, k] * B_global[k_1, j]

Which reads (all must hold, so the copy pays for itself and stays in the caches):
- the block's innermost loop is vectorized, the read's last index is the iter var that loop
  feeds and its next-to-last index a reduction iter var (B[.., k, j]), B a static buffer;
- the copy goes under the outermost loop `L` of that reduction var whose panel (the rows and
  columns the loops inside `L` span) conflicts in L1 (more of its rows in one set than the set
  has ways, cpu_model's geometry) and fits in `PANEL_SHARE` of L2. It need not fit L1:
  its rows follow one another, so the rows a tile sweeps spread over the L1 sets instead of
  evicting each other, and the prefetchers stream the rest of it from L2 (a 1024 matmul's
  64x256, 128x128 and 256x128 panels: 0.78-0.83 of the time left in place, 1 thread);
- the loops inside `L` that the read does not use repeat each panel element at least
  `MIN_REUSE` times (rows of C computed from one copy). A copy larger than L1's share is
  read from L2 once per sweep, so there only the loops outside the innermost reduction loop
  count: a 16 x 64 tile swept twice over a 64 KiB copy ran 4-9% slower than reading B.
The copy's innermost loop is vectorized when whole registers divide it.
"""

import math
from typing import List, Optional

from mlir import ir

from tir_mlir.analysis import buffer_util
from tir_mlir.analysis.op_index import strip_handles
from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.ir.affine_exprs import dims_of
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.module import IRModule
from tir_mlir.passes.lowering.common import functions
from tir_mlir.passes.lowering.cpu_model import CpuModel, cpu_model
from tir_mlir.schedule.schedule import Schedule
from tir_mlir.errors import ScheduleError

# Each panel element is used this many times or more: the copy (a load and a store per
# vector) stays small next to the FMAs that read it.
MIN_REUSE = 16
# The panel's share of the cache it stays in (L1, else L2): the rest holds the other tile's
# rows and the output.
PANEL_SHARE = 2 / 3


class PackPanels:
    name = "pack-panels"

    def __init__(self, model: Optional[CpuModel] = None):
        self.model = model or cpu_model("llvm")

    @classmethod
    def for_target(cls, target):
        return cls(cpu_model(target))

    def __call__(self, module: ir.Module):
        plans = [
            (f, p) for f in functions(module) for p in _func_plans(f, self.model) if p is not None
        ]
        if not plans:
            return
        sch = Schedule(IRModule(module))
        done = set()
        for f, (block, read, at, bits) in plans:
            name = ir.StringAttr(f.attributes["sym_name"]).value
            trial = sch.copy()  # all of one panel's primitives, or none of them
            if _apply(trial, name, block, read, at, self.model.vector_lanes(bits)):
                sch = trial
                done.add(name)
        for f in functions(module):
            name = ir.StringAttr(f.attributes["sym_name"]).value
            if name in done:
                sch.mod[name].operation.clone(ip=ir.InsertionPoint(f))
                f.erase()
        strip_handles(module.operation)


def _func_plans(func, model: CpuModel) -> list:
    return [_plan(Block(o), model) for o in walk_all(func) if o.name == Block.OP_NAME]


def _enclosing_loops(op) -> Optional[List[Loop]]:
    """The loops around a block up to its function, outermost first (None: inside a block)."""
    loops, p = [], op.parent
    while p is not None and p.name != "func.func":
        if p.name == Block.OP_NAME:
            return None
        if p.name == Loop.OP_NAME:
            loops.append(Loop(p))
        p = p.parent
    return loops[::-1]


def _plan(block: Block, model: CpuModel):
    """(block name, read index, loop position, element bits) of the panel to pack, or None."""
    loops = _enclosing_loops(block.op)
    if not loops or loops[-1].kind != "vectorized" or block.bindings.n_symbols:
        return None
    if any(not lp.constant_bounds or not isinstance(lp.extent, int) for lp in loops):
        return None
    position = {}
    for d, v in enumerate(block.dims):
        for n, lp in enumerate(loops):
            if lp.iv == v:
                position[d] = n
    feeds = [{position.get(d) for d in dims_of(e)} for e in block.bindings.results]
    args = list(block.body.arguments)
    types = block.iter_types
    for r, buf in enumerate(buffer_util.block_reads(block)):
        bits = _element_bits(buf)
        if bits < 8:
            continue
        panel = _panel(block, buf, bits // 8, args, types, feeds, loops, model)
        if panel is not None:
            return block.name, r, panel, bits
    return None


def _element_bits(buf) -> int:
    """Bits of a static, row-major buffer's float or integer element (0: anything else)."""
    t = buf.type
    if not isinstance(t, ir.MemRefType) or len(t.shape) < 2 or not t.has_static_shape:
        return 0
    layout = t.layout
    identity = ir.AffineMap.get_identity(len(t.shape), context=t.context)
    if not isinstance(layout, ir.AffineMapAttr) or layout.value != identity:
        return 0
    e = t.element_type
    if isinstance(e, (ir.FloatType, ir.IntegerType)):
        return e.width
    return 0


def _panel(block, buf, elem, args, types, feeds, loops, model) -> Optional[int]:
    """The loop position to copy `buf`'s panel under (elements of `elem` bytes), or None."""
    t = ir.MemRefType(buf.type)
    loads = [o for o, kind, v in buffer_util.accesses(block.op) if kind == "load" and v == buf]
    index_sets = {tuple(map(str, list(o.operands)[1:])) for o in loads}
    if len(index_sets) != 1:
        return None
    indices = list(loads[0].operands)[1:]
    if not all(v in args for v in indices):
        return None
    used = [args.index(v) for v in indices]
    j, k = used[-1], used[-2]
    inner = len(loops) - 1
    if types[j] != "S" or types[k] != "R" or inner not in feeds[j]:
        return None
    used_loops = set().union(*(feeds[u] for u in used))
    stride = t.shape[-1] * elem
    l1 = model.l1d_sets * model.l1d_ways * model.line_bytes
    l2 = model.l2_sets * model.l2_ways * model.line_bytes
    for n, lp in enumerate(loops):
        if n not in feeds[k]:
            continue
        below = range(n + 1, len(loops))
        rows = math.prod(loops[m].extent for m in below if m in feeds[k])
        cols = math.prod(loops[m].extent for m in below if m in feeds[j])
        size = rows * cols * elem
        if size <= PANEL_SHARE * l1:
            reuse = math.prod(loops[m].extent for m in below if m not in used_loops)
        else:
            # A copy in L2 is read from there once per sweep of the loops outside the
            # innermost reduction loop: the loops inside it reuse a row from registers and L1.
            last = max((m for m in below if m in feeds[k]), default=n)
            reuse = math.prod(loops[m].extent for m in range(n + 1, last) if m not in used_loops)
        if reuse >= MIN_REUSE and size <= PANEL_SHARE * l2 and _set_conflicts(stride, rows, model):
            return n
    return None


def _set_conflicts(stride: int, rows: int, model: CpuModel) -> bool:
    """Whether `rows` rows `stride` bytes apart put more lines in one L1 set than it has ways."""
    if stride % model.line_bytes:
        return False
    sets = model.l1d_sets // math.gcd(stride // model.line_bytes, model.l1d_sets)
    return rows / sets > model.l1d_ways


def _apply(sch, func: str, block: str, read: int, at: int, lanes: int) -> bool:
    try:
        b = sch.get_block(block, func_name=func)
        loops = sch.get_loops(b)
        cache = sch.cache_read(b, read, "global")
        sch.compute_at(cache, loops[at])
        copy = sch.get_loops(cache)[-1]
        extent = sch.get(copy).extent
        if isinstance(extent, int) and extent % lanes == 0:
            if extent > lanes:
                copy = sch.split(copy, factors=[None, lanes])[1]
            sch.vectorize(copy)
    except ScheduleError:
        return False
    return True
