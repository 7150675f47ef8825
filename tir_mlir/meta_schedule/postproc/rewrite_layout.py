"""RewriteLayout: a function's layout-free buffers (the parameters its `layout_free_buffers`
attribute lists: weights, whose layout the caller may choose once, ahead of every call) are
stored in the order the block using them reads them (tir_mlir/analysis/suggest_index_map.py).
A `cache_read` copies the parameter into the new layout in a block annotated
`meta_schedule.layout_rewrite_preproc`, and `transform_layout` makes the reader use it; a
caller that pre-transforms the weight (what that block computes) can drop the block. Where the
weight reaches its reader through a chain of cache_read copies, the reader's buffer is
rewritten and the layout carried back along the chain to a new first copy. TVM's
RewriteLayout, in the same steps and order."""

from typing import List, Optional, Tuple

from mlir import ir

from tir_mlir.analysis.buffer_util import buffer_name
from tir_mlir.analysis.suggest_index_map import suggest_index_map
from tir_mlir.dialect.buffers import arg_attrs
from tir_mlir.dialect.ops import Block
from tir_mlir.errors import ScheduleError
from tir_mlir.ir.ir_walk import ancestors, walk_all
from tir_mlir.meta_schedule.postproc.postproc import Postproc
from tir_mlir.schedule.views import BlockView

PREPROC = "meta_schedule.layout_rewrite_preproc"
LAYOUT_FREE = "layout_free_buffers"


class RewriteLayout(Postproc):
    def apply(self, sch) -> bool:
        try:
            for func in list(sch.mod.functions):
                for buffer in _layout_free(sch, func):
                    _rewrite(sch, func, buffer)
        except ScheduleError:
            return False
        return True


def _layout_free(sch, func: str) -> List[str]:
    """The names of the parameters the function's `layout_free_buffers` attribute lists."""
    op = sch.mod[func]
    if "tir.func_attrs" not in op.attributes:
        return []
    attrs = ir.DictAttr(op.attributes["tir.func_attrs"])
    if LAYOUT_FREE not in attrs:
        return []
    params = arg_attrs(op)
    names = []
    for a in ir.ArrayAttr(attrs[LAYOUT_FREE]):
        k = ir.IntegerAttr(a).value if isinstance(a, ir.IntegerAttr) else -1
        if not 0 <= k < len(params) or "tir.name" not in params[k]:
            raise ScheduleError(f"{LAYOUT_FREE}: no buffer parameter {a}")
        names.append(ir.StringAttr(params[k]["tir.name"]).value)
    return names


def _rewrite(sch, func: str, buffer: str) -> None:
    blocks = [BlockView(o) for o in walk_all(sch.mod[func]) if Block.is_block(o)]
    chain = _cache_read_chain(blocks, buffer)
    found = _anchor(blocks, chain[-1][1] if chain else buffer)
    if found is None:
        return
    name, index, index_map = found
    anchor = sch.get_block(name, func)
    if not chain:  # the weight read directly (a conv2d, a dense)
        _copy_in_order(sch, anchor, index)
        sch.transform_layout(anchor, ("read", index), index_map)
        return
    sch.transform_layout(anchor, ("read", index), index_map)
    for k in range(len(chain) - 1, -1, -1):
        copy = sch.get_block(chain[k][0], func)
        if k == 0:
            _copy_in_order(sch, copy, 0)
        sch.transform_layout(copy, ("read", 0), index_map)


def _copy_in_order(sch, block, index: int) -> None:
    copy = sch.cache_read(block, index, "global")
    sch.annotate(copy, PREPROC, True)


def _cache_read_chain(blocks: List[BlockView], buffer: str) -> List[Tuple[str, str]]:
    """(block, buffer it writes) of the copies that carry `buffer` on: in program order, a
    block without init that reads one buffer, the current one, and writes one."""
    chain, current = [], buffer
    for view in blocks:
        if view.init or len(view.reads) != 1 or len(view.writes) != 1:
            continue
        if view.reads[0].buffer.name == current:
            current = view.writes[0].buffer.name
            chain.append((view.name, current))
    return chain


def _anchor(blocks: List[BlockView], buffer: str) -> Optional[Tuple[str, int, str]]:
    """(block, its read index of `buffer`, the suggested index map) for the last load of
    `buffer` in program order (TVM's BufferReadPosCollector); None without a suggestion."""
    last = None
    for view in blocks:
        for o in walk_all(view.op):
            if (
                o.name == "memref.load"
                and _owner_block(o) == view.op
                and buffer_name(o.operands[0]) == buffer
            ):
                last = (view, o)
    if last is None:
        return None
    view, load = last
    index_map = suggest_index_map(view.op, load)
    reads = [r.buffer.name for r in view.reads]
    if index_map is None or buffer not in reads:
        return None
    return view.name, reads.index(buffer), index_map


def _owner_block(op: ir.Operation) -> Optional[ir.Operation]:
    return next((p for p in ancestors(op) if Block.is_block(p)), None)
