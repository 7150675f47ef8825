"""GPU smoke test: build vector add, a 16x16-tiled matmul and a row softmax for cuda, run them on
random inputs, compare with numpy, print OK/MISMATCH and kernel times.

    python benchmarks/gpu_smoke.py                 # needs tir_mlir (+ mlir bindings), numpy, a GPU
    python benchmarks/gpu_smoke.py --export DIR    # no GPU: write DIR/kernels.json (PTX + launches)
    python benchmarks/gpu_ptx_run.py DIR           # on the GPU machine: plain Python + libcuda only

Exit status 1 on any mismatch.
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "gpu"
sys.path[:0] = [str(ROOT / "tests" / "gpu"), str(ROOT / "tests" / "support")]


def programs():
    from test_gpu import programs as load  # the same bound programs the tests check

    return load()


def inputs(name, rng):
    """(arrays passed to the function, expected output, index of the output)."""
    if name == "vector_add":
        a, b = rng.random(4096, np.float32), rng.random(4096, np.float32)
        return [a, b, np.zeros(4096, np.float32)], a + b, 2
    if name == "matmul":
        a, b = rng.random((256, 256), np.float32), rng.random((256, 256), np.float32)
        return [a, b, np.zeros((256, 256), np.float32)], a @ b, 2
    a = rng.random((64, 128), np.float32)
    e = np.exp(a - a.max(1, keepdims=True))
    return [a, np.zeros_like(a)], e / e.sum(1, keepdims=True), 1


def run():
    import tir_mlir
    from tir_mlir.runtime import cuda

    failed = False
    for name, mod in programs().items():
        lib = tir_mlir.build(mod, target="cuda")
        args, expected, out = inputs(name, np.random.default_rng(0))
        lib[name](*args)
        err = float(np.abs(args[out] - expected).max())
        ok = np.allclose(args[out], expected, rtol=1e-4, atol=1e-5)
        failed |= not ok
        dev = [cuda.array(a) for a in args]
        t = lib.time_evaluator(name, number=20, repeat=3)(*dev).median
        print(
            f"{'OK' if ok else 'MISMATCH':8s} {name:10s} max|err| {err:.2e}  "
            f"{t * 1e6:9.1f} us per call (launch + sync)"
        )
    return 1 if failed else 0


def export(out_dir):
    """PTX and launch sequence of each program, for gpu_ptx_run.py."""
    from tir_mlir.passes.lowering.pipeline import emit_text, lower
    from tir_mlir.runtime.signature import signatures

    out = {}
    for name, mod in programs().items():
        gpu_stage = lower(mod.module, "cuda", "gpu")
        params = signatures(mod.module)[name]
        out[name] = {
            "ptx": emit_text(mod.module, "ptx", "cuda"),
            "params": [{"shape": list(p.shape), "dtype": p.dtype} for p in params],
            "launches": _launches(gpu_stage, name),
        }
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    (Path(out_dir) / "kernels.json").write_text(json.dumps(out, indent=1))
    print(f"wrote {Path(out_dir) / 'kernels.json'}")
    return 0


def _launches(module, fname):
    from mlir import ir

    host = next(
        op.operation
        for op in module.body.operations
        if op.operation.name == "func.func"
        and ir.StringAttr(op.operation.attributes["sym_name"]).value == fname
    )
    args = list(host.regions[0].blocks[0].arguments)
    launches = []
    for op in host.regions[0].blocks[0].operations:
        if op.operation.name == "gpu.launch_func":
            launch = op.operation.opview
            size = [
                ir.IntegerAttr(v.owner.attributes["value"]).value
                for v in (
                    launch.gridSizeX,
                    launch.gridSizeY,
                    launch.gridSizeZ,
                    launch.blockSizeX,
                    launch.blockSizeY,
                    launch.blockSizeZ,
                )
            ]
            pos = [next(k for k, a in enumerate(args) if a == v) for v in launch.kernelOperands]
            kernel = str(ir.SymbolRefAttr(launch.kernel)).split("::@")[-1]
            launches.append({"kernel": kernel, "grid": size[:3], "block": size[3:], "args": pos})
        elif op.operation.name not in ("arith.constant", "func.return"):
            raise SystemExit(
                f"{fname}: export handles launches of parameter buffers only, "
                f"not {op.operation.name}"
            )
    return launches


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--export", metavar="DIR", help="write PTX + launches instead of running")
    ns = ap.parse_args()
    sys.exit(export(ns.export) if ns.export else run())
