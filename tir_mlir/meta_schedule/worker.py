"""The worker process of `ProcessPool`: imports the modules named on its command line, says
it is ready (one byte), then reads pickled `("module:function", args)` tasks from stdin, runs
each and writes back `("ok", result)` or `("error", message)`.

The protocol uses the original stdout; fd 1 is pointed at stderr so that anything a task
prints (compiler diagnostics, generated code) cannot corrupt it."""

import ctypes
import importlib
import os
import pickle
import signal
import struct
import sys
import threading
import time

_HEADER = struct.Struct("<Q")
_PR_SET_PDEATHSIG = 1
PARENT_ENV = "TIR_MLIR_POOL_PARENT"  # the pid of the process that started the worker


def _read(f, n):
    buf = b""
    while len(buf) < n:
        chunk = f.read(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def _resolve(ref: str):
    module, name = ref.split(":")
    return getattr(importlib.import_module(module), name)


def _die_with_parent(parent: int) -> None:
    """End this worker when the tuner that started it ends, even by kill -9 while a task
    hangs (the worker has a session of its own, so no signal to the tuner's group reaches it):
    Linux's PR_SET_PDEATHSIG, and a watchdog thread elsewhere (or if prctl is refused)."""
    if parent <= 1:
        return
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
                if os.getppid() != parent:  # it died before prctl took effect
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass

    def watch():
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def main(preload):
    _die_with_parent(int(os.environ.get(PARENT_ENV, "0") or 0))
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    for module in preload:
        importlib.import_module(module)
    out.write(b"R")  # ready: tasks are timed from here on
    out.flush()
    inp = sys.stdin.buffer
    while True:
        header = _read(inp, _HEADER.size)
        if header is None:
            return
        task = _read(inp, _HEADER.unpack(header)[0])
        if task is None:  # (the tuner went away while sending it)
            return
        fn, args = pickle.loads(task)
        try:
            reply = ("ok", _resolve(fn)(*args))
        except Exception as e:  # noqa: BLE001 - every failure is reported, the worker goes on
            reply = ("error", f"{type(e).__name__}: {getattr(e, 'message', None) or e}")
        data = pickle.dumps(reply)
        out.write(_HEADER.pack(len(data)) + data)
        out.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
