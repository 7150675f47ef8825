"""Stage `scf-to-llvm` (CPU): the upstream conversion pipeline from scf/arith/math/memref to the
llvm dialect. `scf.parallel` becomes OpenMP (`omp.parallel` + `omp.wsloop`) with no thread count:
libomp's, set at run time (the runtime links libomp when the lowered module calls `__kmpc_*`);
parallel loops too small for a fork run serially; a parallel body's floor divisions of
never-negative indices truncate (parallel_floordiv.py: the outlined body loses its IV's range).
The result carries the target's triple, data layout, CPU and features (cpu_target.py)."""

from mlir import ir

from tir_mlir.errors import BuildError
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.buffer_roots import root
from tir_mlir.passes.lowering.common import functions, run_pipeline, scalar_bits
from tir_mlir.passes.lowering.cpu_model import cpu_model
from tir_mlir.passes.lowering.cpu_target import cpu_target
from tir_mlir.passes.lowering.interleaved import interleaved_bits
from tir_mlir.passes.lowering.parallel_floordiv import truncate_nonnegative_floordivs
from tir_mlir.passes.lowering.small_parallel import serialize_small_parallel_loops

TO_OPENMP = "convert-scf-to-openmp,canonicalize,cse"
PIPELINE = ",".join(
    [
        "expand-strided-metadata",
        "lower-affine",  # the offset arithmetic expand-strided-metadata emits (subviews)
        "convert-vector-to-scf",
        "convert-scf-to-cf",
        "convert-vector-to-llvm",
        "finalize-memref-to-llvm",
        # bf16 arithmetic and f16/bf16 math run in f32 (the x86 backend aborts on bf16 fadd).
        "func.func(math-extend-to-supported-types{extra-types=f16},"
        "arith-emulate-unsupported-floats{source-types=bf16 target-type=f32})",
        "convert-math-to-llvm",
        "convert-math-to-libm",
        # math-to-libm calls a function per lane of a vector op (erf, f64 tanh) through
        # vector.extract/insert, which would otherwise reach the translation to LLVM IR unlowered.
        "convert-vector-to-llvm",
        "arith-expand",
        "convert-arith-to-llvm",
        "convert-index-to-llvm",
        "convert-ub-to-llvm",
        "convert-cf-to-llvm",
        "convert-openmp-to-llvm",
        "convert-func-to-llvm",
        "reconcile-unrealized-casts",
    ]
)


class ScfToLLVM:
    name = "scf-to-llvm"

    def __init__(self, target="llvm"):
        self.target = cpu_target(target)
        self.register_bits = cpu_model(target).vector_bits

    @classmethod
    def for_target(cls, target):
        return cls(target)

    def __call__(self, module: ir.Module):
        noalias = [f for f in functions(module) if _has_noalias_args(f)]
        names = {ir.StringAttr(f.attributes["sym_name"]).value for f in noalias}
        serialize_small_parallel_loops(module)
        truncate_nonnegative_floordivs(module)
        self.target.annotate(module, lambda f: interleaved_bits(f, self.register_bits))
        run_pipeline(module, TO_OPENMP, "LLVM lowering")
        for f in functions(module):
            _guided_when_sized_at_run_time(f)
            _dissolve_alloca_scopes(f)
            _align_allocations(f)
        run_pipeline(module, PIPELINE, "LLVM lowering")

        def mark(op):  # (walk: iterating the body would import the llvm dialect's Python module)
            if op.name == "llvm.func" and ir.StringAttr(op.attributes["sym_name"]).value in names:
                _mark_aligned_pointers_noalias(op)
            return ir.WalkResult.SKIP if op.name == "llvm.func" else ir.WalkResult.ADVANCE

        module.operation.walk(mark, ir.WalkOrder.PRE_ORDER)
        _stable_assert_names(module)


def _guided_when_sized_at_run_time(f):
    """A parallel loop over a size known only at run time (a symbolic kernel's tiles) hands out
    its iterations guided (chunks shrinking from trips / threads) instead of in one contiguous
    chunk per thread: at a size the tiles do not divide, the last tile row's jobs are partial,
    and contiguous chunks gave them all to the last thread while the first ran full tiles."""
    for op in walk_all(f):
        if op.name != "omp.loop_nest":
            continue
        wsloop = op.parent
        if wsloop is None or wsloop.name != "omp.wsloop":
            continue
        if any(_constant_index(v) is None for v in op.operands):
            wsloop.attributes["schedule_kind"] = ir.Attribute.parse("#omp<schedulekind guided>")


def _constant_index(v: ir.Value):
    owner = v.owner
    if isinstance(owner, ir.Block):  # a function argument
        return None
    op = owner.operation
    return op.attributes["value"] if op.name == "arith.constant" else None


def _stable_assert_names(module: ir.Module):
    """`convert-cf-to-llvm` names the message global of each `cf.assert` (a symbolic
    function's `tir.match_shape` checks) with a counter that lives as long as the process: the
    same program would lower to a different text each time, and miss the compile cache. The
    globals are renamed in module order."""
    renames = {}

    def rename(op):
        if op.name == "llvm.mlir.global":
            name = ir.StringAttr(op.attributes["sym_name"]).value
            if name.startswith("assert_msg"):
                renames[name] = f"tir_assert_msg_{len(renames)}"
                op.attributes["sym_name"] = ir.StringAttr.get(renames[name])
            return ir.WalkResult.SKIP
        if op.name == "llvm.mlir.addressof":
            name = ir.FlatSymbolRefAttr(op.attributes["global_name"]).value
            if name in renames:
                op.attributes["global_name"] = ir.FlatSymbolRefAttr.get(renames[name])
        return ir.WalkResult.ADVANCE

    module.operation.walk(rename, ir.WalkOrder.PRE_ORDER)


ALIGNMENT = 64
# The ops that read a vector from a buffer (operand 0), as LLVM loads once lowered (a masked
# load with a constant all-true mask folds to a plain one).
VECTOR_READS = ("vector.load", "vector.maskedload", "vector.transfer_read")


def _align_allocations(f):
    """Local and global buffers start on a cache line (TVM aligns its workspaces to 64 bytes
    too): a vector store into a stack buffer at an arbitrary 16-byte offset splits across two
    lines every time. A stack buffer that a vector of an odd lane count is loaded from starts
    on that load's smallest piece only (`_odd_lane_alignments`)."""
    odd = _odd_lane_alignments(f)
    for op in walk_all(f):
        if op.name in ("memref.alloc", "memref.alloca") and "alignment" not in op.attributes:
            op.attributes["alignment"] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(64), odd.get(op, ALIGNMENT)
            )


def _odd_lane_alignments(f) -> dict:
    """memref.alloca -> its alignment in bytes, for the stack buffers read by a vector load of
    N lanes, N not a power of two (vector<6xf32>): the size of the load's smallest
    power-of-two piece, element bytes x the lowest set bit of N (8 for vector<6xf32>).

    LLVM widens such a vector to the next power of two (8 lanes) and loads it in power-of-two
    pieces (16 + 8 bytes); where the address's known alignment allows a wider piece, it loads
    that (a 16- or 32-byte load, safe: it cannot cross a page) and computes on the lanes past
    the vector's end. Loaded from past a stack tile's end, those lanes are whatever an earlier
    call left in the frame, often denormals, and every float instruction on them takes a
    microcode assist (benchmarks/README.md: issue 28, session 11, odd lane counts). With the
    buffer's start aligned to the smallest piece, no address is aligned for a wider one: the
    pieces are exact and the added lanes zero. Not closed: InstCombine raises an alloca to the
    preferred alignment (16) of a vector of at most 16 bytes accessed at its start
    (vector<3xf32>). Heap buffers keep the cache line (their wide loads need it; only the one
    load at the buffer's end could read past it)."""
    out = {}
    for op in walk_all(f):
        if op.name not in VECTOR_READS:
            continue
        lanes = ir.VectorType(op.results[0].type).shape[-1]
        (buffer, _), _ = root(op.operands[0], [])
        if lanes & (lanes - 1) == 0 or buffer is None or isinstance(buffer.owner, ir.Block):
            continue
        alloca = buffer.owner.operation
        element = ir.MemRefType(buffer.type).element_type
        if alloca.name != "memref.alloca" or not isinstance(
            element, (ir.IntegerType, ir.FloatType)
        ):
            continue
        piece = max(1, scalar_bits(element) // 8) * (lanes & -lanes)
        out[alloca] = min(out.get(alloca, ALIGNMENT), piece)
    return out


def _dissolve_alloca_scopes(f):
    """`convert-scf-to-openmp` wraps each parallel iteration in `memref.alloca_scope`, which
    must stay one block, so `convert-scf-to-cf` breaks it as soon as the iteration holds a loop
    or an `if` (and canonicalize keeps a scope holding a call). tir-to-affine already hoisted
    the buffers to the start of the parallel body: move those allocas up to the `omp.parallel`
    region (one buffer per thread, allocated once) and inline the scope."""
    # (Native walks and an insertion point: wrapping omp ops in their Python classes would
    # import the llvm dialect's Python module, ~30 ms of a fresh process's first build.)
    for scope in [o for o in walk_all(f) if o.name == "memref.alloca_scope"]:
        if len(scope.results):
            raise BuildError("memref.alloca_scope with results cannot be lowered")
        owner = scope.parent
        while owner is not None and owner.name not in ("omp.parallel", "func.func"):
            owner = owner.parent
        assert owner is not None, "an alloca scope is inside a function"
        top = ir.InsertionPoint.at_block_begin(owner.regions[0].blocks[0])
        body = scope.regions[0].blocks[0]
        for o in list(body.operations)[:-1]:
            o = o.operation
            if o.name == "memref.alloca" and not len(o.operands):
                o.detach_from_parent()
                top.insert(o)
            else:
                o.move_before(scope)
        scope.erase()


def _has_noalias_args(f) -> bool:
    return "arg_attrs" in f.attributes and any(
        "llvm.noalias" in ir.DictAttr(d) for d in ir.ArrayAttr(f.attributes["arg_attrs"])
    )


def _mark_aligned_pointers_noalias(op):
    """func-to-llvm puts `llvm.noalias` of a memref argument on the C-interface wrapper's
    descriptor pointer only; the kernel itself needs it on each memref's aligned data pointer
    (the second of its two pointers) for LLVM to keep values in registers."""
    inputs = _llvm_inputs(str(op.attributes["function_type"]))  # (no .value: see mark())
    attrs, k = [{} for _ in inputs], 0
    while k < len(inputs) - 1:
        if inputs[k] == inputs[k + 1] == "ptr":  # (allocated, aligned) of one memref
            attrs[k + 1] = {"llvm.noalias": ir.UnitAttr.get()}
            k += 2
        else:
            k += 1
    op.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in attrs])


def _llvm_inputs(ftype: str):
    """Parameter types of an `!llvm.func<void (ptr, ptr, i64, ...)>` type."""
    params = ftype[ftype.index("(") + 1 : ftype.rindex(")")]
    return [p.strip() for p in params.split(",") if p.strip()]
