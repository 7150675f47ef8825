"""`export_library` / `load_module` for CUDA modules: one shared object with the cubin inside.

    lib = tir_mlir.build(sch.mod, target="cuda -arch=sm_80")
    lib.export_library("mm.so")                   # mm.so + mm.so.json
    lib2 = tir_mlir.load_module("mm.so")          # on the GPU machine
    lib2["matmul"](a, b, c)

Export assembles each kernel's PTX with `ptxas` for the module's arch and puts the cubin in
place of the PTX (a `gpu.object` of format `bin`), so the loader does no JIT compilation; the
host code (the launches) is compiled by llc and linked against libmlir_cuda_runtime.so, whose
constructor loads the cubin when the library is opened. Opening therefore needs the GPU:
`load_module` checks the files (artifact.py: hash, signatures) and opens the library on the
first call, so a module can be loaded and inspected on a machine without one.
"""

import ctypes
import functools
import json
import os
import shutil
import subprocess
import tempfile
import weakref
from pathlib import Path

import _ctypes
from mlir import ir
from mlir.dialects import gpu

from tir_mlir.context import get_context
from tir_mlir.errors import BuildError, RuntimeCallError
from tir_mlir.passes.lowering import llvm_ir
from tir_mlir.passes.lowering.gpu_nvvm import arch_of
from tir_mlir.runtime import artifact

MAX_PTX_IN_META = 512 * 1024  # the PTX is kept in the .json (get_source) up to this size
BINARY_FORMAT = 3  # gpu::CompilationTarget::Binary: a cubin, loaded with cuModuleLoadData


def ptxas_path() -> str:
    found = shutil.which("ptxas") or next(
        (
            str(p)
            for p in (Path("/usr/local/cuda/bin/ptxas"), Path("/usr/local/bin/ptxas"))
            if p.exists()
        ),
        None,
    )
    if found is None:
        raise BuildError(
            "exporting a cuda module needs ptxas (the CUDA toolkit) to assemble "
            "its PTX into a cubin"
        )
    return found


def assemble(ptx: str, arch: str) -> bytes:
    """The cubin of `ptx` for `arch` (sm_80...)."""
    with tempfile.TemporaryDirectory(prefix="tir-mlir-ptxas-") as d:
        src, out = Path(d) / "k.ptx", Path(d) / "k.cubin"
        src.write_text(ptx)
        p = subprocess.run(
            [ptxas_path(), f"-arch={arch}", "-o", str(out), str(src)],
            capture_output=True,
            text=True,
        )
        if p.returncode:
            raise BuildError(f"ptxas failed for {arch}: {p.stderr[-2000:]}")
        return out.read_bytes()


def with_cubins(lowered: ir.Module, arch: str) -> ir.Module:
    """A copy of the host module whose kernel binaries are cubins instead of PTX."""
    with get_context():
        host = ir.Module.parse(str(lowered.operation.get_asm(enable_debug_info=False)))
        for op in host.body.operations:
            op = op.operation
            if op.name != "gpu.binary":
                continue
            objects = []
            # ObjectAttr comes from the GPU dialect's native module; the stub omits it
            object_attr = gpu.ObjectAttr  # pyright: ignore[reportAttributeAccessIssue]
            for attr in ir.ArrayAttr(op.attributes["objects"]):
                obj = object_attr(attr)
                objects.append(
                    object_attr.get(obj.target, BINARY_FORMAT, assemble(obj.object.decode(), arch))
                )
            op.attributes["objects"] = ir.ArrayAttr.get(objects)
        return host


def export(module, path, target):
    """Write `path` (the shared object) and `path`.json for `load_module`."""
    from tir_mlir.runtime.cuda import CUDA_RUNTIME

    path = Path(path)
    if not path.parent.is_dir():
        raise BuildError(f"cannot write {path}: directory {path.parent} does not exist")
    arch = arch_of(target)
    functions = {n: [q.to_json() for q in ps] for n, ps in module.sigs.items()}
    with get_context():
        ll = llvm_ir.to_llvm_ir(with_cubins(module.lowered, arch))
    ll += artifact.signature_global(artifact.signatures_text(functions))
    runtime = Path(CUDA_RUNTIME)
    with tempfile.TemporaryDirectory(prefix="tir-mlir-cuda-export-") as d:
        built = Path(d) / "lib.so"
        llvm_ir.to_shared_object(
            ll, "llvm", built, [str(runtime)], [f"-Wl,-rpath,{runtime.parent}"]
        )
        ptx = module.ptx if len(module.ptx) <= MAX_PTX_IN_META else ""
        artifact.publish(
            built,
            path,
            functions,
            {"target": f"cuda -arch={arch}", "ptx": ptx, "global_bytes": module.global_bytes},
        )


def runs_on(built: str, device: str) -> bool:
    """Whether a cubin for `built` runs on a `device` GPU: same major version, minor at least
    the cubin's (an sm_80 cubin runs on sm_86, not on sm_90)."""

    def cc(arch):
        digits = "".join(ch for ch in arch if ch.isdigit())
        return int(digits[:-1]), int(digits[-1])

    if built.endswith("a"):  # sm_90a: that GPU only
        return built[:-1] == device
    (bm, bn), (dm, dn) = cc(built), cc(device)
    return bm == dm and dn >= bn


def target_of(path) -> str:
    """The target an exported library was built for ("llvm" for CPU libraries)."""
    try:
        meta = json.loads(Path(str(path) + ".json").read_bytes()[: artifact.MAX_META_BYTES])
    except (OSError, ValueError, RecursionError):
        return "llvm"  # load_module's checks report what is wrong
    if not isinstance(meta, dict) or "target" not in meta:
        return "llvm"
    target = meta["target"]
    if not isinstance(target, str) or target.split()[:1] not in (["llvm"], ["cuda"]):
        raise RuntimeCallError(
            f"{path}.json: malformed signature file: target "
            f'{str(target)[:60]!r} (expected "llvm ..." or "cuda ...")'
        )
    return target


def load(path):
    """A CudaModule over the exported library at `path` (opened on its first call)."""
    from tir_mlir.runtime.cuda import CudaModule
    from tir_mlir.runtime.signature import Param

    path = Path(path)
    functions, copy = artifact.read_meta(path)
    os.unlink(copy)
    meta = json.loads(Path(str(path) + ".json").read_bytes())
    sigs = {n: [Param.from_json(q) for q in ps] for n, ps in functions.items()}
    needs = meta.get("global_bytes") or {}
    return CudaModule(
        sigs,
        _LibraryBackend(path, functions),
        meta.get("ptx", ""),
        {k: int(v) for k, v in needs.items()},
        target=meta["target"],
    )


class _LibraryBackend:
    """The exported shared object, opened (after checking it again) when first called."""

    def __init__(self, path, functions):
        self.path, self.functions = path, functions

    @functools.cached_property
    def lib(self):
        from tir_mlir.runtime.cuda import device_arch

        built, here = arch_of(target_of(self.path)), device_arch()
        if not runs_on(built, here):
            raise RuntimeCallError(
                f"{self.path}: its kernels are cubins for {built}, which this "
                f"GPU ({here}) cannot run; export it with "
                f'target="cuda -arch={here}"'
            )
        functions, copy = artifact.read_meta(self.path)
        try:
            lib = ctypes.CDLL(copy)
        except OSError as e:
            raise RuntimeCallError(f"{self.path}: cannot load the library ({e})") from None
        finally:
            os.unlink(copy)
        weakref.finalize(self, _ctypes.dlclose, lib._handle)
        embedded = ctypes.string_at(ctypes.addressof(ctypes.c_char.in_dll(lib, artifact.SYMBOL)))
        if embedded.decode(errors="replace") != artifact.signatures_text(functions):
            raise RuntimeCallError(
                f"{self.path}: the signatures in {self.path.name}.json "
                f"differ from the ones compiled into the library"
            )
        return lib

    def entry(self, name):
        def call(descs):
            fn = getattr(self.lib, "_mlir_ciface_" + name)
            fn.restype, fn.argtypes = None, [ctypes.c_void_p] * len(descs)
            fn(*[ctypes.addressof(d) for d in descs])

        return call
