"""Reading the run-time allocation check of compiled code (passes/lowering/alloc_check.py):
after a call, a non-zero status global names the site table's line of the buffer whose
allocation failed; the call then raises AllocationError (a MemoryError) and the status is reset.
"""

import ctypes
from typing import Optional

from tir_mlir.errors import AllocationError, SourceLoc
from tir_mlir.passes.lowering.alloc_check import ADDRESS, SITES, STATUS


class AllocStatus:
    """The status global `STATUS` (LENGTH i64s, the first one the failing site + 1) and the
    site table `SITES` of compiled code; `error` makes the exception."""

    STATUS, SITES, LENGTH = STATUS, SITES, 1

    def __init__(self, status_address: int, sites):
        self.status = (ctypes.c_int64 * self.LENGTH).from_address(status_address)
        self.sites = sites

    @classmethod
    def of(cls, backend) -> Optional["AllocStatus"]:
        """The check of a loaded backend, or None when its code has no such status."""
        getter = getattr(backend, "getter", None)
        status, sites = (
            (getter(cls.STATUS + ADDRESS), getter(cls.SITES + ADDRESS)) if getter else (None, None)
        )
        if status is None or sites is None:
            return None
        table = ctypes.string_at(sites()).decode(errors="replace")
        return cls(status(), table.split("\n"))

    def checked(self, call):
        """`call`, raising AllocationError after a run whose allocation failed."""

        def run():
            call()
            self.raise_failure()

        if hasattr(call, "repeat"):  # time_calls' native loop: checked after the loop
            run.repeat = lambda n: (call.repeat(n), self.raise_failure())
        run.keep = call
        return run

    def raise_failure(self):
        site = self.status[0]
        if not site:
            return
        values = list(self.status)
        ctypes.memset(self.status, 0, ctypes.sizeof(self.status))
        raise self.error(self.sites[site - 1] if 0 < site <= len(self.sites) else "", values)

    @staticmethod
    def error(site: str, values) -> Exception:
        name, size, loc = (site.split("|") + ["?", "0", "?"])[:3] if site else ("?", "0", "?")
        src = SourceLoc.parse(loc)
        nbytes = int(size) if size.isdigit() else 0
        amount = (
            f"{nbytes} bytes, {nbytes / 2**30:.2f} GiB"
            if size.isdigit()
            else "its size is symbolic"
        )
        return AllocationError(
            f"out of memory: cannot allocate buffer {name!r} "
            f"({amount}) at run time; the code that uses it did not run",
            src,
            buffer=name,
            nbytes=nbytes,
        )
