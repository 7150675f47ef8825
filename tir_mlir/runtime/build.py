"""`build`: lower a tir module, JIT it, and call its functions on numpy arrays.

    lib = tir_mlir.build(mod, target="llvm")
    lib["mm_relu"](a, b, c)                         # writes land in c
    t = lib.time_evaluator("mm_relu", number=10, repeat=3)(a, b, c).median
    lib.export_library("mm.so"); lib2 = tir_mlir.load_module("mm.so")

Compiled engines are cached by a hash of the lowered IR, so rebuilding a program is instant.
"""
import ctypes
import hashlib
import json
import os
import subprocess
import tempfile
import threading
from pathlib import Path

from mlir import ir
from mlir.execution_engine import ExecutionEngine

from tir_mlir.context import get_context
from tir_mlir.errors import BuildError, OutOfBoundsError, RuntimeCallError, SourceLoc
from tir_mlir.passes.lowering import llvm_ir
from tir_mlir.passes.lowering.bounds_check import CALLBACK, SITES_ATTR
from tir_mlir.passes.lowering.pipeline import lower
from tir_mlir.runtime.descriptor import descriptor
from tir_mlir.runtime.signature import Param, check_args, signatures
from tir_mlir.runtime.timer import time_calls

_ENGINES = {}
_OOB_EVENTS = []
_OOB_LOCK = threading.Lock()


@ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)
def _oob_callback(site, axis, index):
    with _OOB_LOCK:
        _OOB_EVENTS.append((site, axis, index))


def _uses_openmp(text: str) -> bool:
    return "omp." in text


def _to_module(mod) -> ir.Module:
    return mod.module if hasattr(mod, "module") else mod


def build(mod, target="llvm", debug=False, **_ignored) -> "Module":
    """Compile every function of `mod` (an IRModule) for `target` ("llvm"/"cpu").

    `debug=True` checks every buffer access: an out-of-bounds access is skipped and the call
    raises OutOfBoundsError naming the buffer, the index and the source location."""
    if hasattr(mod, "_tir_mlir_build"):      # symbolic shapes: tir_mlir/script/symbolic.py
        return mod._tir_mlir_build(target, debug=debug)
    if str(target).split()[0] in ("cuda", "nvptx"):
        from tir_mlir.runtime import cuda
        return cuda.build(mod, target)
    module = _to_module(mod)
    with get_context():
        sigs = signatures(module)
        lowered = lower(module, target, "llvm-dialect", debug)
        text = lowered.operation.get_asm(enable_debug_info=False)
    sites = []
    if SITES_ATTR in lowered.operation.attributes:
        sites = [ir.StringAttr(s).value for s in ir.ArrayAttr(lowered.operation.attributes[SITES_ATTR])]
    libs = [str(llvm_ir.MLIR_LIB / "libmlir_c_runner_utils.so")]
    if _uses_openmp(text):
        libs.append(str(llvm_ir.LIBOMP))
    register = (lambda engine: engine.register_runtime(CALLBACK, _oob_callback)) if sites else None
    return Module(sigs, _JitBackend(jit(lowered, text, libs, register), lowered), sites)


def jit(lowered, text: str, libs, setup=None) -> ExecutionEngine:
    """The ExecutionEngine of an llvm-dialect module whose asm is `text`, cached by a hash of
    the text; `setup(engine)` prepares a new one."""
    key = hashlib.sha256(text.encode()).hexdigest()
    if key not in _ENGINES:
        with get_context():
            try:
                engine = ExecutionEngine(lowered, opt_level=3, shared_libs=libs)
            except Exception as e:  # noqa: BLE001 - the bindings raise a bare RuntimeError
                raise BuildError(f"JIT compilation failed: {e}") from None
            if setup is not None:
                setup(engine)
        _ENGINES[key] = engine
    return _ENGINES[key]


def packed_call(packed, descs):
    """Call an engine's packed entry point: an array of pointers to the argument pointers."""
    ptrs = [ctypes.pointer(ctypes.pointer(d)) for d in descs]
    packed((ctypes.c_void_p * len(ptrs))(*[ctypes.cast(p, ctypes.c_void_p) for p in ptrs]))


class _JitBackend:
    def __init__(self, engine, lowered):
        self.engine, self.lowered = engine, lowered

    def entry(self, name):
        packed = self.engine.lookup(name)
        return lambda descs: packed_call(packed, descs)


class _SharedLibBackend:
    def __init__(self, path):
        self.lib = ctypes.CDLL(str(path))

    def entry(self, name):
        fn = getattr(self.lib, "_mlir_ciface_" + name)
        fn.restype = None

        def call(descs):
            fn(*[ctypes.byref(d) for d in descs])
        return call


class Function:
    """A compiled function: call it with one numpy array per buffer parameter."""

    def __init__(self, module, name, params):
        self.module, self.name, self.params = module, name, params
        self._call = module.backend.entry(name)

    def prepare(self, *arrays):
        """Check the arrays once; returns a no-argument callable that runs the function."""
        check_args(self.name, self.params, arrays)
        descs = [descriptor(a) for a in arrays]
        keep = arrays  # the descriptors point into these arrays

        def run():
            self._call(descs)
            self.module.raise_bounds_errors()
            return keep
        return run

    def __call__(self, *arrays):
        self.prepare(*arrays)()


class Module:
    """Compiled functions by name (`lib["f"]`), like TVM's runtime.Module."""

    function_class = Function

    def __init__(self, sigs, backend, sites=()):
        self.sigs, self.backend, self.sites = sigs, backend, list(sites)
        self._functions = {}

    def __getitem__(self, name) -> Function:
        if name not in self.sigs:
            raise RuntimeCallError(f"no function named {name!r}; the module has {sorted(self.sigs)}")
        if name not in self._functions:
            self._functions[name] = self.function_class(self, name, self.sigs[name])
        return self._functions[name]

    def __contains__(self, name):
        return name in self.sigs

    def time_evaluator(self, func_name, dev=None, number=10, repeat=1, min_repeat_ms=0, **_):
        """Like TVM's: returns f(*arrays) -> result with `.mean`, `.median`, `.results` (s)."""
        fn = self[func_name]

        def evaluate(*arrays):
            return time_calls(fn.prepare(*arrays), number, repeat, min_repeat_ms)
        return evaluate

    def raise_bounds_errors(self):
        if not self.sites or not _OOB_EVENTS:
            return
        with _OOB_LOCK:
            events = list(_OOB_EVENTS)
            _OOB_EVENTS.clear()
        site, axis, index = events[0]
        name, kind, loc = self.sites[site].split("|")
        file, line, col = (loc.rsplit(":", 2) + ["", "", ""])[:3] if loc != "?" else ("", "", "")
        src = SourceLoc(file, int(line), int(col)) if line.isdigit() else None
        more = f" ({len(events) - 1} more out-of-bounds accesses)" if len(events) > 1 else ""
        raise OutOfBoundsError(f"out-of-bounds {kind} of buffer {name!r}: index {index} on "
                               f"axis {axis}{more}", src, buffer=name, index=index, axis=axis)

    def export_library(self, path):
        """Write a shared object (and `path`.json with the signatures) that `load_module` loads."""
        if not isinstance(self.backend, _JitBackend):
            raise BuildError("only JIT-built modules can be exported")
        if self.sites:
            raise BuildError("debug builds (bounds checks) cannot be exported")
        path = Path(path)
        with get_context():
            ll = llvm_ir.to_llvm_ir(self.backend.lowered)
        omp = _uses_openmp(str(self.backend.lowered))
        with tempfile.TemporaryDirectory() as tmp:
            obj = Path(tmp) / "kernel.o"
            llvm_ir.to_object(ll, obj)
            cmd = ["cc", "-shared", "-o", str(path), str(obj)]
            if omp:
                libdir = str(llvm_ir.LIBOMP.parent)
                cmd += [f"-L{libdir}", "-lomp", f"-Wl,-rpath,{libdir}"]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode:
                raise BuildError(f"linking {path} failed: {p.stderr[-2000:]}")
        meta = {"functions": {n: [q.to_json() for q in ps] for n, ps in self.sigs.items()}}
        Path(str(path) + ".json").write_text(json.dumps(meta, indent=1))


def load_module(path) -> Module:
    """Load a shared object written by `Module.export_library`."""
    path = Path(path)
    meta_path = Path(str(path) + ".json")
    if not path.exists() or not meta_path.exists():
        raise RuntimeCallError(f"{path}: no such library (or its .json signature file)")
    meta = json.loads(meta_path.read_text())
    sigs = {n: [Param(q["name"], tuple(q["shape"]), q["dtype"]) for q in ps]
            for n, ps in meta["functions"].items()}
    return Module(sigs, _SharedLibBackend(os.path.abspath(path)))
