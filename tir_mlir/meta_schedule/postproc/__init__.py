"""Postprocessors: applied to every sampled candidate before it is measured."""

from tir_mlir.meta_schedule.postproc.disallow_dynamic_loop import DisallowDynamicLoop
from tir_mlir.meta_schedule.postproc.postproc import Postproc, PyPostproc
from tir_mlir.meta_schedule.postproc.rewrite_cooperative_fetch import RewriteCooperativeFetch
from tir_mlir.meta_schedule.postproc.rewrite_parallel_vectorize_unroll import (
    RewriteParallelVectorizeUnroll,
)
from tir_mlir.meta_schedule.postproc.rewrite_layout import RewriteLayout
from tir_mlir.meta_schedule.postproc.rewrite_reduction_block import RewriteReductionBlock
from tir_mlir.meta_schedule.postproc.rewrite_tensorize import RewriteTensorize
from tir_mlir.meta_schedule.postproc.rewrite_unbound_block import RewriteUnboundBlock
from tir_mlir.meta_schedule.postproc.verify_gpu_code import VerifyGPUCode


def create(kind: str = "llvm") -> list:
    """TVM 0.21's default postprocessors per target kind."""
    if kind == "llvm":
        return [
            DisallowDynamicLoop(),
            RewriteParallelVectorizeUnroll(),
            RewriteReductionBlock(),
            RewriteLayout(),
        ]
    if kind == "cuda":
        return [
            DisallowDynamicLoop(),
            RewriteCooperativeFetch(),
            RewriteUnboundBlock(max_threadblocks=256),
            RewriteParallelVectorizeUnroll(),
            RewriteReductionBlock(),
            VerifyGPUCode(),
        ]
    if kind == "cuda-tensorcore":
        return [*create("cuda"), RewriteTensorize()]
    raise ValueError(f"no default postprocessors for target kind {kind!r}")


__all__ = [
    "DisallowDynamicLoop",
    "Postproc",
    "PyPostproc",
    "RewriteCooperativeFetch",
    "RewriteLayout",
    "RewriteParallelVectorizeUnroll",
    "RewriteReductionBlock",
    "RewriteTensorize",
    "RewriteUnboundBlock",
    "VerifyGPUCode",
    "create",
]
