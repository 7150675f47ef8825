"""Recursion over deeply nested programs (a 5,000-term sum, `T.max` nested hundreds deep).

The printer and region analysis recurse over expression trees. Python 3.11+ runs Python-to-
Python calls without growing the C stack, so a higher recursion limit is safe for them;
beyond it, the program is refused with a TIRError instead of a RecursionError traceback.
"""

import contextlib
import sys

from tir_mlir.errors import TIRError

LIMIT = 30_000


@contextlib.contextmanager
def deep_recursion(what: str):
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, LIMIT))
    try:
        yield
    except RecursionError:
        raise TIRError(f"cannot {what}: an expression is nested too deeply") from None
    finally:
        sys.setrecursionlimit(old)
