"""A pool task that starts processes of its own, imported by the pool's worker processes (the
tests put this folder on PYTHONPATH): a forked copy of the worker (as mlir_guard's parse of
untrusted text makes one) and a `sleep`, both hanging, their pids written to `pid_file`."""

import os
import subprocess
import time


def start_descendants(pid_file: str, then: str) -> None:
    """`then`: "hang" (the task never ends) or "abort" (the worker crashes)."""
    copy = os.fork()
    if copy == 0:
        time.sleep(3600)
        os._exit(0)
    sleeper = subprocess.Popen(["sleep", "3600"])
    with open(pid_file + ".tmp", "w") as f:
        f.write(f"{copy} {sleeper.pid}")
    os.replace(pid_file + ".tmp", pid_file)
    if then == "abort":
        os.abort()
    time.sleep(3600)
