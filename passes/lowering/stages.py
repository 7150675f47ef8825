"""Every lowering stage by its dash-case name: the one registry that `pipeline.py` builds its
per-target stage lists from and that `tir-mlir opt -p NAME` runs stages by.

A stage is a class with a `name` (its key here) whose instances are called on a module; one
that takes options from the target string (`cuda -arch=sm_80`) also has
`for_target(target)`. Adding a stage: its module in `passes/lowering/`, one line here, then
its place in a target's list in `pipeline.py`. Modules are imported on first lookup, so a CPU
build never imports the CUDA stages (registering their intrinsics adds ~0.1 s to a process).
"""

import importlib

from tir_mlir.errors import BuildError

# name -> (module in tir_mlir.passes.lowering, class); the checks run before the first stage
# (bounds-check, static-bounds, indirect-mark) are stages too.
_STAGES = {
    # checks
    "bounds-check": ("bounds_check", "BoundsCheck"),
    "static-bounds": ("static_bounds", "StaticBounds"),
    "indirect-mark": ("indirect_check", "IndirectMark"),
    # CPU
    "alloc-limit": ("alloc_limit", "AllocLimit"),
    "prefetch-targets": ("prefetch", "PrefetchTargets"),
    "storage-align": ("storage_align", "StorageAlign"),
    "extern-calls": ("extern_calls", "ExternCalls"),
    "pack-panels": ("pack_panels", "PackPanels"),
    "tir-to-affine": ("tir_to_affine", "TirToAffine"),
    "version-guards": ("version_guards", "VersionGuards"),
    "safe-division": ("safe_division", "SafeDivision"),
    "prefetch": ("prefetch", "Prefetch"),
    "forward-buffer-copies": ("forward_copies", "ForwardBufferCopies"),
    "spatial-out": ("spatial_out", "SpatialOut"),
    "loop-interchange": ("loop_interchange", "LoopInterchange"),
    "lane-interchange": ("lane_interchange", "LaneInterchange"),
    "unroll-loops": ("unroll", "UnrollLoops"),
    "unroll-for-vectorize": ("unroll_for_vectorize", "UnrollForVectorize"),
    "compact-buffers": ("compact_buffers", "CompactBuffers"),
    "storage-pad": ("storage_align", "StoragePad"),
    "drop-unit-dims": ("unit_dims", "DropUnitDims"),
    "stack-budget": ("stack_budget", "StackBudget"),
    "bool-buffers-to-i8": ("bool_buffers", "BoolBuffersToI8"),
    "forward-copies": ("forward_copies", "ForwardCopies"),
    "rows-outside": ("rows_outside", "RowsOutside"),
    "transpose-tiles": ("transpose_tiles", "TransposeTiles"),
    "outer-lanes": ("outer_lanes", "OuterLanes"),
    "auto-vectorize": ("auto_vectorize", "AutoVectorize"),
    "vectorize-loops": ("vectorize", "VectorizeLoops"),
    "float-min-max": ("float_min_max", "FloatMinMax"),
    "vector-tanh-erf": ("vector_tanh_erf", "VectorTanhErf"),
    "vector-log": ("vector_log", "VectorLog"),
    "vector-exp": ("vector_exp", "VectorExp"),
    "coalesce-loops": ("coalesce_loops", "CoalesceLoops"),
    "sink-inits": ("sink_inits", "SinkInits"),
    "affine-to-scf": ("affine_to_scf", "AffineToScf"),
    "indirect-check": ("indirect_check", "IndirectCheck"),
    "scalar-replace": ("scalar_replace", "ScalarReplace"),
    "jam-carried-loops": ("jam_loops", "JamCarriedLoops"),
    "carry-vectors": ("carry_vectors", "CarryVectors"),
    "transpose-gathers": ("transpose_gathers", "TransposeGathers"),
    "transpose-scatters": ("transpose_scatters", "TransposeScatters"),
    "gather-loops": ("gather_loops", "GatherLoops"),
    "strided-loads": ("strided_loads", "StridedLoads"),
    "prefetch-panels": ("panel_prefetch", "PanelPrefetch"),
    "roll-strided-walks": ("rolled_walks", "RollStridedWalks"),
    "prefetch-strided": ("stride_prefetch", "StridePrefetch"),
    "packed-calls": ("packed_calls", "PackedCalls"),
    "alloc-check": ("alloc_check", "AllocCheck"),
    "speculate-loads": ("speculate_loads", "SpeculateLoads"),
    "index-constants": ("index_constants", "IndexConstants"),
    "buffer-tags": ("alias_scopes", "BufferTags"),
    "workspace-pool": ("workspace_pool", "WorkspacePool"),
    "scf-to-llvm": ("scf_to_llvm", "ScfToLLVM"),
    "fmuladd": ("fmuladd", "FmulAdd"),
    "alias-scopes": ("alias_scopes", "AliasScopes"),
    # CUDA
    "gpu-virtual-threads": ("gpu_vthread", "GpuVirtualThreads"),
    "gpu-check-bindings": ("gpu_bindings", "GpuCheckBindings"),
    "gpu-lower-cross-thread-reduction": ("gpu_cross_thread", "GpuLowerCrossThreadReduction"),
    "gpu-buffer-scopes": ("gpu_scopes", "GpuBufferScopes"),
    "gpu-map-threads": ("gpu_launch", "GpuMapThreads"),
    "gpu-lower-allreduce": ("gpu_allreduce", "GpuLowerAllReduce"),
    "gpu-insert-barriers": ("gpu_barriers", "GpuInsertBarriers"),
    "gpu-lower-wmma": ("gpu_wmma", "GpuLowerWmma"),
    "gpu-place-buffers": ("gpu_buffers", "GpuPlaceBuffers"),
    "gpu-limits": ("gpu_limits", "GpuLimits"),
    "gpu-outline": ("gpu_outline", "GpuOutline"),
    "gpu-to-binary": ("gpu_nvvm", "GpuToBinary"),
    "gpu-host-to-llvm": ("gpu_host", "GpuHostToLLVM"),
}


def names() -> list:
    """Every registered stage name, in registry order (checks, CPU, CUDA)."""
    return list(_STAGES)


def stage(name: str) -> type:
    """The stage class registered as `name`; a BuildError naming the known ones otherwise."""
    if name not in _STAGES:
        raise BuildError(f"unknown lowering stage {name!r}; known: {', '.join(_STAGES)}")
    module, cls = _STAGES[name]
    return getattr(importlib.import_module(f"tir_mlir.passes.lowering.{module}"), cls)


def instance(name: str, target: str = "cpu"):
    """A runnable instance of stage `name` (given the target's options when it takes them)."""
    cls = stage(name)
    return cls.for_target(target) if hasattr(cls, "for_target") else cls()
