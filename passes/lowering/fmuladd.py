"""Stage `fmuladd` (CPU, LLVM dialect, after `scf-to-llvm`): a contracted multiply feeding only a
contracted add becomes one `llvm.intr.fmuladd`, the form TVM's code generator emits.

    %p = llvm.fmul %a, %b {contract}            %s = llvm.intr.fmuladd(%a, %b, %c)
    %s = llvm.fadd %c, %p {contract}     =>

The numbers do not change: both forms let LLVM fuse or not. What changes is what LLVM's
IR-level cost models see. They price `fmul` + `fadd` as two operations although the backend
fuses them into one FMA, so the SLP vectorizer finds it worth packing a tile of scalar
accumulators into one vector with its operands gathered lane by lane: a conv tile of 8 scalar
accumulators carried over the reduction (8 independent FMA chains) became one ymm chain fed by
8 scalar loads and 7 lane inserts per step, slower (benchmarks/README.md, "session 9, stage
figures"). Priced as one FMA per lane, the gathers cost more than they save and the chains stay
scalar, as on TVM's IR.

Only an add/fadd pair whose product has no other use, both with `contract` (affine-to-scf
leaves an add without it where mul + add beats an FMA), on floats or vectors of floats.
"""

from mlir import ir

from tir_mlir.ir.ir_walk import walk_all

CONTRACT = "contract"


class FmulAdd:
    name = "fmuladd"

    def __call__(self, module: ir.Module):
        adds = [o for o in walk_all(module.operation) if o.name == "llvm.fadd"]
        for add in adds:
            fused = _fusable(add)
            if fused is None:
                continue
            mul, addend = fused
            a, b = mul.operands
            new = ir.Operation.create(
                "llvm.intr.fmuladd",
                results=[add.results[0].type],
                operands=[a, b, addend],
                loc=add.location,
                ip=ir.InsertionPoint(add),
            )
            add.results[0].replace_all_uses_with(new.results[0])
            add.erase()
            mul.erase()


def _fusable(add):
    """(the fmul, the other addend) when `add` and the product it adds qualify; else None."""
    if not _contract(add):
        return None
    for k, v in enumerate(add.operands):
        owner = v.owner
        if isinstance(owner, ir.Block):
            continue
        mul = owner.operation
        if (
            mul.name == "llvm.fmul"
            and _contract(mul)
            and mul.parent == add.parent
            and _single_use(v)
        ):
            return mul, add.operands[1 - k]
    return None


def _contract(op) -> bool:
    if "fastmathFlags" not in op.attributes:
        return False
    return CONTRACT in str(op.attributes["fastmathFlags"])


def _single_use(value) -> bool:
    return sum(1 for _ in value.uses) == 1
