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


def _parent_death_signal(sig: int) -> bool:
    """Linux's PR_SET_PDEATHSIG: `sig` comes to this process when its parent ends. False where
    it is not available (another system, or prctl refused)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _die_with_parent(parent: int) -> None:
    """End this worker when the tuner that started it ends, even by kill -9 while a task
    hangs (the worker has a session of its own, so no signal to the tuner's group reaches it):
    Linux's PR_SET_PDEATHSIG, and a watchdog thread elsewhere (or if prctl is refused)."""
    if parent <= 1:
        return
    if _parent_death_signal(signal.SIGKILL):
        if os.getppid() != parent:  # it died before prctl took effect
            os._exit(1)
        return

    def watch():
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _guard_group() -> None:
    """Fork a guard that kills this worker's process group once the worker has ended, however
    it ended (the tuner died, a crash, the end of its input), so that nothing a task started
    outlives it: a compiler it ran, or a forked copy of the worker (mlir_guard parses untrusted
    text in one), which shows the worker's command line and does not inherit the worker's
    parent-death signal. Only a worker that leads its own group (the pool starts it in a
    session of its own) has one: killing the group of a shell that ran it would be wrong."""
    worker = os.getpid()
    if os.getpgrp() != worker or os.fork() != 0:
        return
    try:
        os.close(0)  # the tuner reads the end of the worker's pipes as its death
        os.close(1)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # kept pending for sigwait
        if _parent_death_signal(signal.SIGTERM):
            if os.getppid() == worker:
                signal.sigwait({signal.SIGTERM})
        else:
            while os.getppid() == worker:
                time.sleep(1.0)
        os.killpg(0, signal.SIGKILL)  # (the guard too)
    finally:
        os._exit(0)


def main(preload):
    _guard_group()  # (before _die_with_parent's watchdog thread: a fork copies one thread)
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
