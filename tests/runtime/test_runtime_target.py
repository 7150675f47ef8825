"""One target machine for `--emit asm`, `build` and `export_library`: the asm shown is the code
that runs, `-mcpu=` is honoured, every function prefers no gather/scatter; the OpenMP thread
count comes from the environment at run time and tiny parallel loops do not fork."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tir_mlir
from tir_mlir.errors import BuildError
from tir_mlir.passes.lowering.cpu_target import LLVM_BIN, cpu_target
from tir_mlir.passes.lowering.pipeline import emit_text

import lowering_programs as P

HERE = Path(__file__).parent
DATA = HERE.parent / "data" / "programs"
RNG = np.random.default_rng(0)


def _scheduled_matmul():
    """A parallel, vectorized matmul (an OpenMP-outlined function, vector code)."""
    sch = tir_mlir.Schedule(tir_mlir.load(str(DATA / "matmul.tir")))
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, factors=[None, 16])
    sch.reorder(i, j0, k, j1)
    sch.parallel(i)
    sch.vectorize(j1)
    return sch.mod


def _functions(objdump: str) -> dict:
    """Symbol -> its instructions, with addresses, branch targets and rip-relative
    displacements (which linking changes) left out."""
    out, current = {}, None
    for line in objdump.splitlines():
        head = re.match(r"^<(.+)>:$", line.strip())
        if head:
            current = out.setdefault(head.group(1), [])
        elif current is not None and line.strip() and not line.startswith("Disassembly"):
            mnemonic, _, operands = line.strip().partition("\t")
            if mnemonic.startswith(("j", "call")):
                operands = ""
            operands = re.sub(r"[-0-9a-fx]+\(%rip\)", "(%rip)", operands.split("#")[0].strip())
            current.append(f"{mnemonic} {operands}")
    return out


def _disassemble(path) -> dict:
    text = subprocess.run(
        [
            str(LLVM_BIN / "llvm-objdump"),
            "-d",
            "--no-show-raw-insn",
            "--no-leading-addr",
            str(path),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return _functions(text)


def test_emitted_asm_is_the_code_that_runs(tmp_path):
    mod = _scheduled_matmul()
    asm = emit_text(mod.module, "asm")
    obj = tmp_path / "asm.o"
    subprocess.run(
        [
            str(LLVM_BIN / "llvm-mc"),
            "-filetype=obj",
            f"-triple={cpu_target().triple}",
            "-o",
            str(obj),
        ],
        input=asm,
        text=True,
        check=True,
    )
    shown = _disassemble(obj)
    lib = tir_mlir.build(mod)
    running = _disassemble(lib.backend.path)
    assert {"matmul", "_mlir_ciface_matmul"} <= set(shown)
    assert any("omp" in name for name in shown), sorted(shown)  # the outlined parallel body
    for name, code in shown.items():
        assert len(code) > 10 and running[name] == code, name
    assert any(
        "zmm" in i or "ymm" in i or "xmm" in i
        for i in shown["matmul"] + sum((c for n, c in shown.items() if "omp" in n), [])
    )
    # export_library ships the same object.
    lib.export_library(tmp_path / "mm.so")
    assert _disassemble(tmp_path / "mm.so") == running
    a, b = RNG.random((128, 128), np.float32), RNG.random((128, 128), np.float32)
    c = np.zeros((128, 128), np.float32)
    tir_mlir.load_module(tmp_path / "mm.so")["matmul"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def test_mcpu_is_honoured_by_asm_and_build():
    mod = _scheduled_matmul()
    host = emit_text(mod.module, "asm")
    baseline = emit_text(mod.module, "asm", target="llvm -mcpu=x86-64")
    assert host != baseline
    # x86-64 has SSE2 only: no AVX registers, no FMA.
    assert not re.search(r"%[yz]mm|vfmadd", baseline)
    assert cpu_target("llvm -mcpu=x86-64").cpu == "x86-64"
    assert cpu_target("llvm -mcpu=x86-64 -num-cores=4").cpu == "x86-64"  # TVM's other options
    if "+avx2" in cpu_target().features:
        assert re.search(r"%[yz]mm", host)
    lib = tir_mlir.build(mod, target="llvm -mcpu=x86-64")
    a, b = RNG.random((128, 128), np.float32), RNG.random((128, 128), np.float32)
    c = np.zeros((128, 128), np.float32)
    lib["matmul"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def test_every_function_prefers_no_gather_or_scatter():
    ir_text = emit_text(_scheduled_matmul().module, "llvm-ir")
    groups = dict(re.findall(r"^attributes (#\d+) = \{(.*)\}$", ir_text, re.M))
    defines = re.findall(r"^define .*\) (#\d+) \{$", ir_text, re.M)
    assert len(defines) >= 3  # kernel, C wrapper, outlined OpenMP body
    for group in defines:
        assert '"target-cpu"="' + cpu_target().cpu + '"' in groups[group]
        assert "+prefer-no-gather,+prefer-no-scatter" in groups[group]
    assert f'target triple = "{cpu_target().triple}"' in ir_text


@pytest.mark.parametrize(
    "target, message",
    [
        ("llvm -mcpu=no-such-cpu", "does not know the CPU .no-such-cpu."),
        ("llvm -mattr=+no-such-feature", "does not know the CPU feature .no-such-feature."),
        ("llvm mcpu=x86-64", "expected -option=value"),
    ],
)
def test_bad_target_strings_raise(target, message):
    with pytest.raises(BuildError, match=message):
        tir_mlir.build(P.matmul(8), target=target)


CHILD = """
import ctypes, sys, numpy as np, tir_mlir
from tir_mlir.passes.lowering import llvm_ir
sys.path[:0] = {paths!r}
import test_runtime_target as T
lib = tir_mlir.build(T._scheduled_matmul())
a = np.ones((128, 128), np.float32); c = np.zeros((128, 128), np.float32)
lib["matmul"](a, a, c)
assert (c == 128).all()
print(ctypes.CDLL(str(llvm_ir.LIBOMP)).omp_get_max_threads())
"""


@pytest.mark.parametrize(
    "env, threads",
    [
        ({"OMP_NUM_THREADS": "1"}, 1),
        ({"OMP_NUM_THREADS": "1", "TVM_NUM_THREADS": "3"}, 3),
        ({}, len(os.sched_getaffinity(0))),
    ],
)
def test_thread_count_is_read_at_run_time(env, threads):
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "TVM_NUM_THREADS")}
    child = CHILD.format(paths=[str(HERE), str(HERE.parent / "support")])
    out = subprocess.run(
        [sys.executable, "-c", child], env={**base, **env}, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[-1]) == threads


def test_tiny_parallel_loops_run_serially():
    small = P.scale_2d(16, 32, ("parallel", "vectorized"))
    assert "__kmpc_fork_call" not in emit_text(small.module, "llvm-ir")
    assert "__kmpc_fork_call" in emit_text(_scheduled_matmul().module, "llvm-ir")
    a = RNG.random((16, 32), np.float32)
    b = np.zeros_like(a)
    tir_mlir.build(small)["scale"](a, b)
    np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)
