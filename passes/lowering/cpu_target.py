"""The CPU a build compiles for, read from a target string (`llvm`, `llvm -mcpu=znver4`,
`llvm -mcpu=x86-64 -mattr=+avx2`; default: the host): triple, data layout, CPU name and features.

One description feeds the function attributes of the llvm-dialect module, `opt` and `llc`, so
`--emit asm`, `build` and `export_library` all make the same code. Every function also gets
`+prefer-no-gather,+prefer-no-scatter`: with AVX-512 LLVM otherwise vectorizes a strided loop
with gathers/scatters, which are slower than the contiguous loop (a later `-mattr` overrides)."""
import functools
import platform
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from mlir import ir

from tir_mlir.errors import BuildError

LLVM_BIN = Path(ir.__file__).resolve().parent.parent / "llvm" / "bin"
ALWAYS_FEATURES = ("+prefer-no-gather", "+prefer-no-scatter")
HONOURED_OPTIONS = ("mcpu", "mattr", "mtriple")


@dataclass(frozen=True)
class CpuTarget:
    triple: str
    data_layout: str
    cpu: str
    features: tuple

    def tool_flags(self) -> list:
        """The `opt`/`llc` flags that build the same target machine as the function attributes."""
        return [f"-mtriple={self.triple}", f"-mcpu={self.cpu}",
                f"-mattr={','.join(self.features)}"]

    def annotate(self, module: ir.Module):
        """Put the triple and data layout on a module and the CPU and features on each of its
        function definitions (`func.func`s, before their conversion to the llvm dialect, which
        carries them over). They go in `passthrough` as plain strings: a `#llvm.target_features`
        attribute object would import the llvm dialect's Python module (~0.15 s)."""
        attrs = module.operation.attributes
        attrs["llvm.target_triple"] = ir.StringAttr.get(self.triple)
        attrs["llvm.data_layout"] = ir.StringAttr.get(self.data_layout)
        passthrough = ir.ArrayAttr.get([
            ir.ArrayAttr.get([ir.StringAttr.get(k), ir.StringAttr.get(v)])
            for k, v in (("target-cpu", self.cpu), ("target-features", ",".join(self.features)))])
        for op in module.body.operations:
            op = op.operation
            if op.name == "func.func" and len(op.regions[0].blocks):
                op.attributes["passthrough"] = passthrough


def target_options(target) -> dict:
    """`-key=value` options of a target string (TVM's syntax); options other than
    HONOURED_OPTIONS (`-num-cores`, `-keys`, ...) are accepted and ignored."""
    options = {}
    for word in str(target).split()[1:]:
        key, eq, value = word.lstrip("-").partition("=")
        if not word.startswith("-") or not eq:
            raise BuildError(f"target {str(target)!r}: expected -option=value, got {word!r}")
        options[key] = value
    return options


def cpu_target(target="llvm") -> CpuTarget:
    opts = target_options(target)
    triple = opts.get("mtriple") or f"{platform.machine()}-unknown-linux-gnu"
    return _probe(triple, opts.get("mcpu", "native"), opts.get("mattr", ""))


@functools.lru_cache(maxsize=None)
def _probe(triple: str, cpu: str, mattr: str) -> CpuTarget:
    """Ask `opt` what target attributes it gives a function for this CPU ("native": the host's
    name and its full feature list, as LLVM's own JIT detects them)."""
    src = f'target triple = "{triple}"\ndefine void @f() {{ ret void }}\n'
    args = [str(LLVM_BIN / "opt"), f"-mcpu={cpu}", "-S"] + ([f"-mattr={mattr}"] if mattr else [])
    try:
        p = subprocess.run(args, input=src.encode(), capture_output=True)
    except OSError as e:
        raise BuildError(f"cannot run opt: {e}") from None
    err = p.stderr.decode()
    if p.returncode or "not a recognized" in err:
        raise BuildError(f"target -mcpu={cpu} -mattr={mattr}: {err.strip()[-500:]}")
    out = p.stdout.decode()
    layout = re.search(r'target datalayout = "([^"]*)"', out)
    if layout is None:
        raise BuildError(f"LLVM has no target for triple {triple!r}")
    name = re.search(r'"target-cpu"="([^"]*)"', out)
    features = re.search(r'"target-features"="([^"]*)"', out)
    return CpuTarget(triple, layout.group(1), name.group(1) if name else cpu,
                     ALWAYS_FEATURES + tuple(f for f in (features.group(1) if features else "")
                                             .split(",") if f))
