"""Nothing outlives a killed tuner: its pool workers (in sessions of their own, a task hanging)
die with it, and the build folders it could not delete are deleted by the next one."""

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tir_mlir.meta_schedule.builder.local_builder import LocalBuilder

PARENT = """
import time
from tir_mlir.meta_schedule.process_pool import ProcessPool
pool = ProcessPool(1)
pool.submit("time:sleep", (1000,))
while not pool._workers:
    time.sleep(0.05)
print(next(iter(pool._workers)).proc.pid, flush=True)
time.sleep(1000)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie waiting for init counts as gone
        return f.read().split(") ")[1][0] != "Z"


def test_worker_with_a_hanging_task_dies_with_a_killed_parent():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        worker = int(parent.stdout.readline())
        assert _alive(worker)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 10
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(worker)


def test_build_folders_of_killed_processes_are_deleted_on_the_next_start():
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale = Path(tempfile.mkdtemp(prefix=f"tir_mlir_build_{gone.pid}-"))
    (stale / "x.so").write_bytes(b"x")
    live = Path(tempfile.mkdtemp(prefix=f"tir_mlir_build_{os.getppid()}-"))
    try:
        builder = LocalBuilder(max_workers=1)
        assert not stale.exists()
        assert live.exists()
        assert Path(builder.artifact_dir).name.startswith(f"tir_mlir_build_{os.getpid()}-")
        builder.shutdown()
    finally:
        for d in (stale, live):
            if d.exists():
                (d / "x.so").unlink(missing_ok=True)
                d.rmdir()
