"""The OpenMP thread count, chosen at run time: `TVM_NUM_THREADS`, else `OMP_NUM_THREADS`, else
the cores this process may run on. Kernels carry no thread count; loading one sets libomp's."""
import ctypes
import os

from tir_mlir.passes.lowering.llvm_ir import LIBOMP


def num_threads() -> int:
    for var in ("TVM_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(var, "").split(",")[0].strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return len(os.sched_getaffinity(0))


_LIBOMP = []  # libomp, once a kernel loaded it: held so that unloading kernels never unloads it


def set_openmp_threads():
    """Apply `num_threads()` to libomp if a kernel loaded it (it reads its environment only once,
    when it starts)."""
    if not _LIBOMP:
        try:
            _LIBOMP.append(ctypes.CDLL(str(LIBOMP), mode=os.RTLD_NOLOAD))
        except OSError:
            return
    _LIBOMP[0].omp_set_num_threads(num_threads())
