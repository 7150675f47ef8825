"""parallel / vectorize / unroll / bind: set the kind of a loop (`tir.kind`, `tir.thread`).

    for i in range(n):      ==>     for i in T.parallel(n):       (or T.vectorized, T.unroll,
        body                            body                       T.thread_binding(n, "threadIdx.x"))

Legality (TVM's CheckParallelizability): for parallel, vectorize and bind, every block iter
var whose binding mentions the loop variable must be data parallel ("S"); binding to
threadIdx.x/y/z also accepts reduction iter vars (cross-thread reduction). And (TVM's
CheckSubtreeCompactDataflow) every block directly under the loop is a local complete block
(all iters "S", reads no buffer it writes) or a local reduction block (has an init, iters
"S"/"R", quasi-affine bindings, no reduction iter in a written index), judged on its
T.reads/T.writes: e.g. the update block left by
decompose_reduction is neither. unroll always applies. The thread tag must be one TVM knows.
"""

from mlir import ir

from tir_mlir.dialect.ops import THREAD_TAGS, Block, Loop
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import structure as analysis
from tir_mlir.ir.regions import block_regions


def _check_compact_dataflow(loop: ir.Operation):
    for blk in analysis.child_blocks(loop):
        b = Block(blk)
        complete = all(t == "S" for t in b.iter_types) and not _reads_what_it_writes(blk)
        reduction = (
            b.init is not None
            and all(t in ("S", "R") for t in b.iter_types)
            and not analysis.non_affine_dims(blk)
            and not _reduce_iter_indexes_output(b)
        )
        if not (complete or reduction):
            raise ScheduleError(
                f"The queried subtree root loop {Loop(loop).name!r} does not have compact "
                f"dataflow, because its child block {b.name!r} is neither a local complete "
                f"block nor a local reduction block"
            )


def _reads_what_it_writes(blk) -> bool:
    """On the block's regions, as TVM's check: a nested reduction's accumulator, written under
    its own T.init(), is not read by the outer block. (Inferring regions is costly: asked
    only of blocks whose iters are all spatial.)"""
    regions = block_regions(blk)
    reads, writes = [r.buffer for r in regions.reads], [r.buffer for r in regions.writes]
    return any(r == w for r in reads for w in writes)


def _reduce_iter_indexes_output(b: Block) -> bool:
    args = b.iter_vars + (list(b.init.arguments) if b.init is not None else [])
    reduce_args = [a for a, t in zip(args, b.iter_types * 2) if t == "R"]
    return any(
        _depends_on(i, reduce_args)
        for o in analysis.walk_all(b.op)
        if o.name == "memref.store"
        for i in list(o.operands)[2:]
    )


def _depends_on(v: ir.Value, targets) -> bool:
    if any(v == t for t in targets):
        return True
    owner = v.owner
    if isinstance(owner, ir.Block) or not hasattr(owner, "operands"):
        return False
    return any(_depends_on(x, targets) for x in owner.operands)


def _check_parallelizable(loop: ir.Operation, what: str, allow_reduce: bool = False):
    _check_compact_dataflow(loop)
    iv = Loop(loop).iv
    ok = ("S", "R") if allow_reduce else ("S",)
    # only blocks bound to the loop can fail; when one does, the first failing one in
    # program order is reported
    if all(
        Block(blk).iter_types[r] in ok
        for blk in analysis.blocks_binding(iv)
        for r in analysis.dim_exprs_using(blk, iv)
    ):
        return
    for blk in analysis.blocks_under(loop):
        b = Block(blk)
        for r in analysis.dim_exprs_using(blk, iv):
            if b.iter_types[r] not in ok:
                raise ScheduleError(
                    f'The "{what}" cannot be fulfilled with regard to block {b.name!r} because '
                    f"its block iter {b.iter_names[r]!r}, whose binding contains the loop var "
                    f"{Loop(loop).name!r}, is not a data parallel block iter"
                )


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
        raise ScheduleError(
            f"bind: unknown thread axis {thread_axis!r}; expected one of {', '.join(THREAD_TAGS)}"
        )
    _check_parallelizable(loop, "bind", allow_reduce=thread_axis.startswith("threadIdx"))
    Loop(loop).set(kind="thread_binding", thread=thread_axis)
