"""A pool of long-lived worker processes where a task may crash, hang or raise.

Each worker is `python -m tir_mlir.meta_schedule.worker`, fed pickled `(function, args)`
pairs on its stdin. A task that raises comes back as an error message; one that runs past its
timeout, or kills its worker (a segfault or an LLVM assertion in generated or compiled code),
has its worker killed and replaced, and its future gets the reason. The tuner itself never
runs candidate code, so nothing a candidate does can take it down.
"""

import os
import pickle
import queue
import select
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future
from typing import Dict, Optional

from tir_mlir.meta_schedule.worker import PARENT_ENV

_HEADER = struct.Struct("<Q")


class TaskError(Exception):
    """A task failed; `kind` is "error" (it raised), "timeout" or "crash"."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message


# Imported by every worker before it takes a task, so that start-up (the MLIR and LLVM
# libraries load in seconds, many on a loaded machine) never counts against a task's timeout.
PRELOAD = ("tir_mlir.runtime.build",)
STARTUP_TIMEOUT_SEC = 600.0


class _Worker:
    def __init__(self, env: Dict[str, str]):
        self.errlog = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tir_mlir.meta_schedule.worker", *PRELOAD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errlog,
            env={**os.environ, **env, PARENT_ENV: str(os.getpid())},
            start_new_session=True,
        )
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None  # (both pipes)
        self.stdin, self.stdout = stdin, stdout
        self.tasks = 0
        self._read(1, time.monotonic() + STARTUP_TIMEOUT_SEC, STARTUP_TIMEOUT_SEC)  # "ready"

    def call(self, fn: str, args, timeout):
        data = pickle.dumps((fn, args))
        try:
            self.stdin.write(_HEADER.pack(len(data)) + data)
            self.stdin.flush()
        except BrokenPipeError:
            raise self._crashed() from None
        deadline = None if timeout is None else time.monotonic() + timeout
        header = self._read(_HEADER.size, deadline, timeout)
        status, value = pickle.loads(self._read(_HEADER.unpack(header)[0], deadline, timeout))
        self.tasks += 1
        if status == "ok":
            return value
        raise TaskError("error", value)

    def _read(self, n, deadline, timeout) -> bytes:
        out = self.stdout
        buf = b""
        while len(buf) < n:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([out], [], [], wait)
            if not ready:
                self.kill()
                raise TaskError("timeout", f"timed out after {timeout:g} s")
            chunk = os.read(out.fileno(), n - len(buf))
            if not chunk:
                raise self._crashed()
            buf += chunk
        return buf

    def _crashed(self) -> TaskError:
        code = self.proc.wait()
        why = (
            f"signal {signal.Signals(-code).name}"
            if code < 0 and -code in signal.valid_signals()
            else f"exit status {code}"
        )
        self.errlog.seek(0)
        tail = self.errlog.read().decode(errors="replace").strip().splitlines()[-3:]
        detail = (": " + " | ".join(tail)) if tail else ""
        return TaskError("crash", f"worker process died ({why}){detail}")

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # the worker and anything it started
            except ProcessLookupError:
                pass
            self.proc.wait()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self):
        if self.alive():
            try:
                self.stdin.close()  # the worker exits at end of input
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.kill()
        self.errlog.close()


class ProcessPool:
    """`max_workers` worker processes; `submit("module:function", args, timeout)` returns a
    concurrent.futures.Future whose exception, on failure, is a TaskError.

    `env` is added to each worker's environment; a worker is replaced after `max_tasks` tasks
    (compiled-code caches in it grow) and whenever a task kills it or times out."""

    def __init__(
        self, max_workers: int = 1, env: Optional[Dict[str, str]] = None, max_tasks: int = 100
    ):
        self.max_workers, self.env, self.max_tasks = (
            max(1, int(max_workers)),
            dict(env or {}),
            max_tasks,
        )
        self._queue = queue.Queue()
        self._threads = []
        self._workers = set()  # the live ones, for shutdown(kill=True)
        self._closed = False

    def submit(self, fn: str, args=(), timeout=None) -> Future:
        if self._closed:
            raise RuntimeError("the pool is shut down")
        if not self._threads:
            self._threads = [
                threading.Thread(target=self._serve, daemon=True) for _ in range(self.max_workers)
            ]
            for t in self._threads:
                t.start()
        future = Future()
        self._queue.put((future, fn, tuple(args), timeout))
        return future

    def _serve(self):
        worker = None
        try:
            while True:
                item = self._queue.get()
                if item is None:
                    return
                future, fn, args, timeout = item
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    if worker is None or not worker.alive() or worker.tasks >= self.max_tasks:
                        if worker is not None:
                            worker.close()
                            self._workers.discard(worker)
                        worker = None
                        worker = _Worker(self.env)
                        self._workers.add(worker)
                    future.set_result(worker.call(fn, args, timeout))
                except TaskError as e:
                    future.set_exception(e)
                except Exception as e:  # noqa: BLE001 - e.g. an unpicklable result
                    future.set_exception(TaskError("error", f"{type(e).__name__}: {e}"))
        finally:
            if worker is not None:
                worker.close()
                self._workers.discard(worker)

    def shutdown(self, kill: bool = False):
        """Stop the workers (tasks still queued are cancelled); `kill` also ends the tasks
        running now (Ctrl-C) instead of waiting for them."""
        self._closed = True
        if kill:
            for w in list(self._workers):
                w.kill()
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                item[0].cancel()
        for _ in self._threads:
            self._queue.put(None)
        for t in self._threads:
            t.join()
        self._threads = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()
