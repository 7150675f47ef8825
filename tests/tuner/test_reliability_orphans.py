"""Nothing outlives a killed tuner: its pool workers (in sessions of their own, a task hanging)
die with it, so do the processes their tasks started (a forked copy of the worker, a
subprocess), and the build folders it could not delete are deleted by the next one."""

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tir_mlir.meta_schedule.builder.local_builder import LocalBuilder
from tir_mlir.meta_schedule.process_pool import ProcessPool, TaskError

HELPERS = str(Path(__file__).parent.parent / "support" / "ms_helpers")

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


# A tuner whose one worker runs a task that forks a copy of the worker and starts a `sleep`,
# both hanging; it prints the worker's pid once the task has written theirs to argv[1].
TUNER = """
import os, sys, time
from tir_mlir.meta_schedule.process_pool import ProcessPool
pool = ProcessPool(1, {"PYTHONPATH": sys.argv[2]})
pool.submit("descendants:start_descendants", (sys.argv[1], "hang"))
while not os.path.exists(sys.argv[1]):
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


def _gone_soon(pids, seconds=10.0) -> list:
    """The pids still alive after `seconds` (each is killed then, not to leak it)."""
    deadline = time.monotonic() + seconds
    while any(map(_alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in pids if _alive(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    return left


def test_what_a_task_started_dies_with_a_killed_tuner(tmp_path):
    pid_file = str(tmp_path / "pids")
    tuner = subprocess.Popen(
        [sys.executable, "-c", TUNER, pid_file, HELPERS], stdout=subprocess.PIPE, text=True
    )
    try:
        worker = int(tuner.stdout.readline())
        copy, sleeper = map(int, Path(pid_file).read_text().split())
        assert all(map(_alive, (worker, copy, sleeper)))
        with open(f"/proc/{copy}/cmdline") as f:  # the copy looks like a worker in `ps`
            assert "tir_mlir.meta_schedule.worker" in f.read()
    finally:
        tuner.send_signal(signal.SIGKILL)
        tuner.wait()
    assert _gone_soon([worker, copy, sleeper]) == []


def test_what_a_task_started_dies_with_its_crashed_worker(tmp_path):
    pid_file = str(tmp_path / "pids")
    pool = ProcessPool(1, {"PYTHONPATH": HELPERS})
    try:
        future = pool.submit("descendants:start_descendants", (pid_file, "abort"))
        with pytest.raises(TaskError) as e:  # (not forever: the copy held the worker's pipe)
            future.result(timeout=60)
        assert e.value.kind == "crash"
        assert _gone_soon(list(map(int, Path(pid_file).read_text().split()))) == []
    finally:
        pool.shutdown(kill=True)


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
