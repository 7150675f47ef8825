"""Reading the indirect-access check of plain builds (passes/lowering/indirect_check.py): after
a call whose index read from memory fell outside its buffer (that access skipped), raise
OutOfBoundsError naming the buffer, the index and where the access is."""

from tir_mlir.errors import OutOfBoundsError, SourceLoc
from tir_mlir.passes.lowering.indirect_check import SITES, STATUS
from tir_mlir.runtime.alloc_status import AllocStatus


class IndirectStatus(AllocStatus):
    STATUS, SITES, LENGTH = STATUS, SITES, 3

    @staticmethod
    def error(site: str, values) -> Exception:
        name, kind, loc, declared = (site.split("|") + ["?"] * 4)[:4] if site else ["?"] * 4
        _, axis, index = values
        return OutOfBoundsError(
            f"out-of-bounds {kind} of buffer {name!r}: index {index} on axis {axis}, read from "
            f"memory (the access was skipped)",
            SourceLoc.parse(loc),
            buffer=name,
            index=index,
            axis=axis,
            notes=[(f"buffer {name!r} declared here", SourceLoc.parse(declared))],
        )
