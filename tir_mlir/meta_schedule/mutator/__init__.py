"""Mutators: how the evolutionary search changes a measured trace."""

from tir_mlir.meta_schedule.mutator.mutate_compute_location import MutateComputeLocation
from tir_mlir.meta_schedule.mutator.mutate_parallel import MutateParallel
from tir_mlir.meta_schedule.mutator.mutate_thread_binding import MutateThreadBinding
from tir_mlir.meta_schedule.mutator.mutate_tile_shape import MutateTileShape
from tir_mlir.meta_schedule.mutator.mutate_tile_size import MutateTileSize
from tir_mlir.meta_schedule.mutator.mutate_unroll import MutateUnroll
from tir_mlir.meta_schedule.mutator.mutator import Mutator, PyMutator


def create(kind: str = "llvm") -> dict:
    """TVM 0.21's default mutators and their probabilities per target kind; on CPU also
    MutateTileShape (the register tile reshaped in one move)."""
    if kind == "llvm":
        return {
            MutateTileSize(): 0.9,
            MutateTileShape(): 0.2,
            MutateComputeLocation(): 0.05,
            MutateUnroll(): 0.03,
            MutateParallel(max_jobs_per_core=16): 0.02,
        }
    if kind in ("cuda", "cuda-tensorcore"):
        return {MutateTileSize(): 0.9, MutateUnroll(): 0.08, MutateThreadBinding(): 0.02}
    raise ValueError(f"no default mutators for target kind {kind!r}")


__all__ = [
    "Mutator",
    "MutateComputeLocation",
    "MutateParallel",
    "MutateThreadBinding",
    "MutateTileShape",
    "MutateTileSize",
    "MutateUnroll",
    "PyMutator",
    "create",
]
