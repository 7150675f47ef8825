"""annotate_buffer_access: give one buffer of a block's T.reads / T.writes a region by hand.

annotate_buffer_access(B, 0, "read", lambda vi, vj: ((vi - 1, vi + 1), (vj - 1, vj + 1)))::

    with T.block("B"):                          with T.block("B"):
        T.reads(A[vi, vj])               ->         T.reads(A[vi - 1:vi - 1 + 2, vj - 1:vj - 1 + 2])
        ...                                         T.block_attr({"explicit_read_region": [T.int32(0)]})

`gen_new_ranges` maps the block's iter vars to one entry per buffer dimension: an expression
(a single element) or a (begin, end) pair. The block gets TVM's annotation
`explicit_read_region` / `explicit_write_region` (the list of annotated indices) and the
region itself (tir_mlir/ir/region_overrides.py). The statements, and so the numbers, do not
change: lowering and legality checks use the real accesses.

Legality (TVM's): `buf_type` is "read" or "write"; `buffer_index` is in range of the block's
T.reads / T.writes; the function takes one argument per iter var and gives one entry per buffer
dimension, and (TVM's restriction) the block has as many iter vars as the buffer has
dimensions. Stricter than TVM (whose regions are arbitrary expressions): each begin is affine in
the iter vars and each extent (end - begin) a positive constant.
"""

from typing import Callable, List, Tuple

from mlir import ir

from tir_mlir.ir import region_overrides as overrides
from tir_mlir.ir.affine_exprs import const_of
from tir_mlir.dialect.buffers import buffer_name
from tir_mlir.dialect.ops import Block
from tir_mlir.errors import ScheduleError
from tir_mlir.schedule import lambda_exprs as symbolic
from tir_mlir.printer.affine_text import affine_text
from tir_mlir.ir.regions import block_regions

WHO = "annotate_buffer_access"
_ANNOTATION = {"read": "explicit_read_region", "write": "explicit_write_region"}


def check_kind(buf_type: str, who: str):
    if buf_type not in overrides.KINDS:
        raise ScheduleError(f"{who}: buf_type must be 'read' or 'write', got {buf_type!r}")


def visible(block: Block, buf_type: str) -> list:
    """The block's T.reads / T.writes as printed (hidden buffers left out)."""
    regions = block_regions(block.op)
    return regions.reads if buf_type == "read" else regions.writes


def pick(block: Block, buffer_index: int, buf_type: str, who: str):
    check_kind(buf_type, who)
    regions = visible(block, buf_type)
    if not isinstance(buffer_index, int) or not 0 <= buffer_index < len(regions):
        raise ScheduleError(
            f"{who}: block {block.name!r} has {len(regions)} {buf_type} "
            f"region(s); buffer_index {buffer_index!r} is out of range"
        )
    return regions[buffer_index]


def new_ranges(
    block: Block, fn: Callable, ndim: int
) -> Tuple[List[Tuple[ir.AffineExpr, int]], str]:
    """(begin, extent) per dimension from gen_new_ranges, and gen_new_ranges as TVM prints it
    in a trace (`lambda vi: [(vi - 1, vi + 1)]`; a single element x as `(x, x + 1)`)."""
    n = len(block.iter_names)
    names = symbolic._names(fn, n)
    if names == [f"v{k}" for k in range(n)]:  # no parameter names (`lambda *v:`): TVM
        names = list(block.iter_names)  # names them after the iter vars
    items = symbolic.call(fn, n)
    if len(items) != n:
        raise ScheduleError(
            f"{WHO}: block {block.name!r} has {n} iter vars but "
            f"gen_new_ranges gives {len(items)} ranges (TVM requires as many)"
        )
    if len(items) != ndim:
        raise ScheduleError(
            f"{WHO}: the buffer has {ndim} dimensions but gen_new_ranges gives {len(items)} ranges"
        )
    out, texts = [], []
    simplify = ir.AffineExpr.simplify_affine_expr
    for item in items:
        if isinstance(item, tuple):
            if len(item) != 2:
                raise ScheduleError(f"{WHO}: a range is (begin, end), got {len(item)} values")
            lo, hi = (simplify(symbolic._e(x), n, 0) for x in item)
        else:
            lo = simplify(symbolic._e(item), n, 0)
            hi = lo + 1
        ext = const_of(simplify(hi - lo, n, 0))
        if ext is None or ext <= 0:
            raise ScheduleError(
                f"{WHO}: the extent of range ({lo}, {hi}) must be a positive constant"
            )
        out.append((lo, ext))
        a = affine_text(lo, names)[0]
        if ext == 1 and const_of(lo) is None:  # TVM builds x + 1 for a single element
            texts.append(f"({a}, {a} + 1)")
        else:
            texts.append(f"({a}, {affine_text(simplify(hi, n, 0), names)[0]})")
    return out, f"lambda {', '.join(names)}: [{', '.join(texts)}]"


def annotate_buffer_access(
    block: Block, buffer_index: int, buf_type: str, ranges: List[Tuple[ir.AffineExpr, int]]
):
    """`ranges` from new_ranges; the index already checked by pick."""
    region = visible(block, buf_type)[buffer_index]
    overrides.set_explicit(
        block.op, buf_type, buffer_name(region.buffer, ""), len(block.iter_names), ranges
    )
    ann = block.annotations
    key = _ANNOTATION[buf_type]
    done = [ir.IntegerAttr(x).value for x in ir.ArrayAttr(ann[key])] if key in ann else []
    if buffer_index not in done:
        done.append(buffer_index)
    i32 = ir.IntegerType.get_signed(32)  # TVM's IntImm("int32") indices
    ann[key] = ir.ArrayAttr.get([ir.IntegerAttr.get(i32, x) for x in done])
    block.set_attr("annotations", ir.DictAttr.get(ann))
