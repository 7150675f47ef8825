"""One loop or block of a function as TVMScript (what `sch.get(rv)` prints), and the
T.reads/T.writes regions of a block as text.

The whole function is printed (so names are the ones the function's script uses) and only
the target statement's lines are kept, dedented. A `T.grid` chain never swallows the target:
a loop in the middle of a grid starts its own statement, as TVM prints a For on its own.
"""

from typing import List, Optional, Tuple

from tir_mlir.dialect.ops import Block
from tir_mlir.ir.ir_walk import func_of
from tir_mlir.printer.stmt import IND, FuncPrinter


class _FragmentPrinter(FuncPrinter):
    def __init__(self, target):
        super().__init__(func_of(target))
        self.target = target
        self.head = None  # the loop whose grid chain is being formed
        # (first line, end line, depth) of the target
        self.span: Optional[Tuple[int, int, int]] = None
        self.region_texts = []  # the target block's [reads, writes], one text per region

    def _is_grid_loop(self, loop) -> bool:
        return FuncPrinter._is_grid_loop(loop) and (loop.op != self.target or loop.op == self.head)

    def loop(self, op):
        self.head = op
        super().loop(op)

    def stmt(self, op):
        if op != self.target:
            return super().stmt(op)
        start, depth = len(self.lines), self.depth
        super().stmt(op)
        self.span = (start, len(self.lines), depth)
        return None

    def _regions(self, regions, b: Block) -> str:
        if b.op == self.target:
            self.region_texts.append([FuncPrinter._regions(self, [r], b) for r in regions])
        return super()._regions(regions, b)


def _printed(op) -> _FragmentPrinter:
    with op.context:
        p = _FragmentPrinter(op)
        p.print()
    return p


def stmt_script(op) -> str:
    """The statement `op` (a loop or block) alone, dedented."""
    p = _printed(op)
    assert p.span is not None, "the statement is in its function"
    start, end, depth = p.span
    return "\n".join(line[len(IND) * depth :] for line in p.lines[start:end])


def block_region_texts(op) -> Tuple[List[str], List[str]]:
    """The T.reads and T.writes regions of block `op`, one text per buffer region."""
    reads, writes = _printed(op).region_texts
    return reads, writes
