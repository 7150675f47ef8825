"""ParallelizeVectorizeUnroll: mark a top-level block for parallel outer loops, vectorized
inner loops and a sampled unroll depth (TVM's rule of the same name).

TVM annotates the root block; tir-mlir has no root block, so each top-level block carries
`meta_schedule.parallel` (max parallel extent), `meta_schedule.vectorize` (max vector
extent) and `meta_schedule.unroll_explicit` / `_implicit` (a sampled max unroll step).
The postprocessor RewriteParallelVectorizeUnroll turns them into loop kinds once the loops
are final. As in TVM, a function whose blocks are all spatial gets no unroll depth (nothing
to unroll a reduction for). A block that MultiLevelTilingWithIntrin blockized is nested in a new outer
block that the space generator never visits: the annotations go on that outer block.
"""

from typing import List, Optional, Sequence

from tir_mlir.context import get_context
from tir_mlir.dialect.ops import Block
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.meta_schedule.schedule_rule.random_compute_location import PRODUCER_KEY
from tir_mlir.meta_schedule.schedule_rule.schedule_rule import ScheduleRule


class ParallelizeVectorizeUnroll(ScheduleRule):
    def __init__(
        self,
        max_jobs_per_core: int = 16,
        max_vectorize_extent: int = 16,
        unroll_max_steps: Optional[Sequence[int]] = None,
        unroll_explicit: bool = True,
    ):
        self.max_jobs_per_core = max_jobs_per_core
        self.max_vectorize_extent = max_vectorize_extent
        self.unroll_max_steps = list(unroll_max_steps or [])
        self.unroll_explicit = unroll_explicit

    def apply(self, sch, block) -> List:
        if not sch.is_top_level_block(block):
            block = _auto_tensorize_outer(sch, block)
            if block is None:
                return [sch]
        # an rfactor block AddRFactor made for this one is top-level too but never visited
        targets = [block]
        if PRODUCER_KEY in sch.get(block).annotations:
            producers = sch.get_producers(block)
            targets += producers if len(producers) == 1 else []
        cores = self.target.num_cores if self.target is not None else 1
        v = None
        for b in targets:
            if self.max_jobs_per_core > 0:
                sch.annotate(b, "meta_schedule.parallel", self.max_jobs_per_core * cores)
            if self.max_vectorize_extent > 0:
                sch.annotate(b, "meta_schedule.vectorize", self.max_vectorize_extent)
            if self.unroll_max_steps and not _spatial_function(sch, block):
                if v is None:  # one unroll depth for both, as on TVM's root block
                    n = len(self.unroll_max_steps)
                    v = sch.sample_categorical(self.unroll_max_steps, [1 / n] * n)
                key = "unroll_explicit" if self.unroll_explicit else "unroll_implicit"
                sch.annotate(b, f"meta_schedule.{key}", v)
        return [sch]


def _spatial_function(sch, block) -> bool:
    """Whether every block of the block's function is spatial (TVM's CheckSpatialPrimFunc);
    read from the IR, so that the query leaves no instruction in the trace."""
    name = sch.get(block).name_hint
    with get_context():
        for func in sch.mod.functions:
            found = [Block(op) for op in walk_all(sch.mod[func]) if Block.is_block(op)]
            if any(b.name == name for b in found):
                return all(set(b.iter_types) <= {"S"} for b in found)
    return False


def _auto_tensorize_outer(sch, block):
    """The top-level block marked `meta_schedule.auto_tensorize` that directly encloses
    `block`, not yet annotated by this rule; None otherwise."""
    sref = sch.get_sref(block).parent
    while sref is not None and sref.stmt.__class__.__name__ != "BlockView":
        sref = sref.parent
    if sref is None:
        return None
    ann = dict(sref.stmt.annotations)
    if "meta_schedule.auto_tensorize" not in ann or "meta_schedule.vectorize" in ann:
        return None
    outer = sch.get_block(sref.stmt.name_hint)
    return outer if sch.is_top_level_block(outer) else None
