"""The program at an emitted stage, in the form upstream MLIR tools take it: what
`tir-mlir lower --emit affine|scf|llvm-dialect` prints (recipes in docs/handoff.md).

Our own pipeline keeps a TensorIR loop's kind as a discardable `tir.kind` on `affine.for` until
`affine-to-scf` (every affine-level stage reads it there), and upstream tools drop discardable
attributes. So the hand-off makes the kinds real ops where the pipeline has not yet:

    stage         parallel                     vectorized / unroll
    affine        affine.parallel              vector ops / unrolled, or scf.for + a hint
    scf           scf.parallel                 vector ops / unrolled, or scf.for + a hint
    llvm-dialect  omp.parallel + omp.wsloop    LLVM vector ops / llvm.loop metadata

(the hint: `#llvm.loop_annotation`, which `convert-scf-to-cf` carries to LLVM). At the affine
stage `unroll-loops` and `vectorize-loops` run as in the pipeline (their output is
affine-level IR); a loop left with a hint becomes an `scf.for` there, since `lower-affine`
keeps no loop attribute, unless an affine op in it needs its IV as an affine dim (an
`affine.if` on it, a loop bounded by it): then it is a plain `affine.for`. Functions get
`llvm.emit_c_interface` (a C caller's `_mlir_ciface_<name>`, docs/handoff.md) and their
`llvm.noalias` arguments at every stage. Then every remaining `tir.*` attribute is dropped and
the module is canonicalized and CSE'd.
"""

from mlir import ir
from mlir.dialects import affine

from tir_mlir.context import get_context, serialized
from tir_mlir.dialect.ops import Loop
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.affine_to_scf import function_attrs
from tir_mlir.passes.lowering.common import build_error, functions, move_body, run_pipeline
from tir_mlir.passes.lowering.pipeline import _target, emit_text, lower
from tir_mlir.passes.lowering.stages import instance

STAGES = ("affine", "scf", "llvm-dialect")
CLEANUP = "canonicalize,cse"
# Loop kinds the affine hand-off turns into ops; any other (a thread binding) has no CPU meaning.
CPU_KINDS = ("serial", "parallel", "vectorized", "unroll")


@serialized
def handoff(module: ir.Module, stage: str, target="cpu", debug=False, on_stage=None) -> ir.Module:
    """A copy of `module` lowered to `stage` (one of STAGES) in its hand-off form."""
    if stage not in STAGES:
        raise ValueError(f"no hand-off form for stage {stage!r}; one of {STAGES}")
    out = lower(module, target, stage, debug, on_stage)
    with get_context(), out.operation.location:
        if stage == "affine" and _target(target) == "cpu":
            for name in ("unroll-loops", "vectorize-loops"):
                instance(name, target)(out)
            for f in functions(out):
                to_scf = instance("affine-to-scf", target)
                for op in [o for o in walk_all(f) if o.name == "affine.for"]:
                    _real_kind(op, to_scf)
                function_attrs(f)
        _drop_tir_attrs(out.operation)
        run_pipeline(out, CLEANUP, f"cleaning up the {stage} stage")
    return out


def handoff_text(module: ir.Module, emit: str, target="cpu", debug=False, on_stage=None) -> str:
    """`emit_text`, with the MLIR stages of STAGES in their hand-off form (CPU target)."""
    if emit in STAGES and _target(target) == "cpu":
        return str(handoff(module, emit, target, debug, on_stage))
    return emit_text(module, emit, target, debug, on_stage)


def _real_kind(op, to_scf):
    """A parallel `affine.for` becomes `affine.parallel` (same bounds, step and body); one whose
    kind is still a hint for LLVM (a vectorized loop `vectorize-loops` refused, an unroll left
    as a hint) becomes the `scf.for` with `#llvm.loop_annotation` that `affine-to-scf` makes of
    it, when no affine op inside needs its IV as an affine dim (else a plain loop)."""
    kind = Loop(op).kind
    if kind not in CPU_KINDS:
        raise build_error(op, f"loop kind '{kind}' is not supported by this target")
    if kind in ("vectorized", "unroll"):
        if not any(
            o.name.startswith("affine.") and o.name not in ("affine.apply", "affine.yield")
            for o in walk_all(op)
        ):
            to_scf.lower_for(op)
        return
    if kind != "parallel":
        return
    lb = ir.AffineMapAttr(op.attributes["lowerBoundMap"]).value
    ub = ir.AffineMapAttr(op.attributes["upperBoundMap"]).value
    operands = list(op.operands)  # the lower bound's, then the upper bound's
    one_group = ir.Attribute.parse("dense<1> : tensor<1xi32>")  # one bound expression each
    steps = ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), Loop(op).step)])
    new = affine.AffineParallelOp(
        [],
        ir.ArrayAttr.get([]),
        ir.AffineMapAttr.get(lb),
        one_group,
        ir.AffineMapAttr.get(ub),
        one_group,
        steps,
        operands,
        loc=op.location,
        ip=ir.InsertionPoint(op),
    )
    body = new.regions[0].blocks.append(ir.IndexType.get())
    with ir.InsertionPoint(body):
        term = affine.AffineYieldOp([], loc=op.location)
    old = op.regions[0].blocks[0]
    old.arguments[0].replace_all_uses_with(body.arguments[0])
    move_body(old, term.operation)
    op.erase()


def _drop_tir_attrs(top):
    """Remove every `tir.*` / `tir_mlir.*` attribute: on ops, the module, function arguments."""

    def visit(op):
        attrs = op.attributes
        for a in [a for a in attrs if a.startswith(("tir.", "tir_mlir."))]:
            del attrs[a]
        if op.name == "func.func" and "arg_attrs" in attrs:
            attrs["arg_attrs"] = ir.ArrayAttr.get(
                [
                    ir.DictAttr.get(
                        {x.name: x.attr for x in ir.DictAttr(d) if not x.name.startswith("tir.")}
                    )
                    for d in ir.ArrayAttr(attrs["arg_attrs"])
                ]
            )
        return ir.WalkResult.ADVANCE

    top.walk(visit, ir.WalkOrder.PRE_ORDER)
