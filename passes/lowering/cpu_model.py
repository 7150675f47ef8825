"""The target CPU as the lowering heuristics see it: its vector register file, its L1 data cache
and the page its hardware prefetchers stay within. Every number comes from the target (`llvm
-mcpu=... -mattr=...`; `llvm` alone or `-mcpu=native`: the host), none from timings on one
machine:

    vector registers, width   LLVM's subtarget features for the CPU and `-mattr` (`features`):
                              +avx512f: 32 x 512 bits (EVEX encodes 32 registers), else +avx:
                              16 x 256, else 16 x 128 (SSE2, part of x86-64); AArch64: 32 x 128
                              (NEON).
    L1D sets, ways, line      the host's (native): /sys/devices/system/cpu/cpu0/cache/index*/
                              (the level 1 Data cache: number_of_sets, ways_of_associativity,
                              coherency_line_size, CPUID leaf 4 as the kernel reads it); a named
                              CPU: its vendor's documented L1D (`L1D_BY_CPU`); any other (a
                              generic ISA level such as x86-64-v3): 32 KiB, 8 ways, 64-byte
                              lines, what LLVM's X86 cost model assumes for every x86 CPU
                              (X86TTIImpl::getCacheSize / getCacheAssociativity).
    L2 sets, ways              the same way (sysfs: the level 2 cache; a named CPU: `L2_BY_CPU`,
                              its vendor's per-core L2; else 256 KiB, 8 ways, LLVM's X86 cost
                              model's L2).
    FMA chains                per register width, the FMA's latency over its reciprocal
                              throughput in LLVM's scheduling model for the CPU (`llvm-mca
                              -instruction-info` on one `vfmadd231ps` per width): the independent
                              accumulations that keep the FMA units busy (Skylake server: 4 /
                              0.5 = 8; Zen 4 zmm: 4 / 1 = 4; x86-64-v3: 5 / 0.5 = 10); a CPU
                              LLVM has no x86 model for: DEFAULT_FMA_CHAINS.
    FMA queue                 the entries of the scheduler queue the FMA's micro-ops wait in
                              for their operands, in LLVM's scheduling model (`llvm-mca
                              -scheduler-stats` on a chain of `vfmadd231ps`: Skylake server's
                              unified queue 60, Sapphire Rapids' queue of ports 0, 1, 5, 6 and
                              10: 112, Zen 4's FP queue 64): how many FMAs of later iterations
                              the core holds while one chain waits; DEFAULT_FMA_QUEUE without
                              an x86 model.
    shuffles per cycle        per register width, one over the reciprocal throughput of
                              `vshufps` in LLVM's scheduling model (`shuffle_ports`): the ports
                              that take the lane inserts of a gather beside ops of that width
                              (Ice Lake and later Intel cores, Zen 4 and 5: 2 up to ymm, 1 for
                              zmm, whose ops take port 1 on Intel; Skylake server, Haswell and
                              x86-64-v3: 1 at every width); a target LLVM has no x86 model for:
                              DEFAULT_SHUFFLE_PORTS.
    prefetch page             4 KiB: the L1 and L2 hardware prefetchers of Intel and AMD cores
                              follow a stream only within a 4 KiB page (Intel's optimization
                              reference manual, "Data Prefetching"; AMD's software optimization
                              guides for Zen), whatever page size the OS maps.

A named CPU never reads the host, so `--target "llvm -mcpu=znver4"` lowers to the same code on
every machine.
"""

import functools
import re
import subprocess
from dataclasses import dataclass
from typing import Optional
from pathlib import Path

from mlir import ir
from mlir.passmanager import PassManager

from tir_mlir.ir.user_cache import tool_answer
from tir_mlir.passes.lowering.cpu_target import (
    ALWAYS_FEATURES,
    LLVM_BIN,
    CpuTarget,
    cpu_target,
    target_options,
)

PAGE_BYTES = 4096
SYSFS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")
# LLVM CPU name -> (L1D KiB, ways), 64-byte lines. Intel: the optimization reference manual's
# cache tables (Skylake server 32 KiB 8-way; Sunny Cove, Willow Cove, Cypress Cove, Golden Cove
# and Raptor Cove 48 KiB 12-way). AMD: the software optimization guides (Zen 1-4 32 KiB 8-way,
# Zen 5 48 KiB 12-way).
L1D_BY_CPU = {
    **{
        cpu: (32, 8)
        for cpu in (
            "haswell",
            "broadwell",
            "skylake",
            "skylake-avx512",
            "cascadelake",
            "cooperlake",
            "cannonlake",
            "znver1",
            "znver2",
            "znver3",
            "znver4",
        )
    },
    **{
        cpu: (48, 12)
        for cpu in (
            "icelake-client",
            "icelake-server",
            "tigerlake",
            "rocketlake",
            "alderlake",
            "raptorlake",
            "sapphirerapids",
            "emeraldrapids",
            "znver5",
        )
    },
}
DEFAULT_L1D = (32, 8)
# LLVM CPU name -> (per-core L2 KiB, ways), from the same sources: Haswell and Broadwell 256 KiB
# 8-way; Skylake client and Cannon Lake 256 KiB 4-way; Skylake server, Cascade Lake, Cooper Lake
# 1 MiB 16-way; Ice Lake client and Rocket Lake 512 KiB 8-way; Ice Lake server and Tiger Lake
# 1.25 MiB 20-way; Alder Lake (Golden Cove) 1.25 MiB 10-way; Raptor Lake, Sapphire and Emerald
# Rapids 2 MiB 16-way; Zen 1-3 512 KiB 8-way; Zen 4 1 MiB 8-way; Zen 5 1 MiB 16-way.
L2_BY_CPU = {
    "haswell": (256, 8),
    "broadwell": (256, 8),
    "skylake": (256, 4),
    "cannonlake": (256, 4),
    "skylake-avx512": (1024, 16),
    "cascadelake": (1024, 16),
    "cooperlake": (1024, 16),
    "icelake-client": (512, 8),
    "rocketlake": (512, 8),
    "icelake-server": (1280, 20),
    "tigerlake": (1280, 20),
    "alderlake": (1280, 10),
    "raptorlake": (2048, 16),
    "sapphirerapids": (2048, 16),
    "emeraldrapids": (2048, 16),
    "znver1": (512, 8),
    "znver2": (512, 8),
    "znver3": (512, 8),
    "znver4": (1024, 8),
    "znver5": (1024, 16),
}
DEFAULT_L2 = (256, 8)
DEFAULT_LINE = 64
# FMA latency 4 x 2 FMA units: what most x86 cores since Skylake have.
DEFAULT_FMA_CHAINS = 8
# Skylake server's unified scheduler queue in LLVM's model (SKXPortAny), the smallest of the
# x86 cores with two FMA units.
DEFAULT_FMA_QUEUE = 60
# The vector width of a stage without a CPU target (a bare instance, the GPU pipeline).
VECTOR_BITS = 512
REGISTER_NAMES = {128: "xmm", 256: "ymm", 512: "zmm"}
# Shuffles per cycle by register width when LLVM's model cannot say (not x86): those of Intel's
# cores since Ice Lake, two shuffle ports (1 and 5) beside vector ops of at most 256 bits, one
# beside 512-bit ops (which take ports 0 and 1 together).
DEFAULT_SHUFFLE_PORTS = ((128, 2), (256, 2), (512, 1))


@dataclass(frozen=True)
class CpuModel:
    cpu: str  # LLVM's name for it
    vector_registers: int
    vector_bits: int  # the widest vector register
    l1d_sets: int
    l1d_ways: int
    line_bytes: int
    page_bytes: int = PAGE_BYTES
    fma_chains_by_bits: tuple = ()  # ((register bits, chains), ...), narrowest first
    l2_sets: int = DEFAULT_L2[0] * 1024 // (DEFAULT_L2[1] * DEFAULT_LINE)
    l2_ways: int = DEFAULT_L2[1]
    fma_queue: int = DEFAULT_FMA_QUEUE  # FMA micro-ops waiting for operands the core holds

    def vector_lanes(self, element_bits: int) -> int:
        """Elements of `element_bits` one vector register holds."""
        return max(1, self.vector_bits // element_bits)

    def fma_chains(self, value_bits: int) -> int:
        """Independent FMA chains that keep the FMA units busy on values of `value_bits`
        (a scalar: its own width), in the narrowest register that holds them."""
        for bits, chains in self.fma_chains_by_bits:
            if value_bits <= bits:
                return chains
        return self.fma_chains_by_bits[-1][1] if self.fma_chains_by_bits else DEFAULT_FMA_CHAINS


def cpu_model(target="llvm") -> CpuModel:
    """The model of a CPU target string (`cpu`, `llvm`, `llvm -mcpu=znver4 -mattr=-avx512f`)."""
    words = str(target).split()
    return _model(" ".join(["llvm"] + words[1:]))


class VectorStage:
    """A CPU stage whose one target parameter is the width of the widest vector register."""

    def __init__(self, vector_bits: int = VECTOR_BITS):
        self.vector_bits = vector_bits

    @classmethod
    def for_target(cls, target):
        return cls(cpu_model(target).vector_bits)


@functools.cache
def _model(target: str) -> CpuModel:
    t = cpu_target(target)
    native = target_options(target).get("mcpu", "native") == "native"
    registers, bits = register_file(t.triple, implied_features(t))
    sets, ways, line = (host_l1d() if native else None) or named_l1d(t.cpu)
    l2_sets, l2_ways, _ = (host_cache(2, ("Unified", "Data")) if native else None) or named_l2(
        t.cpu
    )
    chains = fma_chains(t, bits) if t.triple.startswith("x86_64") else ()
    return CpuModel(
        t.cpu,
        registers,
        bits,
        sets,
        ways,
        line,
        fma_chains_by_bits=chains,
        l2_sets=l2_sets,
        l2_ways=l2_ways,
        fma_queue=(fma_queue(t) if t.triple.startswith("x86_64") else None) or DEFAULT_FMA_QUEUE,
    )


def register_file(triple: str, features) -> tuple:
    """(vector registers, bits each) of a triple with these subtarget features."""
    f = set(features)
    if triple.startswith(("aarch64", "arm64")):
        return 32, 128
    if "+avx512f" in f:
        return 32, 512
    if "+avx" in f:
        return 16, 256
    return 16, 128


@functools.cache
def implied_features(t: CpuTarget) -> tuple:
    """Every feature LLVM's subtarget has for the CPU and the given features: the MLIR pass
    `llvm-target-to-target-features` builds LLVM's TargetMachine and lists them (a CPU named
    without `-mattr` has no features of its own in `CpuTarget`)."""
    x86 = t.triple.startswith(("x86_64", "i386", "i686"))
    given = ", ".join(f'"{f}"' for f in t.features if x86 or f not in ALWAYS_FEATURES)
    with ir.Context():
        module = ir.Module.parse(
            f'module attributes {{llvm.target = #llvm.target<triple = "{t.triple}", '
            f'chip = "{t.cpu}", features = <[{given}]>>}} {{}}'
        )
        PassManager.parse("builtin.module(llvm-target-to-target-features)").run(module.operation)
        # (as text: an attribute object would import the llvm dialect's Python module)
        text = str(module.operation.get_asm())  # (a str: not binary)
    listed = text.split("features = <[", 1)[1].split("]>", 1)[0] if "features = <[" in text else ""
    return tuple(f.strip().strip('"') for f in listed.split(",") if f.strip())


def host_l1d():
    """(sets, ways, line bytes) of the host's level 1 data cache, or None when the kernel does
    not say (a container without sysfs)."""
    return host_cache(1, ("Data", "Unified"))


def host_cache(level: int, kinds) -> Optional[tuple]:
    """(sets, ways, line bytes) of the host's first cache of `level` whose type is one of
    `kinds`, or None when the kernel does not say."""
    for index in sorted(SYSFS_CACHE.glob("index*")):
        try:
            if (index / "level").read_text().strip() != str(level) or (
                index / "type"
            ).read_text().strip() not in kinds:
                continue
            sets, ways, line = (
                int((index / name).read_text())
                for name in ("number_of_sets", "ways_of_associativity", "coherency_line_size")
            )
        except (OSError, ValueError):
            return None
        return (sets, ways, line) if sets > 0 and ways > 0 and line > 0 else None
    return None


def named_l1d(cpu: str) -> tuple:
    """(sets, ways, line bytes) of a named CPU's L1D (`L1D_BY_CPU`, else LLVM's default)."""
    kib, ways = L1D_BY_CPU.get(cpu, DEFAULT_L1D)
    return kib * 1024 // (ways * DEFAULT_LINE), ways, DEFAULT_LINE


def named_l2(cpu: str) -> tuple:
    """(sets, ways, line bytes) of a named CPU's per-core L2 (`L2_BY_CPU`, else LLVM's
    default)."""
    kib, ways = L2_BY_CPU.get(cpu, DEFAULT_L2)
    return kib * 1024 // (ways * DEFAULT_LINE), ways, DEFAULT_LINE


_MCA_ROW = re.compile(r"^\s*\d+\s+(\d+)\s+([\d.]+)\s.*vfmadd231ps\s+%([xyz])mm", re.M)


def fma_chains(t: CpuTarget, widest: int) -> tuple:
    """((register bits, FMA latency / reciprocal throughput), ...) of an x86 CPU for each
    register width up to `widest`, from LLVM's scheduling model (`llvm-mca`); () when the tool
    cannot say. Kept in the user cache folder (a tool run: ~30 ms of a cold start)."""
    widths = [b for b in REGISTER_NAMES if b <= widest]
    key = f"{t.cpu}\0{','.join(t.features)}\0{widths}"
    chains = tool_answer("fma", LLVM_BIN / "llvm-mca", key, lambda: _probe_fma(t, widths))
    return tuple(tuple(x) for x in chains) if chains else ()


def _probe_fma(t: CpuTarget, widths) -> tuple:
    src = "".join(
        f"vfmadd231ps %{REGISTER_NAMES[b]}1, %{REGISTER_NAMES[b]}2, %{REGISTER_NAMES[b]}0\n"
        for b in widths
    )
    found = {}
    for latency, throughput, reg in _MCA_ROW.findall(_mca(t, src)):
        if float(throughput) > 0:
            found[{"x": 128, "y": 256, "z": 512}[reg]] = max(
                1, round(int(latency) / float(throughput))
            )
    return tuple((b, found[b]) for b in widths if b in found)


def fma_queue(t: CpuTarget) -> Optional[int]:
    """The entries of the scheduler queue an x86 CPU's FMAs wait in, from LLVM's scheduling
    model (`llvm-mca -scheduler-stats` on one chain of dependent FMAs, which fills the queue it
    uses); None when the tool cannot say. Kept in the user cache folder like `fma_chains`."""
    key = f"{t.cpu}\0{','.join(t.features)}"
    return tool_answer("fma-queue", LLVM_BIN / "llvm-mca", key, lambda: _probe_fma_queue(t))


# A row of the scheduler's queue usage: resource, average, most and all entries.
_MCA_QUEUE = re.compile(r"^(\S+)\s+\d+\s+(\d+)\s+(\d+)\s*$", re.M)


def _probe_fma_queue(t: CpuTarget) -> Optional[int]:
    text = _mca(t, "vfmadd231ps %xmm1, %xmm2, %xmm0\n", ("-scheduler-stats",))
    text = text.split("Scheduler's queue usage", 1)[-1] if "queue usage" in text else ""
    used = [int(total) for _, most, total in _MCA_QUEUE.findall(text) if int(most) > 0]
    return max(used) if used else None


_MCA_SHUFFLE = re.compile(r"^\s*\d+\s+\d+\s+([\d.]+)\s.*vshufps\s+\$\d+, %([xyz])mm", re.M)


def shuffles_per_cycle(t: CpuTarget, value_bits: int) -> int:
    """Shuffles (lane inserts) per cycle beside vector ops on `value_bits` bits: those of the
    narrowest register that holds them, else of the widest (`shuffle_ports`)."""
    ports = shuffle_ports(t)
    for bits, n in ports:
        if value_bits <= bits:
            return n
    return ports[-1][1]


@functools.cache
def shuffle_ports(t: CpuTarget) -> tuple:
    """((register bits, shuffles per cycle), ...) of a CPU, narrowest first: one over the
    reciprocal throughput of `vshufps` at each register width up to the widest, in LLVM's
    scheduling model (`llvm-mca`); DEFAULT_SHUFFLE_PORTS when it cannot say (not x86, no
    tool). Kept in the user cache folder like `fma_chains`."""
    if not t.triple.startswith("x86_64"):
        return DEFAULT_SHUFFLE_PORTS
    widths = [b for b in REGISTER_NAMES if b <= register_file(t.triple, implied_features(t))[1]]
    key = f"{t.cpu}\0{','.join(t.features)}\0{widths}"
    found = tool_answer("shuffle", LLVM_BIN / "llvm-mca", key, lambda: _probe_shuffle(t, widths))
    return tuple(tuple(x) for x in found) if found else DEFAULT_SHUFFLE_PORTS


def _probe_shuffle(t: CpuTarget, widths) -> tuple:
    src = "".join(
        f"vshufps $27, %{REGISTER_NAMES[b]}1, %{REGISTER_NAMES[b]}2, %{REGISTER_NAMES[b]}0\n"
        for b in widths
    )
    found = {}
    for throughput, reg in _MCA_SHUFFLE.findall(_mca(t, src)):
        if float(throughput) > 0:
            found[{"x": 128, "y": 256, "z": 512}[reg]] = max(1, round(1 / float(throughput)))
    return tuple((b, found[b]) for b in widths if b in found)


def _mca(
    t: CpuTarget, src: str, options=("-instruction-info", "-iterations=1", "-resource-pressure=0")
) -> str:
    """`llvm-mca`'s report for `src` on the target ("" when it cannot run): by default its
    `-instruction-info` table."""
    features = [f for f in t.features if f not in ALWAYS_FEATURES]
    args = [
        str(LLVM_BIN / "llvm-mca"),
        f"-mtriple={t.triple}",
        f"-mcpu={t.cpu}",
        *options,
    ] + ([f"-mattr={','.join(features)}"] if features else [])
    try:
        p = subprocess.run(args, input=src.encode(), capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return p.stdout.decode()
