"""Which functions keep the target's widest vector register legal for LLVM's loop vectorizer:
those that leave it a loop stepping through a row s elements at a time (`strided_loop`).

`scf-to-llvm` gives every function `min-legal-vector-width` (cpu_target.py): the widest vector
it spells out, so that the wide vectors LLVM's SLP vectorizer makes up split into the CPU's
preferred 256 bits. LLVM's loop vectorizer reads a strided loop's accesses as interleaved
groups (s vectors loaded whole, then shuffled apart) and prices each group by the registers it
legalizes into: capped at 256 bits, a stride-2 group of 8 floats costs two loads and twice the
shuffles, and LLVM takes 4 lanes of xmm where TVM's functions, which say no width, get a ymm's
8 (one zmm load and two permutes per group; issue 28's 0412 of seed 424113201, a 3x3 average
pool over column pairs, 1.6x TVM). A function with such a loop says the widest register
instead (`interleaved_bits`). Only loops LLVM's vectorizer does take count: where an inner loop
stays rolled, or a condition makes LLVM unswitch the loop, the wider width would only let
SLP's vectors grow (0709 of seed 1060771774, a max pool, 1.34x slower that way).
"""

from typing import Optional

from mlir import ir

from tir_mlir.analysis.linear import Linear, value_linear
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.passes.lowering.common import (
    UNROLLED_BAND_OPS,
    defined_outside,
    loop_iv,
    unrolled_ops,
)
from tir_mlir.passes.lowering.cpu_target import VECTORIZE_WIDTH


def interleaved_bits(func: ir.Operation, register_bits: int) -> int:
    """`register_bits` when `func` holds a `strided_loop`, else 0."""
    loops = [op for op in walk_all(func) if op.name == "scf.for"]
    return register_bits if any(strided_loop(op, register_bits) for op in loops) else 0


def strided_loop(loop: ir.Operation, register_bits: int) -> bool:
    """Whether LLVM's loop vectorizer gets `loop` (an `scf.for`) with an access that steps s
    elements along a row per iteration, 1 < s < the lanes of a `register_bits` register (an
    interleaved group; farther apart each lane is a gather, gather_loops.py). LLVM vectorizes
    innermost loops once it has unrolled the loops of constant trip count inside: the loop has
    no `vectorize disable` or `unroll` annotation, only such loops inside, each small enough
    for LLVM to unroll whole (`unrolled_ops`), no vector op and no `scf.if` (LLVM unswitches
    a loop around a condition, or if-converts it, and vectorizes few of those). The access: a
    `memref.load` or `memref.store` on a memref of unit innermost stride whose last index is
    a linear form with coefficient s of the IV, its other indices without it."""
    if "loop_annotation" in loop.attributes:
        if not VECTORIZE_WIDTH.search(str(loop.attributes["loop_annotation"])):
            return False
    accesses = []
    for op in walk_all(loop):
        if op.name.startswith("vector.") or op.name in ("scf.if", "scf.parallel", "scf.while"):
            return False
        if op.name == "scf.for" and unrolled_ops(op) > UNROLLED_BAND_OPS:
            return False
        if op.name in ("memref.load", "memref.store"):
            accesses.append(op)
    iv = loop_iv(loop)

    def leaf(value):
        if value == iv or isinstance(value.owner, ir.Block) or defined_outside(value, loop):
            return Linear({value: 1})
        return None  # computed in the loop otherwise (a division, a load): no form

    forms: dict = {}
    for op in accesses:
        memref = op.operands[0 if op.name == "memref.load" else 1]
        indices = list(op.operands)[1 if op.name == "memref.load" else 2 :]
        mtype = ir.MemRefType(memref.type)
        if not indices or not _unit_last_stride(mtype):
            continue
        steps = [_iv_step(v, iv, leaf, forms) for v in indices]
        if None in steps or any(steps[:-1]):
            continue
        step, bits = abs(steps[-1] or 0), getattr(mtype.element_type, "width", 0)
        if bits and 1 < step < register_bits // bits:
            return True
    return False


def _iv_step(index, iv, leaf, forms) -> Optional[int]:
    """The coefficient of `iv` in the linear form of `index`; None without a form."""
    form = value_linear(index, leaf, forms)
    return None if form is None else form.terms.get(iv, 0)


def _unit_last_stride(mtype: ir.MemRefType) -> bool:
    strides, _ = mtype.get_strides_and_offset()
    return bool(strides) and strides[-1] == 1
