"""The worker process of `ProcessPool`: imports the modules named on its command line, says
it is ready (one byte), then reads pickled `("module:function", args)` tasks from stdin, runs
each and writes back `("ok", result)` or `("error", message)`.

The protocol uses the original stdout; fd 1 is pointed at stderr so that anything a task
prints (compiler diagnostics, generated code) cannot corrupt it."""
import importlib
import os
import pickle
import struct
import sys

_HEADER = struct.Struct("<Q")


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


def main(preload):
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    for module in preload:
        importlib.import_module(module)
    out.write(b"R")                   # ready: tasks are timed from here on
    out.flush()
    inp = sys.stdin.buffer
    while True:
        header = _read(inp, _HEADER.size)
        if header is None:
            return
        fn, args = pickle.loads(_read(inp, _HEADER.unpack(header)[0]))
        try:
            reply = ("ok", _resolve(fn)(*args))
        except Exception as e:  # noqa: BLE001 - every failure is reported, the worker goes on
            reply = ("error", f"{type(e).__name__}: {getattr(e, 'message', None) or e}")
        data = pickle.dumps(reply)
        out.write(_HEADER.pack(len(data)) + data)
        out.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
