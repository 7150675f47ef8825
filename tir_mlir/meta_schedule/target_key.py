"""Targets as database keys: a record measured on one CPU must not be applied to another, so
"llvm" (or "cpu") is stored with the host CPU's name and core count filled in:
"llvm -mcpu=znver3 -num-cores=16". Of the flags given, those that tell machines apart are
kept (MACHINE_FLAGS); the rest (TVM's -keys, -mtriple, thread limits) follow from them, and
TVM's JSON records keep only these."""

import functools
import os
import re
import subprocess


@functools.lru_cache(maxsize=None)
def host_cpu() -> str:
    """LLVM's name for this machine's CPU (what -mcpu=native compiles for)."""
    from tir_mlir.passes.lowering.cpu_target import LLVM_BIN

    try:
        out = subprocess.run(
            [str(LLVM_BIN / "llc"), "--version"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    m = re.search(r"Host CPU:\s*(\S+)", out)
    return m[1] if m else "unknown"


MACHINE_FLAGS = ("mcpu", "num-cores", "arch", "mattr")


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def canonical_target(target) -> str:
    """The key of `target` (a string such as "llvm", "cpu", "llvm -mcpu=skylake", "cuda")."""
    words = str(target).split()
    if not words:
        raise ValueError("empty target")
    kind, flags = words[0], {}
    k = 1
    while k < len(words):
        key, eq, val = words[k].lstrip("-").partition("=")
        if not eq and k + 1 < len(words) and not words[k + 1].startswith("-"):
            val, k = words[k + 1], k + 1  # "-num-cores 2"
        if key in MACHINE_FLAGS:
            flags[key] = val
        k += 1
    if kind in ("llvm", "cpu"):
        kind = "llvm"
        flags.setdefault("mcpu", host_cpu())
        flags.setdefault("num-cores", str(_cores()))
    return " ".join([kind] + [f"-{k}={v}" if v else f"-{k}" for k, v in sorted(flags.items())])
