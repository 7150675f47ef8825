"""The OpenMP thread count, chosen at run time: `TVM_NUM_THREADS`, else `OMP_NUM_THREADS`, else
the cores this process may run on. Kernels carry no thread count; loading one sets libomp's.

Worker threads are bound to cores (`OMP_PROC_BIND=close`, `OMP_PLACES=cores`, as TVM pins its
thread pool; a thread that migrates mid-kernel loses its cache and stalls the others at the
barrier), unless the environment already says how to bind. libomp binds the calling thread
too: the Python main thread gets its mask back at once, so that it, and every process it starts
later (compilers, the tuner's workers), may still run on all the cores."""

import ctypes
import os

from tir_mlir.passes.lowering.llvm_ir import LIBOMP

_BINDING_VARIABLES = ("OMP_PROC_BIND", "OMP_PLACES", "KMP_AFFINITY", "GOMP_CPU_AFFINITY")


def num_threads() -> int:
    for var in ("TVM_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(var, "").split(",")[0].strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return len(os.sched_getaffinity(0))


_LIBOMP = []  # libomp, once a kernel loaded it: held so that unloading kernels never unloads it


def set_openmp_threads():
    """Apply `num_threads()` to libomp if a kernel loaded it (it reads its environment only once,
    at its first call, which the first call here is)."""
    if not _LIBOMP:
        try:
            lib = ctypes.CDLL(str(LIBOMP), mode=os.RTLD_NOLOAD)
        except OSError:
            return
        _bind_workers(lib)
        _LIBOMP.append(lib)
    _LIBOMP[0].omp_set_num_threads(num_threads())


def _bind_workers(lib):
    if any(v in os.environ for v in _BINDING_VARIABLES):
        return
    mask = os.sched_getaffinity(0)
    os.environ.update(OMP_PROC_BIND="close", OMP_PLACES="cores")
    try:
        lib.omp_get_num_procs()  # libomp initialises: reads them, binds this thread
    finally:
        for v in ("OMP_PROC_BIND", "OMP_PLACES"):
            del os.environ[v]  # not inherited by the processes started later
        os.sched_setaffinity(0, mask)
