"""`build`: lower a tir module, compile it, and call its functions on numpy arrays.

    lib = tir_mlir.build(mod, target="llvm")        # or "llvm -mcpu=znver4"
    lib["mm_relu"](a, b, c)                         # writes land in c
    t = lib.time_evaluator("mm_relu", number=10, repeat=3)(a, b, c).median
    lib.export_library("mm.so"); lib2 = tir_mlir.load_module("mm.so")

A CPU build is compiled by `opt`/`llc` into a shared object (the code `--emit asm` shows),
cached on disk (compile_cache.py) and loaded with ctypes; the last MEMORY_ENTRIES loaded
libraries stay in memory (LRU), so rebuilding a program is instant. Debug builds (bounds checks
reporting through a Python callback), and every build where there is no `cc` to link with, run
in MLIR's JIT instead (with the same target attributes, but not byte-identical code).
"""

import collections
import ctypes
import functools
import hashlib
import html
import operator
import os
import shutil
import tempfile
import threading
import weakref
from pathlib import Path

import _ctypes
import numpy as np
from mlir import ir
from mlir.execution_engine import ExecutionEngine

from tir_mlir.context import get_context, serialized
from tir_mlir.errors import BuildError, OutOfBoundsError, RuntimeCallError, SourceLoc
from tir_mlir.passes.lowering import llvm_ir
from tir_mlir.runtime import half_helpers
from tir_mlir.passes.lowering.bounds_check import CALLBACK, SITES_ATTR
from tir_mlir.passes.lowering.cpu_target import cpu_target
from tir_mlir.passes.lowering.pipeline import lower
from tir_mlir.runtime import aligned, artifact, compile_cache, dlpack
from tir_mlir.passes.lowering import llvm_stderr
from tir_mlir.runtime import extern_libs as extern_libs_mod
from tir_mlir.runtime import packed
from tir_mlir.runtime.alloc_status import AllocStatus
from tir_mlir.runtime.indirect_status import IndirectStatus
from tir_mlir.runtime.descriptor import descriptor
from tir_mlir.runtime.native_loop import repeater
from tir_mlir.runtime.signature import Param, call_values, signatures
from tir_mlir.runtime.threads import set_openmp_threads
from tir_mlir.runtime.timer import time_calls


class _BoundCall(functools.partial):
    """A compiled function bound to its arguments; `keep` holds what the arguments point into
    (the engine or library, descriptors), `repeat(n)` (when set) runs n calls in one trip to C."""

    keep: object
    repeat: object


MEMORY_ENTRIES = 64
# Argument tuples a Function remembers, with their descriptors, for repeated calls.
RECENT_CALLS = 4
_OOB_EVENTS = []
_OOB_LOCK = threading.Lock()


class LRU:
    """A dict that keeps its `size` most recently used entries."""

    def __init__(self, size):
        self.size, self.items = size, collections.OrderedDict()

    def get(self, key):
        value = self.items.get(key)
        if value is not None:
            self.items.move_to_end(key)
        return value

    def put(self, key, value):
        self.items[key] = value
        self.items.move_to_end(key)
        while len(self.items) > self.size:
            self.items.popitem(last=False)

    def __len__(self):
        return len(self.items)


_LIBRARIES = LRU(MEMORY_ENTRIES)  # cache key -> _SharedLibBackend
_ENGINES = LRU(MEMORY_ENTRIES)  # IR hash -> ExecutionEngine


@ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)
def _oob_callback(site, axis, index):
    with _OOB_LOCK:
        _OOB_EVENTS.append((site, axis, index))


def _to_module(mod) -> ir.Module:
    return mod.module if hasattr(mod, "module") else mod


@serialized
def build(mod, target="llvm", debug=False, extern_libs=(), **_ignored) -> "Module":
    """Compile every function of `mod` (an IRModule) for `target` ("llvm"/"cpu", with optional
    `-mcpu=NAME -mattr=+f,-g`; default: the host CPU).

    `debug=True` checks every buffer access: an out-of-bounds access is skipped and the call
    raises OutOfBoundsError naming the buffer, the index and the source location.
    `extern_libs`: the files defining the C functions `T.call_extern` calls (.so, .o, .a, C
    source, LLVM IR: runtime/extern_libs.py).

    A function with symbolic shapes (`n = T.int32()`) or scalar parameters is one kernel for
    every size, lowered once: `lib["f"](a, b)` reads `n` from the arrays' shapes and checks
    them (runtime/signature.py)."""
    if str(target).split()[0] in ("cuda", "nvptx"):
        from tir_mlir.runtime import cuda

        return cuda.build(mod, target)
    module = _to_module(mod)
    # opt | llc start (loading LLVM) while the program is lowered; unused on a cache hit.
    tools = llvm_ir.CompileTools(cpu_target(target), "obj") if shutil.which("cc") else None
    try:
        return _build_cpu(module, target, debug, extern_libs, tools)
    finally:
        if tools is not None:
            tools.close()


def _build_cpu(module, target, debug, extern_libs, tools):
    with get_context():
        extern_libs = extern_libs_mod.with_embedded(extern_libs, module)
        sigs = signatures(module)
        lowered = lower(module, target, "llvm-dialect", debug)
        text = str(lowered.operation.get_asm(enable_debug_info=False))  # (a str: not binary)
    sites = []
    if SITES_ATTR in lowered.operation.attributes:
        sites = [
            ir.StringAttr(s).value for s in ir.ArrayAttr(lowered.operation.attributes[SITES_ATTR])
        ]
    if sites or tools is None:  # linking a shared object needs a C compiler
        libs = [
            str(llvm_ir.C_RUNNER_UTILS),
            str(llvm_ir.LIBOMP),
            *extern_libs_mod.shared_library(extern_libs),
        ]
        register = (
            (lambda engine: engine.register_runtime(CALLBACK, _oob_callback)) if sites else None
        )
        return Module(sigs, _JitBackend(jit(lowered, text, libs, register), lowered), sites)
    # The signatures are compiled into the library too (runtime/artifact.py: export_library
    # and load_module check them), so they are part of the key.
    embedded = artifact.signature_global(artifact.signatures_text(_functions_json(sigs)))
    key = compile_cache.key(
        text + embedded,
        " ".join(llvm_ir.OPT_FLAGS + cpu_target(target).tool_flags()),
        extern_libs_mod.cache_key(extern_libs),
    )
    backend = _LIBRARIES.get(key)
    if backend is None:

        def compile_to(path):
            with get_context():
                ll = llvm_ir.to_llvm_ir(lowered)
            with tempfile.TemporaryDirectory(prefix="tir-mlir-extern-") as work:
                files, flags = extern_libs_mod.link_inputs(extern_libs, Path(work))
                llvm_ir.to_shared_object(ll + embedded, target, path, files, flags, tools)

        backend = _SharedLibBackend(compile_cache.shared_object(key, compile_to))
        _LIBRARIES.put(key, backend)
    return Module(sigs, backend)


def _functions_json(sigs) -> dict:
    return {n: [q.to_json() for q in ps] for n, ps in sigs.items()}


def jit(lowered, text: str, libs, setup=None) -> ExecutionEngine:
    """The ExecutionEngine of an llvm-dialect module whose asm is `text`, cached by a hash of
    the text; `setup(engine)` prepares a new one."""
    key = hashlib.sha256(text.encode()).hexdigest()
    engine = _ENGINES.get(key)
    if engine is None:
        with get_context():
            try:
                with llvm_stderr.captured():
                    engine = ExecutionEngine(lowered, opt_level=3, shared_libs=libs)
            except Exception as e:  # noqa: BLE001 - the bindings raise a bare RuntimeError
                raise BuildError(f"JIT compilation failed: {e}") from None
            half_helpers.register(engine)
            if setup is not None:
                setup(engine)
        set_openmp_threads()
        _ENGINES.put(key, engine)
    return engine


def _packed_args(descs):
    """The argument of an engine's packed entry point: an array of pointers to the arguments
    of the C interface, a descriptor's pointer or a scalar (and the pointer objects it points
    to, to keep alive)."""
    ptrs = [
        ctypes.pointer(ctypes.pointer(d) if isinstance(d, ctypes.Structure) else d) for d in descs
    ]
    return (ctypes.c_void_p * len(ptrs))(*[ctypes.cast(p, ctypes.c_void_p) for p in ptrs]), ptrs


def packed_call(packed, descs):
    """Call an engine's packed entry point on memref descriptors."""
    packed(_packed_args(descs)[0])


class _JitBackend:
    def __init__(self, engine, lowered):
        self.engine, self.lowered = engine, lowered

    def getter(self, symbol):
        """The function `symbol() -> int64` of the compiled code, or None."""
        try:
            packed = self.engine.raw_lookup(symbol)  # its packed form: void(void **args)
        except Exception:  # noqa: BLE001 - the bindings raise a bare RuntimeError
            return None
        if not packed:
            return None
        packed = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(packed)

        def call():
            result = ctypes.c_int64()
            packed((ctypes.c_void_p * 1)(ctypes.addressof(result)))
            return result.value

        return call

    def bind(self, name, descs):
        """A no-argument callable running `name` on these descriptors."""
        args, ptrs = _packed_args(descs)
        call = _BoundCall(self.engine.lookup(name), args)
        call.keep = (self, ptrs)  # the engine stays alive while the callable lives
        return call


class _SharedLibBackend:
    """A shared object with one `_mlir_ciface_<name>(descriptor*...)` per function; unloaded
    when the last Module using it goes."""

    def __init__(self, path):
        self.path = Path(path)
        try:
            self.lib = ctypes.CDLL(str(path))
        except OSError as e:
            hint = (
                " (a function T.call_extern calls: name the file defining it with "
                "build(..., extern_libs=[...]) or tir-mlir run --extern-lib)"
                if "undefined symbol" in str(e)
                else ""
            )
            raise RuntimeCallError(f"cannot load {path}: {e}{hint}") from None
        weakref.finalize(self, _ctypes.dlclose, self.lib._handle)
        set_openmp_threads()
        self._functions = {}

    def getter(self, symbol):
        """The function `symbol() -> int64` of the library, or None."""
        fn = getattr(self.lib, symbol, None)
        if fn is not None:
            fn.restype, fn.argtypes = ctypes.c_int64, []
        return fn

    def function(self, name, argtypes):
        fn = self._functions.get(name)
        if fn is None:
            fn = getattr(self.lib, "_mlir_ciface_" + name)
            fn.restype, fn.argtypes = None, argtypes
            self._functions[name] = fn
        return fn

    def bind(self, name, descs):
        """Descriptors are passed by address, scalars (sizes, `alpha`) by value."""
        structs = [isinstance(d, ctypes.Structure) for d in descs]
        fn = self.function(
            name, [ctypes.c_void_p if s else type(d) for d, s in zip(descs, structs)]
        )
        args = [ctypes.addressof(d) if s else d for d, s in zip(descs, structs)]
        call = _BoundCall(fn, *args)
        call.keep = self  # the library stays loaded while the callable lives
        # time_calls runs `repeat(n)`: n calls in one trip to C, which passes integer-register
        # arguments only (addresses and integers, not floats)
        if all(
            s or not isinstance(d, (ctypes.c_float, ctypes.c_double))
            for d, s in zip(descs, structs)
        ):
            words = [a if s else d.value for a, d, s in zip(args, descs, structs)]
            address = ctypes.cast(fn, ctypes.c_void_p).value
            assert address is not None, "a library function has an address"
            call.repeat = repeater(address, words, call)
        return call


# What a remembered call checks again (in C: `map` of an attrgetter): the arrays still have
# the layout their descriptors describe, and may still be written.
_LAYOUT = operator.attrgetter("shape", "strides", "dtype", "flags.writeable")


class Function:
    """A compiled function: call it with one numpy array per buffer parameter.

    The arguments of the last RECENT_CALLS calls are kept with their descriptors: calling again
    with the same arrays (same shape, strides, dtype, still writeable) only checks those."""

    def __init__(self, module, name, params):
        self.module, self.name, self.params = module, name, params
        self._recent = collections.OrderedDict()  # ids of the arrays -> (arrays, layouts, run)
        # A caller's scalars are values, not arrays whose layout can be remembered.
        self._scalars = any(p.kind in ("index", "scalar") for p in params)

    def prepare(self, *arrays):
        """Check the arguments once; returns a no-argument callable that runs the function
        (sizes derived from the arrays' shapes are passed after the arguments)."""
        arrays = dlpack.host_arrays(self.name, self.params, arrays)
        values = call_values(self.name, self.params, arrays)
        descs = [
            descriptor(v) if p.kind == "buffer" else _scalar(p, v)
            for p, v in zip(self.params, values)
        ]
        call = self.module.backend.bind(self.name, descs)
        if self.module.sites:

            def reporting(run=call, raise_errors=self.module.raise_bounds_errors):
                run()
                raise_errors()

            call = reporting
        for status in (self.module.alloc_status, self.module.indirect_status):
            if status is not None:
                call = status.checked(call)
        if self.module.packed_calls:
            call = packed.checked(call)
        call.keep_args = (arrays, descs)  # the descriptors point into these arrays
        return call

    def __call__(self, *arrays):
        if not self._scalars:
            # Looked up before any conversion: only calls on numpy arrays are remembered, and
            # their arrays are held, so an id that matches is the very array.
            hit = self._recent.get(tuple(map(id, arrays)))
            if hit is not None and hit[1] == list(map(_LAYOUT, arrays)):
                return hit[2]()
        given, arrays = arrays, dlpack.host_arrays(self.name, self.params, arrays)
        if self._scalars or arrays is not given:  # another framework's tensors: new views
            return self.prepare(*arrays)()
        run = self.prepare(*arrays)
        # The arrays are kept: their ids and data pointers stay theirs (numpy refuses to resize
        # an array something else references).
        self._recent[tuple(map(id, arrays))] = (arrays, list(map(_LAYOUT, arrays)), run)
        if len(self._recent) > RECENT_CALLS:
            self._recent.popitem(last=False)
        run()


class Module:
    """Compiled functions by name (`lib["f"]`), like TVM's runtime.Module."""

    function_class = Function

    def __init__(self, sigs, backend, sites=()):
        self.sigs, self.backend, self.sites = sigs, backend, list(sites)
        self.alloc_status = AllocStatus.of(backend)
        self.packed_calls = packed.attach(backend)
        self.indirect_status = IndirectStatus.of(backend)
        self._functions = {}

    def __getitem__(self, name) -> Function:
        fn = self._functions.get(name)
        if fn is None:
            if name not in self.sigs:
                raise RuntimeCallError(
                    f"no function named {name!r}; the module has {sorted(self.sigs)}"
                )
            fn = self._functions[name] = self.function_class(self, name, self.sigs[name])
        return fn

    def __contains__(self, name):
        return name in self.sigs

    @property
    def mod(self) -> "Module":
        """TVM 0.21's `Executable.mod` (what `tvm.compile` returns): the runtime module, for
        `lib.mod.time_evaluator(...)`. Here the built module is both."""
        return self

    def jit(self) -> "Module":
        """TVM 0.21's `Executable.jit()`: the module, compiled already."""
        return self

    def __call__(self, *args):
        """`lib(a, b)`: TVM's entry function, `main` or the module's only function."""
        if "main" in self.sigs or len(self.sigs) == 1:
            return self["main" if "main" in self.sigs else next(iter(self.sigs))](*args)
        raise RuntimeCallError(
            f"the module has no entry function (main) to call: "
            f"call one by name, lib[name](...), of {sorted(self.sigs)}"
        )

    def _repr_html_(self) -> str:
        """The functions and their parameters, for notebooks."""
        rows = "".join(
            f"<tr><td><code>{html.escape(name)}</code></td><td><code>"
            f"{html.escape(', '.join(_param_text(p) for p in params))}</code></td></tr>"
            for name, params in self.sigs.items()
        )
        return (
            f"<b>{type(self).__name__}</b> ({len(self.sigs)} function"
            f"{'s' if len(self.sigs) != 1 else ''})<table>{rows}</table>"
        )

    def time_evaluator(self, func_name, dev=None, number=10, repeat=1, min_repeat_ms=0, **_):
        """Like TVM's: returns f(*arrays) -> result with `.mean`, `.median`, `.results` (s)."""
        fn = self[func_name]

        def evaluate(*arrays):
            staged = [aligned.copy(a) if _misaligned(a) else a for a in arrays]
            result = time_calls(fn.prepare(*staged), number, repeat, min_repeat_ms)
            for a, s in zip(arrays, staged):
                if s is not a:
                    a[...] = s  # the contents the calls left, as if run in place
            return result

        return evaluate

    def raise_bounds_errors(self):
        if not self.sites or not _OOB_EVENTS:
            return
        with _OOB_LOCK:
            events = list(_OOB_EVENTS)
            _OOB_EVENTS.clear()
        site, axis, index = events[0]
        name, kind, loc, declared = self.sites[site].split("|")
        more = f" ({len(events) - 1} more out-of-bounds accesses)" if len(events) > 1 else ""
        raise OutOfBoundsError(
            f"out-of-bounds {kind} of buffer {name!r}: index {index} on axis {axis}{more}",
            SourceLoc.parse(loc),
            buffer=name,
            index=index,
            axis=axis,
            notes=[(f"buffer {name!r} declared here", SourceLoc.parse(declared))],
        )

    @serialized
    def export_library(self, path):
        """Write the shared object (and `path`.json with the signatures) that `load_module`
        loads: the very code this module runs."""
        if self.sites:
            raise BuildError("debug builds (bounds checks) cannot be exported")
        if not isinstance(self.backend, _SharedLibBackend):
            raise BuildError("only CPU modules built with a C compiler (cc) can be exported")
        path = Path(path)
        if not path.parent.is_dir():
            raise BuildError(f"cannot write {path}: directory {path.parent} does not exist")
        artifact.publish(Path(self.backend.path), path, _functions_json(self.sigs))


_CTYPES = {
    "float32": ctypes.c_float,
    "float64": ctypes.c_double,
    "int8": ctypes.c_int8,
    "int16": ctypes.c_int16,
    "int32": ctypes.c_int32,
    "int64": ctypes.c_int64,
    "uint8": ctypes.c_uint8,
    "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64,
    "bool": ctypes.c_bool,
}


def _param_text(p: Param) -> str:
    """`A: float32[128, 128]`, `n: int32`."""
    if p.kind == "buffer":
        return f"{p.name}: {p.dtype}[{', '.join(map(str, p.shape))}]"
    return f"{p.name}: {p.dtype}"


def _scalar(p: Param, value):
    """A scalar argument as its C type: sizes are `index` (64-bit) whatever their dtype."""
    if p.kind in ("index", "var"):
        return ctypes.c_int64(value)
    if p.dtype not in _CTYPES:
        raise RuntimeCallError(f"parameter {p.name!r}: a {p.dtype} scalar cannot be passed")
    return _CTYPES[p.dtype](value)


def _misaligned(a) -> bool:
    """A writable C-contiguous numpy array whose data is not 64-byte aligned (numpy aligns large
    arrays to 16 bytes). TVM times its NDArrays, which are always aligned; on such an array every
    64-byte vector access of a kernel spans two cache lines (a tiled 1024 matmul: 7.8 ms against
    6.3 ms), so time_evaluator times aligned copies and copies the results back."""
    return (
        isinstance(a, np.ndarray)
        and a.ndim > 0
        and a.flags.c_contiguous
        and a.flags.writeable
        and not aligned.is_aligned(a)
    )


@serialized
def load_module(path) -> Module:
    """Load a shared object written by `Module.export_library`, after checking that it is
    whole and matches its signature file (see runtime/artifact.py)."""
    path = Path(path)
    from tir_mlir.runtime import cuda_library

    if cuda_library.target_of(path).split()[0] == "cuda":
        return cuda_library.load(path)
    functions, copy = artifact.read_meta(path)
    try:
        backend = _SharedLibBackend(copy)
    except OSError as e:
        raise RuntimeCallError(f"{path}: cannot load the library ({e})") from None
    finally:
        os.unlink(copy)  # the loaded mapping stays valid; the name is not reused
    backend.path = path  # (the verified file: what a re-export copies)
    try:
        embedded = ctypes.string_at(
            ctypes.addressof(ctypes.c_char.in_dll(backend.lib, artifact.SYMBOL))
        )
    except ValueError:
        raise RuntimeCallError(f"{path}: not a library written by export_library") from None
    if embedded.decode(errors="replace") != artifact.signatures_text(functions):
        raise RuntimeCallError(
            f"{path}: the signatures in {path.name}.json differ from the "
            f"ones compiled into the library"
        )
    for name in functions:
        if not hasattr(backend.lib, "_mlir_ciface_" + name):
            raise RuntimeCallError(f"{path}: function {name!r} is missing from the library")
    sigs = {n: [Param.from_json(q) for q in ps] for n, ps in functions.items()}
    return Module(sigs, backend)
