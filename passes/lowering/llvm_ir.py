"""Stages past the llvm dialect: LLVM IR (translated in-process), then the shipped LLVM tools:
`opt -O3` (the loop vectorizer and unroller read the loop annotations) and `llc` to assembly or
to the object the runtime links and loads. Assembly and object come from the same optimised
bitcode through the same `llc` flags, so `--emit asm` shows the very code that runs."""

import subprocess
import tempfile
from pathlib import Path

from mlir import ir

from tir_mlir.errors import BuildError
from tir_mlir.passes.lowering.cpu_target import LLVM_BIN, CpuTarget, cpu_target

# The site-packages that holds the `mlir` wheel (also where the LLVM tools and libomp wheels sit).
# (`mlir` is a namespace package: anchor on a module file, not on `mlir.__path__`.)
_SITE = Path(ir.__file__).resolve().parent.parent
MLIR_BIN = _SITE / "mlir" / "bin"
MLIR_LIB = _SITE / "mlir" / "lib"
LIBOMP = _SITE / "cmeel.prefix" / "lib" / "libomp.so"
C_RUNNER_UTILS = MLIR_LIB / "libmlir_c_runner_utils.so"
# Position-independent code, so the object links into a shared library.
LLC_FLAGS = ["-O3", "-relocation-model=pic"]
# LoopIdiomRecognize (loops to memset/memcpy) ran for minutes on some tuner candidates (a
# softmax whose row sum is recomputed per element: an OpenMP body of 1000 instructions), where
# the whole -O3 pipeline without it takes 0.1 s; our loops are vectorized stores already.
OPT_FLAGS = ["-O3", "-disable-loop-idiom-all"]


def run_tool(args, data: bytes) -> bytes:
    try:
        p = subprocess.run([str(a) for a in args], input=data, capture_output=True, check=False)
    except OSError as e:
        raise BuildError(f"cannot run {args[0]}: {e}") from None
    if p.returncode:
        raise BuildError(f"{Path(str(args[0])).name} failed: {p.stderr.decode()[-2000:]}")
    return p.stdout


def to_llvm_ir(module: ir.Module) -> str:
    """LLVM IR of a module in the llvm dialect (not yet optimised)."""
    # (from the extension itself: `mlir.dialects.llvm` costs ~0.15 s to import)
    from mlir._mlir_libs._mlirDialectsLLVM import translate_module_to_llvmir

    try:
        return translate_module_to_llvmir(module.operation)
    except Exception as e:  # noqa: BLE001 - the bindings raise a bare RuntimeError
        raise BuildError(f"translation to LLVM IR failed: {e}") from None


def optimize(llvm_ir: str, target: CpuTarget, text: bool = False) -> bytes:
    """`opt -O3` of LLVM IR text, as bitcode (`text`: as LLVM IR text)."""
    return run_tool(
        [LLVM_BIN / "opt", *OPT_FLAGS, *target.tool_flags(), *(["-S"] if text else [])],
        llvm_ir.encode(),
    )


class CompileTools:
    """`opt -O3 | llc` (to assembly or an object), started before their input exists: each tool
    loads LLVM (~15 ms) while the caller is still lowering the program, and llc waits on opt's
    output. `run(llvm_ir)` feeds them and returns llc's output; `close()` stops unused ones."""

    def __init__(self, target: CpuTarget, filetype: str):
        opt_args = [LLVM_BIN / "opt", *OPT_FLAGS, *target.tool_flags()]
        llc_args = [
            LLVM_BIN / "llc",
            *LLC_FLAGS,
            *target.tool_flags(),
            f"-filetype={filetype}",
            "-o",
            "-",
        ]
        self._opt_err = tempfile.TemporaryFile()
        self.opt = self.llc = None
        try:
            opt = self.opt = subprocess.Popen(
                [str(a) for a in opt_args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._opt_err,
            )
            try:
                self.llc = subprocess.Popen(
                    [str(a) for a in llc_args],
                    stdin=opt.stdout,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
            finally:
                if opt.stdout is not None:  # (a pipe: always)
                    opt.stdout.close()  # llc holds the read end now
        except OSError as e:
            self.close()
            raise BuildError(f"cannot run the LLVM tools: {e}") from None

    def run(self, llvm_ir: str) -> bytes:
        opt, llc = self.opt, self.llc
        # started by __init__, which raises when it cannot start them
        assert opt is not None and opt.stdin is not None and llc is not None
        try:
            try:
                opt.stdin.write(llvm_ir.encode())  # opt reads it all before it writes
                opt.stdin.close()
            except BrokenPipeError:
                pass  # opt failed: reported below
            out, err = llc.communicate()
            if opt.wait():
                self._opt_err.seek(0)
                raise BuildError(f"opt failed: {self._opt_err.read().decode()[-2000:]}")
            if llc.returncode:
                raise BuildError(f"llc failed: {err.decode()[-2000:]}")
            return out
        finally:
            self.close()

    def close(self):
        for p in (self.opt, self.llc):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
            for f in (p.stdin, p.stdout, p.stderr) if p is not None else ():
                if f is not None and not f.closed:
                    f.close()
        self._opt_err.close()


def optimize_and_codegen(llvm_ir: str, target: CpuTarget, filetype: str) -> bytes:
    """`optimize`, then `llc` to assembly or an object (CompileTools)."""
    return CompileTools(target, filetype).run(llvm_ir)


def to_asm(llvm_ir: str, target="llvm") -> str:
    t = target if isinstance(target, CpuTarget) else cpu_target(target)
    return optimize_and_codegen(llvm_ir, t, "asm").decode()


def to_shared_object(llvm_ir: str, target, path, extra=(), flags=(), tools=None) -> None:
    """Compile LLVM IR into the shared library `path`, linked (as needed) against libomp and
    MLIR's C runner utils (`memrefCopy`); `extra` files and `flags` go on the link line (the
    libraries T.call_extern calls: runtime/extern_libs.py). `tools`: CompileTools(target,
    "obj") already started."""
    t = target if isinstance(target, CpuTarget) else cpu_target(target)
    obj = Path(str(path) + ".o")
    obj.write_bytes((tools or CompileTools(t, "obj")).run(llvm_ir))
    cmd = ["cc", "-shared", "-o", str(path), str(obj), *extra, *flags, "-Wl,--as-needed"]
    for lib in (LIBOMP, C_RUNNER_UTILS):
        cmd += [f"-L{lib.parent}", f"-l:{lib.name}", f"-Wl,-rpath,{lib.parent}"]
    # Bind expf & co to libm's current symbol versions: an unversioned reference gets glibc's
    # oldest, the error-handling compat wrapper (a softmax's exp ran ~1.5x slower on it).
    cmd += ["-lm"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise BuildError(f"cannot run the C compiler to link {path}: {e}") from None
    finally:
        obj.unlink(missing_ok=True)
    if p.returncode:
        raise BuildError(f"linking {path} failed: {p.stderr[-2000:]}")
