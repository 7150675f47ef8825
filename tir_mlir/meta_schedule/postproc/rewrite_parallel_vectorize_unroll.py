"""RewriteParallelVectorizeUnroll: turn ParallelizeVectorizeUnroll's annotations into loop
kinds once the loop nest is final (TVM's postprocessor of the same name). The annotations
sit on a function's root block (`get_block("root")`, as TVM's rule writes them: they then
apply to each of its child blocks) or on one block.

For a block marked `meta_schedule.parallel` = P: its outer serial spatial loops are fused,
as in TVM, up to and including the first loop that takes the product of their extents past P
(or that holds more than one statement), and the fused loop is made parallel (not when the
product is 1). So a 2 x 7 x 8 tile grid runs as 112 jobs rather than 16 jobs of 7 steps
each: fewer idle cores when the jobs do not divide evenly among them.
`meta_schedule.vectorize` = V: the innermost loop of every block of the nest is vectorized
when it is spatial and its extent is at most V (that loop is then left out of the parallel
prefix). `meta_schedule.unroll_explicit` = U > 0:
the outermost loop of a block with a reduction gets `pragma_auto_unroll_max_step` = U and
`pragma_unroll_explicit` (TVM does not unroll purely spatial blocks).
"""

from tir_mlir.context import get_context
from tir_mlir.errors import ScheduleError
from tir_mlir.meta_schedule.feature_extractor.store_features import loop_strides
from tir_mlir.meta_schedule.postproc.postproc import Postproc, blocks

KEYS = (
    "meta_schedule.parallel",
    "meta_schedule.vectorize",
    "meta_schedule.unroll_explicit",
    "meta_schedule.unroll_implicit",
)


class RewriteParallelVectorizeUnroll(Postproc):
    def apply(self, sch) -> bool:
        vector_limit = {}
        inherited = _take_root_annotations(sch)
        for func, name in blocks(sch):
            block = sch.get_block(name, func)
            ann = sch.get_annotations(block)
            if not any(k in ann for k in KEYS):
                ann = inherited.get((func, name), {})
                if not ann:
                    continue
            for k in KEYS:
                if k in sch.get_annotations(block):
                    sch.unannotate(block, k)
            vector_limit[func] = ann.get("meta_schedule.vectorize", 0)
            loops = sch.get_loops(block)
            if not loops:
                continue
            outer = loops[0]
            if _fuse_split_parallel_vectorize(sch, block, loops, ann):
                continue
            if ann.get("meta_schedule.parallel", 0) > 0:
                # the innermost loop stays for the vectorizer when it qualifies (TVM: "prefer
                # vectorize to parallel")
                keep = int(_vectorizable(sch, loops[-1], vector_limit[func]))
                outer = (
                    _parallelize(sch, loops[: len(loops) - keep], ann["meta_schedule.parallel"])
                    or outer
                )
            unroll = ann.get(
                "meta_schedule.unroll_explicit", ann.get("meta_schedule.unroll_implicit", 0)
            )
            if unroll > 0 and "R" in sch.get_iter_types(block):
                sch.annotate(outer, "pragma_auto_unroll_max_step", unroll)
                sch.annotate(
                    outer, "pragma_unroll_explicit", int("meta_schedule.unroll_explicit" in ann)
                )
        for func, name in blocks(sch):
            if vector_limit.get(func, 0) > 1:
                _vectorize(sch, sch.get_block(name, func), vector_limit[func])
        return True


def _fuse_split_parallel_vectorize(sch, block, loops, ann) -> bool:
    """TVM's RewriteFuseSplitParallelVectorize: when every loop of the block could be both
    parallel and vectorized (spatial, serial, unannotated, one statement, a constant extent)
    and every access is contiguous over the whole nest, all loops are fused and split by the
    vector limit, the outer part parallel, the inner vectorized. Done only when the vector
    limit divides the trip count (TVM adds a T.where otherwise). Whether it was done."""
    par = ann.get("meta_schedule.parallel", 0)
    vec = ann.get("meta_schedule.vectorize", 0)
    if par <= 0 or vec <= 1:
        return False
    extents = []
    for lp in loops:
        view = sch.get(lp)
        extent = _extent(view)
        if (
            extent is None
            or sch.get_loop_iter_type(lp) != "S"
            or str(view.kind) != "serial"
            or view.annotations
            or not _single_statement(view)
        ):
            return False
        extents.append(extent)
    total = 1
    for e in extents:
        total *= e
    if total <= vec or total % vec:
        return False
    with get_context():
        strides = loop_strides(sch.get(block).op)
    if strides is None or any(_fusible(s, extents) < len(loops) for s in strides):
        return False
    fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    outer, inner = sch.split(fused, [None, vec])
    sch.parallel(outer)
    try:
        sch.vectorize(inner)
    except ScheduleError:
        pass  # the lowering cannot vectorize this body: the inner loop stays serial
    return True


def _fusible(strides, extents) -> int:
    """How many innermost loops one access walks contiguously (TVM's count: a loop the
    access does not use fuses; the first used one needs stride 1 unless it is innermost;
    each next used one the previous stride times the previous extent)."""
    fusible, prev = 0, None
    for i in range(len(strides) - 1, -1, -1):
        if strides[i] == 0:
            fusible += 1
        elif prev is None:
            if strides[i] != 1 and fusible != 0:
                break
            fusible, prev = fusible + 1, i
        elif strides[i] == strides[prev] * extents[prev]:
            fusible, prev = fusible + 1, i
        else:
            break
    return fusible


def _take_root_annotations(sch) -> dict:
    """Remove ParallelizeVectorizeUnroll's annotations from each function's root block
    (where TVM's rule puts them) and give them to the root's child blocks, as TVM's
    postprocessor does: (func, block name) -> annotations."""
    given = {}
    for func in list(sch.mod.functions):
        root = sch.get_block("root", func)
        ann = {k: v for k, v in sch.get_annotations(root).items() if k in KEYS}
        for k in ann:
            sch.unannotate(root, k)
        if ann:
            for child in sch.get_child_blocks(root):
                given[(func, sch.get(child).name_hint)] = ann
    return given


def _parallelize(sch, loops, limit: int):
    """Fuse TVM's prefix of serial spatial loops (see the module comment) and make it
    parallel; the fused loop, or None."""
    prefix, prod, symbolic = [], 1, False
    for lp in loops:
        view = sch.get(lp)
        if sch.get_loop_iter_type(lp) != "S" or str(view.kind) != "serial" or view.annotations:
            break
        prefix.append(lp)
        # A symbolic extent (`(n + 31) // 32`) counts as 1, its value at the smallest sizes:
        # the constant loops inside it still join the fused loop, so a symbolic kernel has at
        # least as many jobs as the kernel tuned at one size that fits in a tile (TVM, which
        # tunes no symbolic loop, stops at one).
        extent = _extent(view)
        symbolic = symbolic or extent is None
        prod *= 1 if extent is None else extent
        if prod > limit or not _single_statement(view):
            break
    if prod == 1 and not symbolic:
        return None
    while prefix:
        try:
            fused = sch.fuse(*prefix) if len(prefix) > 1 else prefix[0]
            sch.parallel(fused)
            return fused
        except ScheduleError:
            prefix.pop()  # not a perfect nest that far down: fuse fewer
    return None


def _extent(view):
    """The loop's constant extent; None for one over a size (`n`) or bounded by outer loops."""
    try:
        extent = view.extent
    except ScheduleError:
        return None
    return int(extent) if isinstance(extent, int) else None


def _single_statement(view) -> bool:
    body = view.op.regions[0].blocks[0].operations
    return sum(1 for op in body if not op.name.endswith("yield")) == 1


def _vectorizable(sch, loop, limit: int) -> bool:
    view = sch.get(loop)
    extent = _extent(view)
    return (
        extent is not None
        and 1 < extent <= limit
        and str(view.kind) == "serial"
        and sch.get_loop_iter_type(loop) == "S"
        and len(sch.get_child_blocks(loop)) == 1
    )


def _vectorize(sch, block, limit: int):
    loops = sch.get_loops(block)
    if loops and _vectorizable(sch, loops[-1], limit):
        try:
            sch.vectorize(loops[-1])
        except ScheduleError:
            pass  # the lowering cannot vectorize this body: keep it scalar
