"""Stages past the llvm dialect, done by the shipped LLVM tools: `mlir-translate` to LLVM IR, then
`opt -O3` (the loop vectorizer and unroller read the loop annotations) and `llc` to asm/object."""
import subprocess
from pathlib import Path

from mlir import ir

from tir_mlir.errors import BuildError

# The site-packages that holds the `mlir` wheel (also where the LLVM tools and libomp wheels sit).
# (`mlir` is a namespace package: anchor on a module file, not on `mlir.__path__`.)
_SITE = Path(ir.__file__).resolve().parent.parent
MLIR_BIN = _SITE / "mlir" / "bin"
LLVM_BIN = _SITE / "llvm" / "bin"
MLIR_LIB = _SITE / "mlir" / "lib"
LIBOMP = _SITE / "cmeel.prefix" / "lib" / "libomp.so"
CPU = "native"


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
    text = module.operation.get_asm(enable_debug_info=True).encode()
    return run_tool([MLIR_BIN / "mlir-translate", "--mlir-to-llvmir"], text).decode()


def optimize(llvm_ir: str) -> bytes:
    return run_tool([LLVM_BIN / "opt", "-O3", f"-mcpu={CPU}", "-S"], llvm_ir.encode())


def to_asm(llvm_ir: str) -> str:
    return run_tool([LLVM_BIN / "llc", "-O3", f"-mcpu={CPU}"], optimize(llvm_ir)).decode()


def to_object(llvm_ir: str, path) -> None:
    run_tool([LLVM_BIN / "llc", "-O3", f"-mcpu={CPU}", "-filetype=obj", "-relocation-model=pic",
              "-o", path], optimize(llvm_ir))
