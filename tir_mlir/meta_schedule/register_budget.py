"""The register budget of a CPU target's multi-level tiles (Ansor's register-tile rule).

A block tiled by MultiLevelTiling (annotated `meta_schedule.tiling_structure`) accumulates the
tile of its spatial loops below its innermost reduction loop in registers: with "SSRSRS", the
innermost spatial level. That tile takes product(outer extents) x ceil(innermost extent /
lanes) vector registers, the innermost loop being the one vectorized. A tile larger than the
register file minus what the operands need (a broadcast input and a vector of the other per
FMA) spills every accumulator on every reduction step: such candidates run several times
slower, and when most wide tiles the search measures spill, its cost model learns that wide
tiles are slow (issue 28's conv2d: 56-lane rows under 4 filters ran at torch's speed, but 19 of
the 22 wide rows a tune drew spilled). The search therefore draws its random samples, and keeps
its mutants, only within the budget: the sampler's distribution conditioned on fitting.
"""

import math
from dataclasses import dataclass
from typing import List, Optional, Tuple

from mlir import ir

from tir_mlir.analysis import buffer_util, structure
from tir_mlir.context import get_context
from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.dtypes import dtype_of, numpy_dtype
from tir_mlir.ir.ir_walk import walk_all
from tir_mlir.meta_schedule.schedule_rule.multi_level_tiling import TILING_STRUCTURE
from tir_mlir.meta_schedule.target import Target
from tir_mlir.passes.lowering.cpu_model import cpu_model

# The share of the vector registers a tile's accumulators may take: the rest hold the FMA's
# operands (3/4: 24 of AVX-512's 32 zmm, 12 of AVX2's 16 ymm, the 6 x 16 GEMM kernels' 12).
ACCUMULATOR_SHARE = 3 / 4
# The least share of that budget a packing point's register tile takes (`RegisterBudget.packs`):
# half, so that its accumulators are enough independent chains to cover the FMA latency.
PACKING_SHARE = 1 / 2


@dataclass(frozen=True)
class RegisterBudget:
    registers: int  # vector registers a tiled block's accumulators may take
    vector_bits: int  # the widest vector register

    @staticmethod
    def of_target(target) -> Optional["RegisterBudget"]:
        """The budget of a CPU target; None for a GPU (VerifyGPUCode bounds its registers)."""
        t = target if isinstance(target, Target) else Target(target)
        if t.is_gpu:
            return None
        model = cpu_model(str(t))
        return RegisterBudget(int(model.vector_registers * ACCUMULATOR_SHARE), model.vector_bits)

    def lanes(self, dtype: str) -> int:
        try:
            bits = numpy_dtype(dtype).itemsize * 8
        except (KeyError, TypeError, ValueError):
            bits = 32
        return max(1, self.vector_bits // bits)

    def tiles(self, sch) -> List[Tuple[str, int]]:
        """(block name, accumulator registers) of every block of `sch` tiled by
        MultiLevelTiling whose register tile has constant extents. Read from the IR, not
        through Schedule queries: get_block/get_loops would be recorded in the trace."""
        out = []
        with get_context():
            for func in sch.mod.functions.values():
                for op in walk_all(func):
                    if structure.is_block(op) and TILING_STRUCTURE in Block(op).annotations:
                        registers = self._registers(op)
                        if registers is not None:
                            out.append((Block(op).name, registers))
        return out

    def _registers(self, op) -> Optional[int]:
        loops = structure.enclosing_loops(op)
        kinds = [structure.loop_iter_type(lp) for lp in loops]
        if "R" not in kinds:
            return None
        last_r = max(k for k, kind in enumerate(kinds) if kind == "R")
        extents = [Loop(lp).extent for lp in loops[last_r + 1 :]]
        sizes = [e for e in extents if isinstance(e, int)]
        if len(sizes) < len(extents):
            return None  # a symbolic extent
        if not sizes:
            return 1
        written = ir.MemRefType(buffer_util.block_writes(Block(op))[0].type)
        lanes = self.lanes(dtype_of(written.element_type))
        return math.prod(sizes[:-1]) * -(-sizes[-1] // lanes)

    def admits(self, sch) -> bool:
        """True when every tiled block's accumulators fit the budget."""
        return all(regs <= self.registers for _, regs in self.tiles(sch))

    def packs(self, sch) -> bool:
        """True when `sch` is a packing point: it fills the registers (`fills`) and every
        tiled block accumulates over its whole reduction (each reduction loop outside the
        innermost group of them runs once): BLAS's form, the operand panels streamed through
        a register tile that is stored once."""
        tiled = self._tiled(sch)
        with get_context():
            return bool(tiled) and all(self._fills(op) and _whole(op) for op in tiled)

    def fills(self, sch) -> bool:
        """True when `sch` has a tiled block and every tiled block's register tile takes
        between PACKING_SHARE of the budget and all of it, its innermost (vectorized) loop
        a vector or more."""
        tiled = self._tiled(sch)
        with get_context():
            return bool(tiled) and all(self._fills(op) for op in tiled)

    @staticmethod
    def _tiled(sch) -> list:
        with get_context():
            return [
                op
                for func in sch.mod.functions.values()
                for op in walk_all(func)
                if structure.is_block(op) and TILING_STRUCTURE in Block(op).annotations
            ]

    def _fills(self, op) -> bool:
        registers = self._registers(op)
        if registers is None or not PACKING_SHARE * self.registers <= registers <= self.registers:
            return False
        written = ir.MemRefType(buffer_util.block_writes(Block(op))[0].type)
        innermost = Loop(structure.enclosing_loops(op)[-1]).extent
        # (an int: _registers read every extent of the register tile as one)
        return isinstance(innermost, int) and innermost >= self.lanes(
            dtype_of(written.element_type)
        )


def _whole(op) -> bool:
    """True when the tiled block `op` runs every reduction loop outside the innermost group
    of them once."""
    loops = structure.enclosing_loops(op)
    kinds = [structure.loop_iter_type(lp) for lp in loops]
    first = max(k for k, kind in enumerate(kinds) if kind == "R")
    while first > 0 and kinds[first - 1] == "R":
        first -= 1
    return all(Loop(lp).extent == 1 for k, lp in enumerate(loops[:first]) if kinds[k] == "R")
