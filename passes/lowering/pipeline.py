"""The lowering pipeline: per target, an ordered list of named stages (tir -> affine -> scf ->
llvm dialect), then text stages done by LLVM tools (llvm-ir, asm). `--emit X` stops after X.

A new target (e.g. a GPU: tir -> gpu dialect -> nvvm -> ptx) is a new entry in `TARGETS`;
passes hold no target branches.
"""

from mlir import ir

from tir_mlir.ir.mlir_error import MLIRError
from tir_mlir.context import get_context, serialized
from tir_mlir.errors import BuildError
from tir_mlir.passes.lowering import llvm_ir
from tir_mlir.passes.lowering.stages import stage as stage_cls
from tir_mlir.analysis.op_index import strip_handles
from tir_mlir.suggest import did_you_mean

# Target -> [(emit name, stage name)] it runs, the stages by their names in the registry
# (stages.py); the module after a stage is what `--emit name` shows (None: an internal step
# with no emit name).
STAGE_NAMES = {
    "cpu": [
        (None, "alloc-limit"),
        (None, "prefetch-targets"),
        (None, "storage-align"),
        (None, "extern-calls"),
        (None, "pack-panels"),
        ("affine", "tir-to-affine"),
        (None, "version-guards"),
        (None, "safe-division"),
        (None, "prefetch"),
        (None, "forward-buffer-copies"),
        (None, "spatial-out"),
        (None, "loop-interchange"),
        (None, "lane-interchange"),
        (None, "unroll-loops"),
        (None, "unroll-for-vectorize"),
        (None, "compact-buffers"),
        (None, "storage-pad"),
        (None, "drop-unit-dims"),
        (None, "stack-budget"),
        (None, "bool-buffers-to-i8"),
        (None, "forward-copies"),
        (None, "rows-outside"),
        (None, "transpose-tiles"),
        (None, "outer-lanes"),
        (None, "auto-vectorize"),
        (None, "vectorize-loops"),
        (None, "float-min-max"),
        (None, "vector-tanh-erf"),
        (None, "vector-log"),
        (None, "vector-exp"),
        (None, "coalesce-loops"),
        (None, "sink-inits"),
        (None, "affine-to-scf"),
        (None, "indirect-check"),
        (None, "scalar-replace"),
        (None, "jam-carried-loops"),
        (None, "carry-vectors"),
        (None, "transpose-gathers"),
        (None, "transpose-scatters"),
        (None, "gather-loops"),
        (None, "strided-loads"),
        (None, "prefetch-panels"),
        (None, "roll-strided-walks"),
        ("scf", "prefetch-strided"),
        (None, "packed-calls"),
        (None, "alloc-check"),
        (None, "buffer-tags"),
        (None, "workspace-pool"),
        (None, "speculate-loads"),
        (None, "index-constants"),
        (None, "scf-to-llvm"),
        (None, "fmuladd"),
        ("llvm-dialect", "alias-scopes"),
    ],
    "cuda": [
        (None, "gpu-virtual-threads"),
        (None, "gpu-check-bindings"),
        (None, "gpu-lower-cross-thread-reduction"),
        (None, "gpu-buffer-scopes"),
        ("affine", "tir-to-affine"),
        (None, "safe-division"),
        (None, "compact-buffers"),
        (None, "bool-buffers-to-i8"),
        (None, "gpu-map-threads"),
        (None, "gpu-lower-allreduce"),
        (None, "gpu-insert-barriers"),
        (None, "gpu-lower-wmma"),
        (None, "gpu-place-buffers"),
        (None, "gpu-limits"),
        ("scf", "affine-to-scf"),
        ("gpu", "gpu-outline"),
        ("gpu-binary", "gpu-to-binary"),
        ("llvm-dialect", "gpu-host-to-llvm"),
    ],
}


# Target -> the [(emit name, stage class)] it runs (functions, so a test can swap a stage).
def _cpu_stages():
    return [(emit, stage_cls(name)) for emit, name in STAGE_NAMES["cpu"]]


def _cuda_stages():
    return [(emit, stage_cls(name)) for emit, name in STAGE_NAMES["cuda"]]


def _ptx(module) -> str:
    from tir_mlir.passes.lowering.gpu_nvvm import ptx

    return ptx(module)


TARGETS = {"cpu": _cpu_stages, "cuda": _cuda_stages}
TARGET_ALIASES = {"llvm": "cpu", "c": "cpu", "nvptx": "cuda"}
TEXT_EMITS = ("llvm-ir", "asm")
# Target -> {text emit: (stage it is read from, module -> text)}.
TARGET_TEXT_EMITS = {"cuda": {"ptx": ("gpu-binary", _ptx)}}


def emits(target="cpu"):
    t = _target(target)
    return (
        ["tir"]
        + [name for name, _ in TARGETS[t]() if name]
        + list(TEXT_EMITS)
        + list(TARGET_TEXT_EMITS.get(t, ()))
    )


def _target(target: str) -> str:
    t = str(target).split()[0]
    t = TARGET_ALIASES.get(t, t)
    if t not in TARGETS:
        known = ["llvm", *TARGETS, *(a for a in TARGET_ALIASES if a != "llvm")]
        raise BuildError(
            f"unknown target {target!r}{did_you_mean(t, known)}; known: {', '.join(known)}"
        )
    return t


@serialized
def lower(
    module: ir.Module, target="cpu", emit="llvm-dialect", debug=False, on_stage=None
) -> ir.Module:
    """A lowered copy of `module` (left untouched), stopped after stage `emit`;
    `on_stage(name, module)` sees the module after every stage (--print-ir-after-all)."""
    stages = TARGETS[_target(target)]()
    if emit not in ["tir"] + [n for n, _ in stages if n]:
        raise BuildError(f"unknown stage {emit!r}; choose from {emits(target)}")
    with get_context(), module.operation.location:
        out = ir.Module.parse(str(module.operation.get_asm(enable_debug_info=True)))  # (not binary)
        strip_handles(out.operation)  # a schedule's handles never reach a lowering decision
        if emit == "tir":
            return out
        # A debug build checks every access at run time; a plain one refuses those provably
        # out of bounds (static_bounds.py) and, on the CPU, checks at run time those whose
        # index is read from memory (indirect_check.py).
        checks = (
            ["bounds-check"]
            if debug
            else ["static-bounds"] + (["indirect-mark"] if _target(target) == "cpu" else [])
        )
        for check in map(stage_cls, checks):
            check()(out)
            if on_stage is not None:
                on_stage(check.name, out)
        for name, stage in stages:
            # A stage with options from the target string (`cuda -arch=sm_80`) has for_target.
            (stage.for_target(target) if hasattr(stage, "for_target") else stage())(out)
            try:
                out.operation.verify()
            except MLIRError as e:
                raise BuildError(f"stage {stage.name} produced invalid IR: {e}") from None
            if on_stage is not None:
                label = getattr(stage, "name", stage.__name__)
                on_stage(f"{label} (--emit {name})" if name else label, out)
            if name == emit:
                return out
    return out


@serialized
def emit_text(module: ir.Module, emit: str, target="cpu", debug=False, on_stage=None) -> str:
    """The program at stage `emit` as text (MLIR, LLVM IR or assembly)."""
    if emit in TARGET_TEXT_EMITS.get(_target(target), {}):
        stage, to_text = TARGET_TEXT_EMITS[_target(target)][emit]
        return to_text(lower(module, target, stage, debug, on_stage))
    if emit not in TEXT_EMITS:
        return str(lower(module, target, emit, debug, on_stage))
    ll = llvm_ir.to_llvm_ir(lower(module, target, "llvm-dialect", debug, on_stage))
    return ll if emit == "llvm-ir" else llvm_ir.to_asm(ll, target)
