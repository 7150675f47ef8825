"""`make_reference`: the unscheduled program's outputs, against which every candidate is
checked (RunnerInput.reference)."""

import atexit
import contextlib
import os
import re
import tempfile
from typing import Optional

import numpy as np

from tir_mlir.meta_schedule.process_pool import ProcessPool, TaskError
from tir_mlir.errors import BuildError


def make_reference(
    mod,
    path: Optional[str] = None,
    func_name: Optional[str] = None,
    seed: int = 0,
    timeout_sec: float = 600.0,
) -> str:
    """Build `mod` unscheduled, run `func_name` (default "main" or the only function) on
    random inputs (seeded), and write inputs and outputs to `path` (.npz; default: a new
    temporary file). Done in a worker process, like every compile and run of the tuner."""
    if path is None:
        fd, path = tempfile.mkstemp(prefix="tir_mlir_ref_", suffix=".npz")
        os.close(fd)
        atexit.register(_remove, path)  # the runners read it until the tuning ends
    with ProcessPool(1) as pool:
        future = pool.submit(
            "tir_mlir.meta_schedule.runner.measure:write_reference",
            (mod.mlir(), func_name, seed, str(path)),
            timeout=timeout_sec,
        )
        try:
            return future.result()
        except TaskError as e:
            raise BuildError(
                f"the unscheduled program cannot serve as the reference: {e.message}"
            ) from None


def _remove(path):
    with contextlib.suppress(OSError):
        os.remove(path)


def is_reference(path: str) -> bool:
    """Whether `path` is a reference `make_reference` wrote: an .npz (no pickles) with arrays
    in0..in<n-1> and out0..out<n-1>, n >= 1, each output shaped and typed as its input. A
    resumed tuning run rebuilds any other file (an empty or damaged one failed every
    candidate)."""
    try:
        with np.load(path, allow_pickle=False) as ref:
            names = set(ref.files)
            n = sum(1 for name in names if re.fullmatch(r"in[0-9]+", name))
            if n == 0 or not {f"{io}{k}" for io in ("in", "out") for k in range(n)} <= names:
                return False
            for k in range(n):
                a, b = ref[f"in{k}"], ref[f"out{k}"]
                if a.shape != b.shape or a.dtype != b.dtype or a.dtype.hasobject:
                    return False
    except Exception:  # noqa: BLE001 - unreadable in any way: not a reference
        return False
    return True
