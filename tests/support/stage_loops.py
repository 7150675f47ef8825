"""The loops around each store right after one lowering stage: how the loop-restructuring
stages' tests (loop-interchange, unroll-for-vectorize) check what they did."""

from tir_mlir.context import get_context
from tir_mlir.passes.lowering import pipeline
from tir_mlir.passes.lowering.common import ancestors, walk


def loops_around_stores(mod, stage_name) -> list:
    """For each store after stage `stage_name`, the names of the loops around it, outermost
    first."""
    seen = []

    def on_stage(label, module):
        if label == stage_name:
            for op in walk(module.body.operations[0]):
                if op.name == "memref.store":
                    seen.append(
                        tuple(
                            str(p.attributes["tir.name"]).strip('"')
                            for p in reversed(list(ancestors(op)))
                            if p.name == "affine.for"
                        )
                    )

    with get_context():
        pipeline.lower(mod.module, emit="scf", on_stage=on_stage)
    return seen
