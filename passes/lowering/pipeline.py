"""The lowering pipeline: per target, an ordered list of named stages (tir -> affine -> scf ->
llvm dialect), then text stages done by LLVM tools (llvm-ir, asm). `--emit X` stops after X.

A new target (e.g. a GPU: tir -> gpu dialect -> nvvm -> ptx) is a new entry in `TARGETS`;
passes hold no target branches.
"""
from mlir import ir

from tir_mlir.context import get_context, serialized
from tir_mlir.errors import BuildError
from tir_mlir.passes.lowering import llvm_ir
from tir_mlir.passes.lowering.affine_to_scf import AffineToScf
from tir_mlir.passes.lowering.alias_scopes import AliasScopes, BufferTags
from tir_mlir.passes.lowering.alloc_check import AllocCheck
from tir_mlir.passes.lowering.alloc_limit import AllocLimit
from tir_mlir.passes.lowering.bool_buffers import BoolBuffersToI8
from tir_mlir.passes.lowering.compact_buffers import CompactBuffers
from tir_mlir.passes.lowering.extern_calls import ExternCalls
from tir_mlir.passes.lowering.float_min_max import FloatMinMax
from tir_mlir.passes.lowering.bounds_check import BoundsCheck
from tir_mlir.passes.lowering.packed_calls import PackedCalls
from tir_mlir.passes.lowering.indirect_check import IndirectCheck, IndirectMark
from tir_mlir.passes.lowering.jam_loops import JamCarriedLoops
from tir_mlir.passes.lowering.loop_interchange import LoopInterchange
from tir_mlir.passes.lowering.prefetch import Prefetch, PrefetchTargets
from tir_mlir.passes.lowering.scalar_replace import ScalarReplace
from tir_mlir.passes.lowering.safe_division import SafeDivision
from tir_mlir.passes.lowering.scf_to_llvm import ScfToLLVM
from tir_mlir.passes.lowering.stack_budget import StackBudget
from tir_mlir.passes.lowering.static_bounds import StaticBounds
from tir_mlir.passes.lowering.storage_align import StorageAlign
from tir_mlir.passes.lowering.stride_prefetch import StridePrefetch
from tir_mlir.passes.lowering.tir_to_affine import TirToAffine
from tir_mlir.passes.lowering.unroll import UnrollLoops
from tir_mlir.passes.lowering.unroll_for_vectorize import UnrollForVectorize
from tir_mlir.passes.lowering.vector_exp import VectorExp
from tir_mlir.passes.lowering.vectorize import VectorizeLoops
from tir_mlir.suggest import did_you_mean
from tir_mlir.passes.schedule.op_index import strip_handles

# Target -> the [(emit name, stage factory)] it runs; the module after a stage is what `--emit
# name` shows (None: an internal step with no emit name). The CUDA stages are imported only for a
# CUDA build: their intrinsics' registration would add ~0.1 s to every CPU build's start.
def _cpu_stages():
    return [(None, AllocLimit), (None, PrefetchTargets), (None, StorageAlign),
            (None, ExternCalls), ("affine", TirToAffine), (None, SafeDivision), (None, Prefetch),
            (None, LoopInterchange), (None, UnrollLoops), (None, UnrollForVectorize),
            (None, CompactBuffers), (None, StackBudget),
            (None, BoolBuffersToI8), (None, VectorizeLoops), (None, FloatMinMax),
            (None, VectorExp), (None, AffineToScf), (None, IndirectCheck),
            (None, ScalarReplace), (None, JamCarriedLoops),
            ("scf", StridePrefetch), (None, PackedCalls),
            (None, AllocCheck), (None, BufferTags),
            (None, ScfToLLVM), ("llvm-dialect", AliasScopes)]


def _cuda_stages():
    from tir_mlir.passes.lowering.gpu_allreduce import GpuLowerAllReduce
    from tir_mlir.passes.lowering.gpu_barriers import GpuInsertBarriers
    from tir_mlir.passes.lowering.gpu_bindings import GpuCheckBindings
    from tir_mlir.passes.lowering.gpu_buffers import GpuPlaceBuffers
    from tir_mlir.passes.lowering.gpu_cross_thread import GpuLowerCrossThreadReduction
    from tir_mlir.passes.lowering.gpu_host import GpuHostToLLVM
    from tir_mlir.passes.lowering.gpu_launch import GpuMapThreads
    from tir_mlir.passes.lowering.gpu_limits import GpuLimits
    from tir_mlir.passes.lowering.gpu_nvvm import GpuToBinary
    from tir_mlir.passes.lowering.gpu_outline import GpuOutline
    from tir_mlir.passes.lowering.gpu_scopes import GpuBufferScopes
    from tir_mlir.passes.lowering.gpu_vthread import GpuVirtualThreads
    from tir_mlir.passes.lowering.gpu_wmma import GpuLowerWmma
    return [(None, GpuVirtualThreads), (None, GpuCheckBindings),
            (None, GpuLowerCrossThreadReduction), (None, GpuBufferScopes),
            ("affine", TirToAffine), (None, SafeDivision), (None, CompactBuffers),
            (None, BoolBuffersToI8), (None, GpuMapThreads), (None, GpuLowerAllReduce),
            (None, GpuInsertBarriers), (None, GpuLowerWmma), (None, GpuPlaceBuffers),
            (None, GpuLimits), ("scf", AffineToScf), ("gpu", GpuOutline),
            ("gpu-binary", GpuToBinary), ("llvm-dialect", GpuHostToLLVM)]


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
    return (["tir"] + [name for name, _ in TARGETS[t]() if name] + list(TEXT_EMITS)
            + list(TARGET_TEXT_EMITS.get(t, ())))


def _target(target: str) -> str:
    t = str(target).split()[0]
    t = TARGET_ALIASES.get(t, t)
    if t not in TARGETS:
        known = ["llvm", *TARGETS, *(a for a in TARGET_ALIASES if a != "llvm")]
        raise BuildError(f"unknown target {target!r}{did_you_mean(t, known)}; known: "
                         f"{', '.join(known)}")
    return t


@serialized
def lower(module: ir.Module, target="cpu", emit="llvm-dialect", debug=False,
          on_stage=None, static_bounds=True, rewrite_after=None) -> ir.Module:
    """A lowered copy of `module` (left untouched), stopped after stage `emit`;
    `on_stage(name, module)` sees the module after every stage (--print-ir-after-all).
    `static_bounds=False` skips the refusal of provably out-of-bounds accesses (a symbolic
    program specialised at probe sizes that are not its real ones: script/generic_kernel.py).
    `rewrite_after=(emit name, fn)` calls `fn(module)` after that stage, before the next one
    (script/dynamic_kernel.py makes a probe's scf-stage module size-generic there)."""
    stages = TARGETS[_target(target)]()
    if emit not in ["tir"] + [n for n, _ in stages if n]:
        raise BuildError(f"unknown stage {emit!r}; choose from {emits(target)}")
    with get_context(), module.operation.location:
        out = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
        strip_handles(out.operation)    # a schedule's handles never reach a lowering decision
        if emit == "tir":
            return out
        # A debug build checks every access at run time; a plain one refuses those provably
        # out of bounds (static_bounds.py) and, on the CPU, checks at run time those whose
        # index is read from memory (indirect_check.py).
        for check in [BoundsCheck] if debug else [StaticBounds] * static_bounds + (
                [IndirectMark] if _target(target) == "cpu" else []):
            check()(out)
            if on_stage is not None:
                on_stage(check.name, out)
        for name, stage in stages:
            # A stage with options from the target string (`cuda -arch=sm_80`) has for_target.
            (stage.for_target(target) if hasattr(stage, "for_target") else stage())(out)
            try:
                out.operation.verify()
            except ir.MLIRError as e:
                raise BuildError(f"stage {stage.name} produced invalid IR: {e}") from None
            if on_stage is not None:
                label = getattr(stage, "name", stage.__name__)
                on_stage(f"{label} (--emit {name})" if name else label, out)
            if rewrite_after is not None and name == rewrite_after[0]:
                rewrite_after[1](out)
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
