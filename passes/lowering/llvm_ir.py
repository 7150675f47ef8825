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
    return run_tool([LLVM_BIN / "opt", "-O3", *target.tool_flags(), *(["-S"] if text else [])],
                    llvm_ir.encode())


def optimize_and_codegen(llvm_ir: str, target: CpuTarget, filetype: str) -> bytes:
    """`optimize`, then `llc` to assembly or an object. The tools run as a pipe: llc starts
    (and loads LLVM) while opt optimises, which saves a tool start-up on every build."""
    opt_args = [LLVM_BIN / "opt", "-O3", *target.tool_flags()]
    llc_args = [LLVM_BIN / "llc", *LLC_FLAGS, *target.tool_flags(), f"-filetype={filetype}",
                "-o", "-"]
    with tempfile.TemporaryFile() as source, tempfile.TemporaryFile() as opt_err:
        source.write(llvm_ir.encode())
        source.seek(0)
        try:
            opt = subprocess.Popen([str(a) for a in opt_args], stdin=source,
                                   stdout=subprocess.PIPE, stderr=opt_err)
        except OSError as e:
            raise BuildError(f"cannot run opt: {e}") from None
        try:
            llc = subprocess.Popen([str(a) for a in llc_args], stdin=opt.stdout,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as e:
            opt.kill()
            raise BuildError(f"cannot run llc: {e}") from None
        finally:
            opt.stdout.close()             # llc holds the read end now
        out, err = llc.communicate()
        if opt.wait():
            opt_err.seek(0)
            raise BuildError(f"opt failed: {opt_err.read().decode()[-2000:]}")
    if llc.returncode:
        raise BuildError(f"llc failed: {err.decode()[-2000:]}")
    return out


def to_asm(llvm_ir: str, target="llvm") -> str:
    t = target if isinstance(target, CpuTarget) else cpu_target(target)
    return optimize_and_codegen(llvm_ir, t, "asm").decode()


def to_shared_object(llvm_ir: str, target, path, extra=(), flags=()) -> None:
    """Compile LLVM IR into the shared library `path`, linked (as needed) against libomp and
    MLIR's C runner utils (`memrefCopy`); `extra` files and `flags` go on the link line (the
    libraries T.call_extern calls: runtime/extern_libs.py)."""
    t = target if isinstance(target, CpuTarget) else cpu_target(target)
    obj = Path(str(path) + ".o")
    obj.write_bytes(optimize_and_codegen(llvm_ir, t, "obj"))
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
