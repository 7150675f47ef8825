"""ParallelizeVectorizeUnroll: mark a function's root block for parallel outer loops,
vectorized inner loops and a sampled unroll depth (TVM's rule of the same name).

As in TVM, the rule acts on the root block only (`get_block("root")`, which PostOrderApply
visits after the function's blocks) and leaves every other block alone: the root gets
`meta_schedule.parallel` (max parallel extent), `meta_schedule.vectorize` (max vector
extent) and `meta_schedule.unroll_explicit` / `_implicit` (a sampled max unroll step). The
postprocessor RewriteParallelVectorizeUnroll turns them into loop kinds of each of the
root's child blocks once the loops are final. A function whose blocks are all spatial gets
no unroll depth (nothing to unroll a reduction for).
"""

from typing import List, Optional, Sequence

from tir_mlir.context import get_context
from tir_mlir.dialect.ops import Block
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.meta_schedule.schedule_rule.schedule_rule import ScheduleRule
from tir_mlir.schedule.views import RootBlockView


class ParallelizeVectorizeUnroll(ScheduleRule):
    visits_root = True

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
        root = sch.get(block)
        if not isinstance(root, RootBlockView):
            return [sch]
        cores = self.target.num_cores if self.target is not None else 1
        if self.max_jobs_per_core > 0:
            sch.annotate(block, "meta_schedule.parallel", self.max_jobs_per_core * cores)
        if self.max_vectorize_extent > 0:
            sch.annotate(block, "meta_schedule.vectorize", self.max_vectorize_extent)
        if self.unroll_max_steps and not _spatial_function(root.op):
            n = len(self.unroll_max_steps)
            v = sch.sample_categorical(self.unroll_max_steps, [1 / n] * n)
            key = "unroll_explicit" if self.unroll_explicit else "unroll_implicit"
            sch.annotate(block, f"meta_schedule.{key}", v)
        return [sch]


def _spatial_function(func) -> bool:
    """Whether every block of the function is spatial (TVM's CheckSpatialPrimFunc); read
    from the IR, so that the query leaves no instruction in the trace."""
    with get_context():
        found = [Block(op) for op in walk_all(func) if Block.is_block(op)]
    return all(set(b.iter_types) <= {"S"} for b in found)
