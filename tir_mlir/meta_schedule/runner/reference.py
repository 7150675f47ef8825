"""`make_reference`: the unscheduled program's outputs, against which every candidate is
checked (RunnerInput.reference)."""
import atexit
import contextlib
import os
import tempfile
from typing import Optional

from tir_mlir.meta_schedule.process_pool import ProcessPool, TaskError
from tir_mlir.errors import BuildError


def make_reference(mod, path: Optional[str] = None, func_name: Optional[str] = None,
                   seed: int = 0, timeout_sec: float = 600.0) -> str:
    """Build `mod` unscheduled, run `func_name` (default "main" or the only function) on
    random inputs (seeded), and write inputs and outputs to `path` (.npz; default: a new
    temporary file). Done in a worker process, like every compile and run of the tuner."""
    if path is None:
        fd, path = tempfile.mkstemp(prefix="tir_mlir_ref_", suffix=".npz")
        os.close(fd)
        atexit.register(_remove, path)     # the runners read it until the tuning ends
    with ProcessPool(1) as pool:
        future = pool.submit("tir_mlir.meta_schedule.runner.measure:write_reference",
                             (mod.mlir(), func_name, seed, str(path)), timeout=timeout_sec)
        try:
            return future.result()
        except TaskError as e:
            raise BuildError(f"the unscheduled program cannot serve as the reference: "
                             f"{e.message}") from None


def _remove(path):
    with contextlib.suppress(OSError):
        os.remove(path)
