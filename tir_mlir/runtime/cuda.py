"""Running `build(mod, target="cuda")` modules on an NVIDIA GPU through the MLIR CUDA runtime.

    lib = tir_mlir.build(sch.mod, target="cuda")
    lib["matmul"](a, b, c)                  # numpy arrays: copied to the GPU and back
    a_d, b_d, c_d = (cuda.array(x) for x in (a, b, c))
    lib["matmul"](a_d, b_d, c_d); c = c_d.numpy()        # device arrays stay on the GPU
    lib.time_evaluator("matmul", number=100)(a, b, c)    # times kernel launches only
    print(lib.get_source())                 # the PTX

The lowered module (pipeline target "cuda") holds a host function per prim_func that launches
its kernels with their PTX embedded; the ExecutionEngine JIT-compiles it with
libmlir_cuda_runtime.so, whose `mgpu*` wrappers call the CUDA driver (libcuda.so.1), which
compiles the PTX for the GPU at load time. Building needs no GPU; running does. Device memory is
allocated and copied with the same wrappers (ctypes), on device 0.
"""

import ctypes
import functools
from typing import Callable, cast

import numpy as np
from mlir import ir

from tir_mlir.context import get_context, serialized
from tir_mlir.dtypes import numpy_dtype
from tir_mlir.errors import AllocationError, BuildError, RuntimeCallError
from tir_mlir.passes.lowering import llvm_ir
from tir_mlir.passes.lowering.gpu_limits import GLOBAL_BYTES_ATTR
from tir_mlir.passes.lowering.gpu_nvvm import ptx
from tir_mlir.passes.lowering.pipeline import lower
from tir_mlir.runtime.build import Module, jit, packed_call
from tir_mlir.runtime import cuda_library, cuda_timer, dlpack
from tir_mlir.runtime.descriptor import memref_descriptor
from tir_mlir.runtime.signature import check_args, signatures

CUDA_RUNTIME = llvm_ir.MLIR_LIB / "libmlir_cuda_runtime.so"
DRIVER = "libcuda.so.1"


def driver_available() -> bool:
    """Whether the CUDA driver library can be loaded (a GPU may still be absent)."""
    try:
        ctypes.CDLL(DRIVER)
        return True
    except OSError:
        return False


@functools.lru_cache(maxsize=None)
def _runtime():
    if not driver_available():
        raise RuntimeCallError(
            f"cannot load the CUDA driver ({DRIVER}): running a cuda module "
            f"needs an NVIDIA GPU and its driver"
        )
    lib = ctypes.CDLL(str(CUDA_RUNTIME), mode=ctypes.RTLD_GLOBAL)
    lib.mgpuMemAlloc.restype = ctypes.c_void_p
    lib.mgpuMemAlloc.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_bool]
    lib.mgpuMemFree.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.mgpuMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    lib.mgpuStreamSynchronize.argtypes = [ctypes.c_void_p]
    return lib


def gpu_available() -> bool:
    """Whether a CUDA GPU can be used here (the driver loads and sees a device)."""
    if not driver_available():
        return False
    lib, count = ctypes.CDLL(DRIVER), ctypes.c_int()
    return lib.cuInit(0) == 0 and lib.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0


class DeviceArray:
    """A C-contiguous array in GPU memory (like TVM's `tvm.nd.array(x, tvm.cuda())`)."""

    owner = None  # a view's memory belongs to another object (freed by it, not here)

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        self._rt = _runtime()
        self.ptr = self._rt.mgpuMemAlloc(max(self.nbytes, 1), None, False)
        if not self.ptr:
            raise RuntimeCallError(f"cannot allocate {self.nbytes} bytes on the GPU")

    @classmethod
    def view(cls, ptr, shape, dtype, owner) -> "DeviceArray":
        """Device memory at `ptr` that `owner` keeps alive (a DLPack tensor): no copy."""
        a = cls.__new__(cls)
        a.shape, a.dtype, a.ptr, a.owner = tuple(shape), np.dtype(dtype), ptr, owner
        a.nbytes = int(np.prod(a.shape, dtype=np.int64)) * a.dtype.itemsize
        a._rt = _runtime()
        return a

    def copyfrom(self, a: np.ndarray) -> "DeviceArray":
        a = np.ascontiguousarray(a, dtype=self.dtype)
        if a.shape != self.shape:
            raise RuntimeCallError(f"copyfrom: shape {a.shape} != {self.shape}")
        self._rt.mgpuMemcpy(self.ptr, a.ctypes.data, self.nbytes, None)
        self._rt.mgpuStreamSynchronize(None)
        return self

    def copyto(self, a: np.ndarray) -> np.ndarray:
        self._rt.mgpuMemcpy(a.ctypes.data, self.ptr, self.nbytes, None)
        self._rt.mgpuStreamSynchronize(None)
        return a

    def numpy(self) -> np.ndarray:
        return self.copyto(np.empty(self.shape, self.dtype))

    def descriptor(self):
        strides = [
            int(np.prod(self.shape[k + 1 :], dtype=np.int64)) for k in range(len(self.shape))
        ]
        if self.ptr is None:
            raise RuntimeCallError("a freed DeviceArray cannot be passed to a kernel")
        return memref_descriptor(self.ptr, self.shape, strides)

    def __del__(self):
        if getattr(self, "ptr", None) and self.owner is None:
            self._rt.mgpuMemFree(self.ptr, None)
        self.ptr = None


def from_dlpack(x) -> "DeviceArray":
    """A view of a CUDA DLPack tensor (torch/cupy) as a DeviceArray: no copy. The producer's
    work queued on the default stream (what `__dlpack__()` with no stream assumes) is waited
    for: the kernels run on streams of their own."""
    t = dlpack.Tensor(x)
    if t.device_type not in (dlpack.CUDA, dlpack.CUDA_MANAGED):
        t.close()
        raise RuntimeCallError(
            f"from_dlpack: the tensor is on device type {t.device_type}, not a CUDA GPU"
        )
    view = DeviceArray.view(t.ptr, t.shape, t.dtype, t)
    view._rt.mgpuStreamSynchronize(None)
    return view


def device_arch(device=0) -> str:
    """The GPU's architecture, "sm_90" for compute capability 9.0."""
    _runtime()
    lib = ctypes.CDLL(DRIVER)
    major, minor = ctypes.c_int(), ctypes.c_int()
    if (
        lib.cuInit(0)
        or lib.cuDeviceGetAttribute(ctypes.byref(major), 75, device)
        or lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, device)
    ):
        raise RuntimeCallError("cannot query the GPU's compute capability")
    return f"sm_{major.value}{minor.value}"


def array(a: np.ndarray) -> DeviceArray:
    """A copy of `a` on the GPU."""
    return DeviceArray(a.shape, a.dtype).copyfrom(a)


def free_memory() -> int:
    """Bytes of free memory on the current GPU (its context made by an earlier allocation)."""
    lib = ctypes.CDLL(DRIVER)
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    if lib.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)) != 0:
        raise RuntimeCallError("cannot query the GPU's free memory")
    return free.value


@serialized
def build(mod, target="cuda", **_ignored) -> "CudaModule":
    module = mod.module if hasattr(mod, "module") else mod
    with get_context():
        sigs = signatures(module)
        for name, params in sigs.items():
            if any(p.kind != "buffer" or not p.static for p in params):
                # (the host side would pass the sizes, as runtime/build.py does on the CPU;
                # not written without a GPU to test it on)
                raise BuildError(
                    f"{name}: the CUDA runtime calls functions of static shapes "
                    f"and no scalar parameters; specialize it first "
                    f"(f.specialize({{...}}), --specialize NAME=VALUE). `tir-mlir "
                    f"lower --target cuda --emit ptx` shows its one kernel for "
                    f"every size"
                )
        lowered = lower(module, target, "llvm-dialect")
        attrs = lowered.operation.attributes
        needs = (
            {a.name: ir.IntegerAttr(a.attr).value for a in ir.DictAttr(attrs[GLOBAL_BYTES_ATTR])}
            if GLOBAL_BYTES_ATTR in attrs
            else {}
        )
        return CudaModule(
            sigs, _CudaBackend(lowered), ptx(lowered), needs, target=str(target), lowered=lowered
        )


class _CudaBackend:
    """JIT-compiles the host module on the first call, so building needs no GPU."""

    def __init__(self, lowered):
        self.lowered = lowered

    def entry(self, name):
        return lambda descs: packed_call(self.engine.lookup(name), descs)

    @functools.cached_property
    def engine(self):
        _runtime()
        with get_context():
            text = self.lowered.operation.get_asm(enable_debug_info=False)
        libs = [str(CUDA_RUNTIME), str(llvm_ir.MLIR_LIB / "libmlir_c_runner_utils.so")]
        # initialize(): the global constructors load the kernels' PTX
        return jit(self.lowered, text, libs, setup=lambda engine: engine.initialize())


class CudaFunction:
    """A compiled function: call it with one array per buffer parameter: a DeviceArray or a
    CUDA DLPack tensor (torch, cupy: used in place, no copy), or a numpy array (or CPU DLPack
    tensor), copied to the GPU before the call and back after it."""

    def __init__(self, module, name, params):
        self.module, self.name, self.params = module, name, params
        self._call = module.backend.entry(name)

    def _device_args(self, arrays):
        if len(arrays) != len(self.params):
            check_args(self.name, self.params, arrays)  # raises: wrong number of buffers
        arrays = [_on_device_or_numpy(a) for a in arrays]
        for p, a in zip(self.params, arrays):
            if not isinstance(a, DeviceArray):
                check_args(self.name, [p], [a])
            elif a.dtype != numpy_dtype(p.dtype) or a.shape != tuple(p.shape):
                raise RuntimeCallError(
                    f"{self.name}: buffer {p.name!r} expects {p.dtype} "
                    f"{tuple(p.shape)}, got a device array {a.dtype} {a.shape}"
                )
        return [a if isinstance(a, DeviceArray) else array(a) for a in arrays]

    def prepare(self, *arrays) -> Callable[[], list]:
        """Copy the arguments to the GPU once; returns a callable that only runs the kernels."""
        dev = self._device_args(arrays)
        need = self.module.global_bytes.get(self.name, 0)
        # The compiled code does not check its device allocations (a failed one is only
        # printed by the CUDA wrappers): check that they fit before launching.
        if need and need > free_memory():
            raise AllocationError(
                f"{self.name}: its global buffers need {need} bytes of GPU "
                f"memory, more than the GPU has free",
                nbytes=need,
            )
        descs = [d.descriptor() for d in dev]
        return lambda: (self._call(descs), dev)[1]

    def __call__(self, *arrays):
        host = [_on_device_or_numpy(a) for a in arrays]
        dev = self.prepare(*host)()
        for a, d in zip(host, dev):
            if isinstance(a, np.ndarray):
                d.copyto(a)


def _on_device_or_numpy(a):
    """A DLPack tensor as a DeviceArray view (CUDA) or a numpy view (CPU); others as given."""
    if isinstance(a, DeviceArray) or not dlpack.is_dlpack(a):
        return a
    if dlpack.device_type(a) in (dlpack.CUDA, dlpack.CUDA_MANAGED):
        return from_dlpack(a)
    return np.from_dlpack(a)


class CudaModule(Module):
    """Compiled functions by name, run on the GPU; `get_source()` is the PTX."""

    function_class = CudaFunction

    def __init__(self, sigs, backend, ptx_text, global_bytes=None, target="cuda", lowered=None):
        super().__init__(sigs, backend)
        self.ptx, self.target, self.lowered = ptx_text, target, lowered
        self.global_bytes = global_bytes or {}  # function -> bytes it allocates on the GPU

    def get_source(self, fmt="ptx") -> str:
        return self.ptx

    @serialized
    def export_library(self, path):
        """Write a shared object with the kernels as cubins (ptxas) and `path`.json, for
        `tir_mlir.load_module` (runtime/cuda_library.py)."""
        if self.lowered is None:
            raise BuildError("a loaded cuda library is exported already: copy its files")
        cuda_library.export(self, path, self.target)

    def time_evaluator(self, func_name, dev=None, number=10, repeat=1, min_repeat_ms=0, **_):
        """Like TVM's, timed with CUDA events: the arguments are put on the GPU once, then
        each measurement is `number` calls (each launches its kernels and waits for them)
        between two events; results in seconds, as `Module.time_evaluator`."""
        fn = cast(CudaFunction, self[func_name])  # (function_class; __getitem__ says Function)

        def evaluate(*arrays):
            host = [_on_device_or_numpy(a) for a in arrays]
            run = fn.prepare(*host)
            dev = run()  # warm-up: module load, first-touch
            result = cuda_timer.time_with_events(run, number, repeat, min_repeat_ms)
            for a, d in zip(host, dev):  # the contents the calls left, as TVM's
                if isinstance(a, np.ndarray):
                    d.copyto(a)
            return result

        return evaluate
