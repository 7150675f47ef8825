"""parallel / vectorize / unroll / bind: set the kind of a loop (`tir.kind`, `tir.thread`).

    for i in range(n):      ==>     for i in T.parallel(n):       (or T.vectorized, T.unroll,
        body                            body                       T.thread_binding(n, "threadIdx.x"))

Legality (TVM's CheckParallelizability): for parallel, vectorize and bind, every block iter
var whose binding mentions the loop variable must be data parallel ("S"); binding to
threadIdx.x/y/z also accepts reduction iter vars (cross-thread reduction). unroll always
applies. The thread tag must be one TVM knows.
"""
from mlir import ir

from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.passes.schedule import analysis

THREAD_TAGS = tuple(f"{s}.{a}" for s in ("blockIdx", "threadIdx", "vthread") for a in "xyz") \
    + ("vthread",)


def _check_parallelizable(loop: ir.Operation, what: str, allow_reduce: bool = False):
    iv = Loop(loop).iv
    ok = ("S", "R") if allow_reduce else ("S",)
    for blk in analysis.blocks_under(loop):
        b = Block(blk)
        for r in analysis.dim_exprs_using(blk, iv):
            if b.iter_types[r] not in ok:
                raise ScheduleError(
                    f'The "{what}" cannot be fulfilled with regard to block {b.name!r} because '
                    f'its block iter {b.iter_names[r]!r}, whose binding contains the loop var '
                    f'{Loop(loop).name!r}, is not a data parallel block iter')


def parallel(loop: ir.Operation):
    _check_parallelizable(loop, "parallel")
    Loop(loop).set(kind="parallel", thread="")


def vectorize(loop: ir.Operation):
    _check_parallelizable(loop, "vectorize")
    Loop(loop).set(kind="vectorized", thread="")


def unroll(loop: ir.Operation):
    Loop(loop).set(kind="unroll", thread="")


def bind(loop: ir.Operation, thread_axis: str):
    if thread_axis not in THREAD_TAGS:
        raise ScheduleError(f"bind: unknown thread axis {thread_axis!r}; expected one of "
                            f"{', '.join(THREAD_TAGS)}")
    _check_parallelizable(loop, "bind", allow_reduce=thread_axis.startswith("threadIdx"))
    Loop(loop).set(kind="thread_binding", thread=thread_axis)
