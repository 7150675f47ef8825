"""Undo TVM's SIGSEGV/SIGBUS handler in a process that imported TVM (the differential tests).

TVM's handler prints a C++ backtrace, which allocates memory: after a crash inside `malloc`
(heap corruption) it deadlocks, so a crash of the code under test looks like a hang. Python's
faulthandler (installed over the default action) prints the Python stack with async-signal-safe
calls only, then lets the signal kill the process, so the test run reports the signal."""

import ctypes
import faulthandler
import signal
import sys

_done = False


def reset_after_tvm():
    """Once TVM is imported: the default action for the fatal signals, faulthandler on top."""
    global _done
    if _done or "tvm" not in sys.modules:
        return
    libc = ctypes.CDLL(None)
    libc.signal.restype = ctypes.c_void_p
    libc.signal.argtypes = [ctypes.c_int, ctypes.c_void_p]
    for sig in (signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT):
        libc.signal(sig, None)  # SIG_DFL
    faulthandler.enable()
    _done = True
