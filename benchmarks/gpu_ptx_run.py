"""Run the kernels exported by `gpu_smoke.py --export DIR` on a GPU with nothing but Python and
the CUDA driver (ctypes + libcuda.so.1; no numpy, no MLIR): for machines that have a GPU but not
the project's packages. Loads each PTX (the driver compiles it), launches the kernels like the
generated host code does (each memref argument as its descriptor fields: allocated and aligned
pointer, offset, sizes, strides), and checks the results against pure-Python references.

    python benchmarks/gpu_ptx_run.py DIR        # exit status 1 on any mismatch
"""

import array
import ctypes
import json
import math
import random
import sys
import time
from pathlib import Path

cu = ctypes.CDLL("libcuda.so.1")
TYPECODES = {"float32": "f", "float64": "d", "int32": "i", "int64": "q"}


def check(call, *args):
    r = getattr(cu, call)(*args)
    if r:
        name = ctypes.c_char_p()
        cu.cuGetErrorName(r, ctypes.byref(name))
        raise RuntimeError(f"{call} failed: {name.value.decode() if name.value else r}")


def init():
    check("cuInit", 0)
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    check("cuDeviceGet", ctypes.byref(dev), 0)
    check("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
    check("cuCtxPushCurrent_v2", ctx)


class Buffer:
    def __init__(self, shape, dtype, host):
        self.shape, self.host = shape, host
        self.nbytes = len(host) * host.itemsize
        self.ptr = ctypes.c_uint64()
        check("cuMemAlloc_v2", ctypes.byref(self.ptr), ctypes.c_size_t(self.nbytes))
        address, _ = host.buffer_info()
        check("cuMemcpyHtoD_v2", self.ptr, ctypes.c_void_p(address), ctypes.c_size_t(self.nbytes))

    def fetch(self):
        address, _ = self.host.buffer_info()
        check("cuMemcpyDtoH_v2", ctypes.c_void_p(address), self.ptr, ctypes.c_size_t(self.nbytes))
        return self.host

    def fields(self):
        strides = [math.prod(self.shape[k + 1 :]) for k in range(len(self.shape))]
        return [self.ptr.value, self.ptr.value, 0, *self.shape, *strides]


def inputs(name, params, rng):
    host = [array.array(TYPECODES[p["dtype"]], [0] * math.prod(p["shape"])) for p in params]
    n_in = {"vector_add": 2, "matmul": 2, "softmax": 1}[name]
    for h in host[:n_in]:
        for k in range(len(h)):
            h[k] = rng.random()
    return host


def reference_ok(name, host, rng):
    """Worst relative error of the output against a pure-Python reference (sampled for
    matmul), and whether it is within tolerance."""
    if name == "vector_add":
        a, b, c = host
        err = max(abs(c[k] - (a[k] + b[k])) / (abs(a[k] + b[k]) + 1e-6) for k in range(len(c)))
    elif name == "matmul":
        a, b, c = host
        n, err = 256, 0.0
        for _ in range(256):
            i, j = rng.randrange(n), rng.randrange(n)
            ref = sum(a[i * n + k] * b[k * n + j] for k in range(n))
            err = max(err, abs(c[i * n + j] - ref) / abs(ref))
    else:
        a, b = host
        rows, cols, err = 64, 128, 0.0
        for i in range(rows):
            row = a[i * cols : (i + 1) * cols]
            m = max(row)
            e = [math.exp(x - m) for x in row]
            s = sum(e)
            err = max(err, max(abs(b[i * cols + j] - e[j] / s) / (e[j] / s) for j in range(cols)))
    return err, err < 1e-4


def run(name, spec, rng, repeat=20):
    module = ctypes.c_void_p()
    check("cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(spec["ptx"].encode() + b"\0"))
    host = inputs(name, spec["params"], rng)
    bufs = [Buffer(p["shape"], p["dtype"], h) for p, h in zip(spec["params"], host)]
    launches = []
    for launch in spec["launches"]:
        fn = ctypes.c_void_p()
        check("cuModuleGetFunction", ctypes.byref(fn), module, launch["kernel"].encode())
        values = [ctypes.c_uint64(v) for k in launch["args"] for v in bufs[k].fields()]
        params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
        launches.append((fn, launch, values, params))

    def once():
        for fn, launch, _, params in launches:
            check("cuLaunchKernel", fn, *launch["grid"], *launch["block"], 0, None, params, None)
        check("cuStreamSynchronize", None)

    once()
    for b in bufs:
        b.fetch()
    err, ok = reference_ok(name, host, rng)
    start = time.perf_counter()
    for _ in range(repeat):
        once()
    t = (time.perf_counter() - start) / repeat
    print(
        f"{'OK' if ok else 'MISMATCH':8s} {name:10s} max rel err {err:.2e}  "
        f"{t * 1e6:9.1f} us per call (launch + sync)"
    )
    for b in bufs:
        check("cuMemFree_v2", b.ptr)
    check("cuModuleUnload", module)
    return ok


def main(directory):
    specs = json.loads((Path(directory) / "kernels.json").read_text())
    init()
    results = [run(name, spec, random.Random(0)) for name, spec in specs.items()]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "gpu_kernels"))
