"""The CPU a build compiles for, read from a target string (`llvm`, `llvm -mcpu=znver4`,
`llvm -mcpu=x86-64 -mattr=+avx2`; default: the host): triple, data layout, CPU name and features.

One description feeds the function attributes of the llvm-dialect module, `opt` and `llc`, so
`--emit asm`, `build` and `export_library` all make the same code. Every function also gets
`+prefer-no-gather,+prefer-no-scatter`: with AVX-512 LLVM otherwise vectorizes a strided loop
with gathers/scatters, which are slower than the contiguous loop (a later `-mattr` overrides),
and a `min-legal-vector-width`: the widest vector it spells out (`widest_vector_bits`)."""

import dataclasses
import functools
import hashlib
import json
import os
import platform
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Optional

from mlir import ir

from tir_mlir.errors import BuildError
from tir_mlir.suggest import did_you_mean
from tir_mlir.ir.user_cache import cache_dir

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
        return [f"-mtriple={self.triple}", f"-mcpu={self.cpu}", f"-mattr={','.join(self.features)}"]

    def annotate(self, module: ir.Module, wider: Optional[Callable] = None):
        """Put the triple and data layout on a module and the CPU and features on each of its
        function definitions (`func.func`s, before their conversion to the llvm dialect, which
        carries them over). They go in `passthrough` as plain strings: a `#llvm.target_features`
        attribute object would import the llvm dialect's Python module (~0.15 s).
        `wider(func)`: bits a function keeps legal beyond the vectors it spells out (the widest
        register where LLVM gets a strided loop, interleaved.py)."""
        attrs = module.operation.attributes
        attrs["llvm.target_triple"] = ir.StringAttr.get(self.triple)
        attrs["llvm.data_layout"] = ir.StringAttr.get(self.data_layout)
        for op in module.body.operations:
            op = op.operation
            if op.name == "func.func" and len(op.regions[0].blocks):
                op.attributes["passthrough"] = ir.ArrayAttr.get(
                    [
                        ir.ArrayAttr.get([ir.StringAttr.get(k), ir.StringAttr.get(v)])
                        for k, v in (
                            ("target-cpu", self.cpu),
                            ("target-features", ",".join(self.features)),
                            (
                                "min-legal-vector-width",
                                str(max(widest_vector_bits(op), wider(op) if wider else 0)),
                            ),
                        )
                    ]
                )


def widest_vector_bits(func: ir.Operation) -> int:
    """The widest 1-D vector (bits) the function asks for: its own vector ops, and the loops it
    hands LLVM's vectorizer with a width (`vectorize = <disable = false, width = W>`: W lanes of
    the narrowest element the loop stores, one register of the target's, affine_to_scf.py).
    This is its `min-legal-vector-width`, as clang sets it from the vectors a C function spells
    out. Without the attribute the x86 backend takes every vector width as required and
    legalizes the wide vectors LLVM makes up itself (SLP's masked loads over a few rows,
    `<56 x float>`) into 512-bit registers even on a CPU whose tuning prefers 256 bits; a
    512-bit op then closes port 1's vector units to the 256-bit FMAs around it. With the
    attribute those split into the preferred width, and a program that asks for wider vectors
    keeps its registers."""
    widest = 0

    def visit(op):
        nonlocal widest
        for value in op.results:
            t = value.type
            if isinstance(t, ir.VectorType) and t.rank:
                # (index lanes: the target's pointer width, 64 bits here)
                widest = max(widest, t.shape[-1] * getattr(t.element_type, "width", 64))
        if "loop_annotation" in op.attributes:
            hint = VECTORIZE_WIDTH.search(str(op.attributes["loop_annotation"]))
            if hint:
                widest = max(widest, int(hint[1]) * _narrowest_stored_bits(op))
        return ir.WalkResult.ADVANCE

    func.walk(visit, ir.WalkOrder.PRE_ORDER)
    return widest


VECTORIZE_WIDTH = re.compile(r"vectorize = <disable = false, width = (\d+)")


def _narrowest_stored_bits(loop: ir.Operation) -> int:
    """The narrowest element (of 8 bits or more) a loop stores to memory; 32 when none."""
    widths = []

    def visit(op):
        if op.name in ("memref.store", "vector.store"):
            width = getattr(ir.MemRefType(op.operands[1].type).element_type, "width", 0)
            if width >= 8:
                widths.append(width)
        return ir.WalkResult.ADVANCE

    loop.walk(visit, ir.WalkOrder.PRE_ORDER)
    return min(widths, default=32)


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
    return _cached_probe(triple, opts.get("mcpu", "native"), opts.get("mattr", ""))


@functools.lru_cache(maxsize=None)
def _cached_probe(triple: str, cpu: str, mattr: str) -> CpuTarget:
    """`_probe`, kept in the user cache folder (it runs a tool: ~35 ms of a cold start), under
    a hash of its arguments, the `opt` binary and, for "native", the host's /proc/cpuinfo."""
    folder = cache_dir()
    if folder is None:
        return _probe(triple, cpu, mattr)
    opt = (LLVM_BIN / "opt").stat()
    host = _cpuinfo() if cpu == "native" else ""
    tag = hashlib.sha256(
        f"{triple}\0{cpu}\0{mattr}\0{opt.st_size}:{opt.st_mtime_ns}\0{host}".encode()
    ).hexdigest()[:20]
    path = folder / f"target-{tag}.json"
    try:
        fields: Dict[str, Any] = {
            k: tuple(v) if k == "features" else v for k, v in json.loads(path.read_text()).items()
        }
        return CpuTarget(**fields)
    except (OSError, ValueError, TypeError):
        pass
    target = _probe(triple, cpu, mattr)
    tmp = folder / f"{path.name}.{os.getpid()}.tmp"
    try:
        tmp.write_text(json.dumps(dataclasses.asdict(target)))
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
    return target


def _cpuinfo() -> str:
    """The first processor's entry of /proc/cpuinfo, less its changing clock speed."""
    try:
        text = Path("/proc/cpuinfo").read_text().split("\n\n")[0]
    except OSError:
        return platform.processor()
    return "\n".join(line for line in text.splitlines() if not line.startswith("cpu MHz"))


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
    unknown = re.search(r"'([^']*)' is not a recognized (processor|feature)", err)
    if unknown:
        raise BuildError(_unknown_name(triple, unknown[2], unknown[1]))
    if p.returncode:
        first = err.strip().splitlines()[0] if err.strip() else f"opt exited {p.returncode}"
        raise BuildError(
            f"target -mcpu={cpu}" + (f" -mattr={mattr}" if mattr else "") + f": {first}"
        )
    out = p.stdout.decode()
    layout = re.search(r'target datalayout = "([^"]*)"', out)
    if layout is None:
        raise BuildError(f"LLVM has no target for triple {triple!r}")
    name = re.search(r'"target-cpu"="([^"]*)"', out)
    features = re.search(r'"target-features"="([^"]*)"', out)
    return CpuTarget(
        triple,
        layout.group(1),
        name.group(1) if name else cpu,
        ALWAYS_FEATURES + tuple(f for f in (features.group(1) if features else "").split(",") if f),
    )


def _unknown_name(triple: str, kind: str, name: str) -> str:
    """The error for a CPU (`-mcpu`) or feature (`-mattr`) LLVM does not know, with the
    closest names it knows (what LLVM would only warn about, ignoring the name)."""
    option, heading = (
        ("-mcpu", "Available CPUs") if kind == "processor" else ("-mattr", "Available features")
    )
    known = []
    try:
        listing = subprocess.run(
            [str(LLVM_BIN / "llc"), f"-mtriple={triple}", "-mcpu=help"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        ).stderr
        part = listing.split(heading, 1)[1].split("Available", 1)[0]
        known = re.findall(r"^\s+(\S+)\s+- ", part, re.MULTILINE)
    except (OSError, IndexError):
        pass
    bare = name.lstrip("+-")
    hint = did_you_mean(bare, known)
    what = "CPU" if kind == "processor" else "CPU feature"
    return (
        f"target {option}: LLVM does not know the {what} {bare!r} for {triple}{hint}; "
        f"`llc -mtriple={triple} -mcpu=help` lists those it knows"
    )
