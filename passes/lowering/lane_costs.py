"""What LLVM's cost model for a CPU target charges to build a vector lane by lane and to take one
apart: the `insertelement`s that gather `n` scalars into `<n x T>`, the `extractelement`s that
scatter it (`opt -passes='print<cost-model>'`, the throughput costs its vectorizers weigh).

A 128-bit vector takes each lane with one shuffle; a wider one also pays the moves between its
128-bit lanes, so per element gathering into wide vectors costs more (Sapphire Rapids:
`<8 x double>` 19, two `<4 x double>` 14, four `<2 x double>` 4). `gather_width.py` weighs
that against the arithmetic that narrower vectors repeat. Kept in the user cache folder, as
`cpu_model.fma_chains` keeps its tool run.
"""

import functools
import re
import subprocess
from typing import Optional

from mlir import ir

from tir_mlir.ir.user_cache import tool_answer
from tir_mlir.passes.lowering.common import scalar_bits
from tir_mlir.passes.lowering.cpu_target import LLVM_BIN, CpuTarget

_ROW = re.compile(r"cost of (\d+) for instruction:\s+%([be])(\d+)_\d+ = ")


@functools.cache
def lane_costs(t: CpuTarget, element: str, lanes: tuple) -> Optional[dict]:
    """{n: (gather cost, scatter cost)} of `<n x element>` (an LLVM scalar type: float,
    double, i8, ...) for each n of `lanes`, or None when `opt` cannot say."""
    key = f"{t.triple}\0{t.cpu}\0{','.join(t.features)}\0{element}\0{lanes}"
    costs = tool_answer("lanes", LLVM_BIN / "opt", key, lambda: _probe(t, element, lanes))
    return {int(n): tuple(c) for n, c in costs.items()} if costs else None


def _probe(t: CpuTarget, element: str, lanes: tuple) -> Optional[dict]:
    args = ", ".join(f"<{n} x {element}> %v{n}" for n in lanes)
    lines = [f"define void @f({element} %s, {args}) {{"]
    for n in lanes:
        prev = "poison"
        for k in range(n):
            lines.append(
                f"  %b{n}_{k} = insertelement <{n} x {element}> {prev}, {element} %s, i32 {k}"
            )
            prev = f"%b{n}_{k}"
        lines += [
            f"  %e{n}_{k} = extractelement <{n} x {element}> %v{n}, i32 {k}" for k in range(n)
        ]
    lines += ["  ret void", "}"]
    try:
        p = subprocess.run(
            [
                str(LLVM_BIN / "opt"),
                *t.tool_flags(),
                "-passes=print<cost-model>",
                "-disable-output",
            ],
            input="\n".join(lines).encode(),
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    costs = {n: [0, 0] for n in lanes}
    seen = 0
    for cost, kind, n in _ROW.findall(p.stderr.decode() + p.stdout.decode()):
        costs[int(n)][kind == "e"] += int(cost)
        seen += 1
    if p.returncode or seen != 2 * sum(lanes):
        return None
    return {n: (b, e) for n, (b, e) in costs.items()}


def element_name(t: ir.Type) -> str:
    """The LLVM name of an MLIR integer or float type (`i8`, `half`, `float`, ...), as
    `lane_costs` takes it."""
    if isinstance(t, ir.IntegerType):
        return f"i{ir.IntegerType(t).width}"
    if isinstance(t, ir.BF16Type):
        return "bfloat"
    return {16: "half", 32: "float", 64: "double"}.get(scalar_bits(t), "float")
