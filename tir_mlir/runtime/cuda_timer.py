"""CUDA-event timing for `CudaModule.time_evaluator`.

Two events recorded on the default stream around `number` calls, read back with
cuEventElapsedTime (the GPU's clock, 0.5 us resolution). Each call launches its kernels on a
stream of its own and waits for them (the MLIR runtime wrappers), so the interval is the calls'
complete GPU time including their launch overhead, as TVM's time_evaluator on CUDA measures.
"""

import ctypes

from tir_mlir.errors import RuntimeCallError
from tir_mlir.runtime.timer import BenchmarkResult


def _driver():
    from tir_mlir.runtime.cuda import DRIVER, _runtime

    _runtime()  # the same checks and message when there is no driver
    return ctypes.CDLL(DRIVER)


def _check(status, what):
    if status != 0:
        raise RuntimeCallError(f"CUDA driver error {status} in {what}")


class _Context:
    """The device's primary context made current for the event calls (the launches made it
    primary; this thread may have none current)."""

    def __enter__(self):
        self.lib = lib = _driver()
        dev, self.ctx = ctypes.c_int(), ctypes.c_void_p()
        _check(lib.cuInit(0), "cuInit")
        _check(lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        _check(
            lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), dev), "cuDevicePrimaryCtxRetain"
        )
        self.dev = dev
        _check(lib.cuCtxPushCurrent_v2(self.ctx), "cuCtxPushCurrent")
        return lib

    def __exit__(self, *exc):
        popped = ctypes.c_void_p()
        self.lib.cuCtxPopCurrent_v2(ctypes.byref(popped))
        self.lib.cuDevicePrimaryCtxRelease_v2(self.dev)


def time_with_events(call, number=10, repeat=1, min_repeat_ms=0) -> BenchmarkResult:
    """`repeat` measurements of `number` calls each (`number` doubles until one lasts
    `min_repeat_ms`), seconds per call."""
    results = []
    with _Context() as lib:
        start, end = ctypes.c_void_p(), ctypes.c_void_p()
        _check(lib.cuEventCreate(ctypes.byref(start), 0), "cuEventCreate")
        _check(lib.cuEventCreate(ctypes.byref(end), 0), "cuEventCreate")
        try:
            for _ in range(repeat):
                n = max(1, number)
                while True:
                    _check(lib.cuEventRecord(start, None), "cuEventRecord")
                    for _ in range(n):
                        call()
                    _check(lib.cuEventRecord(end, None), "cuEventRecord")
                    _check(lib.cuEventSynchronize(end), "cuEventSynchronize")
                    ms = ctypes.c_float()
                    _check(
                        lib.cuEventElapsedTime(ctypes.byref(ms), start, end), "cuEventElapsedTime"
                    )
                    if min_repeat_ms <= 0 or ms.value >= min_repeat_ms:
                        break
                    n = max(n * 2, int(n * min_repeat_ms / max(ms.value, 1e-3) * 1.1) + 1)
                results.append(ms.value / 1e3 / n)
        finally:
            lib.cuEventDestroy_v2(start)
            lib.cuEventDestroy_v2(end)
    return BenchmarkResult(tuple(results))
