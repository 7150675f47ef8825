"""TVM 0.21's column of bench_model_tune.py: a recorded PyTorch model (the module of
tests/data/linalg/regenerate.py with the recorded weights and inputs) imported into Relax
(`from_exported_program(torch.export.export(...))`), tuned by TVM's MetaSchedule as
`relax.pipeline.static_shape_tuning_pipeline` does (with `max_trials_per_task` set, so every
task gets the same budget as tir-mlir's), compiled for the host CPU and run by Relax's VM.

Runs only as a child process of bench_model_tune.py (TVM's LLVM cannot share a process with
tir_mlir's MLIR bindings); TVM_NUM_THREADS comes from the parent:

    python benchmarks/tvm_relax_model.py tune DIR --only mlp --trials-per-task 64 --threads 2
    python benchmarks/tvm_relax_model.py time DIR --only mlp

`tune` writes DIR/NAME.so (the compiled VM executable) and prints one JSON line: name ->
{"tasks", "tune_s", "trials"} or the reason it failed; `time` loads the libraries, checks
their outputs against torch's recorded ones and prints name -> seconds per call (best of 5
repeats of at least 100 ms) or the reason.
"""

import argparse
import importlib.util
import json
import os
import time
import traceback
from pathlib import Path

from bench_bridge import DATA, best_secs, check, load_model


def torch_model(name, weights):
    import torch

    spec = importlib.util.spec_from_file_location("linalg_regenerate", DATA / "regenerate.py")
    regen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(regen)
    model, _ = regen.models()[name]
    model.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
    return model.eval()


def target(threads):
    import tvm

    cpu = tvm.target.codegen.llvm_get_system_cpu()
    return tvm.target.Target(f"llvm -mcpu={cpu} -num-cores={threads}")


def tune_one(name, out_dir: Path, trials_per_task, threads) -> dict:
    import torch
    import tvm
    from tvm import meta_schedule as ms
    from tvm import relax
    from tvm.relax import transform
    from tvm.relax.frontend.torch import from_exported_program

    _, inputs, expected, weights = load_model(name)
    model = torch_model(name, weights)
    with torch.no_grad():
        exported = torch.export.export(model, tuple(torch.from_numpy(a) for a in inputs))
    mod = from_exported_program(exported)
    tgt = target(threads)
    work = out_dir / f"{name}_tuning"
    start = time.perf_counter()
    with tgt:
        # static_shape_tuning_pipeline's passes, the budget per task given explicitly
        mod = tvm.transform.Sequential(
            [
                transform.DecomposeOpsForInference(),
                transform.CanonicalizeBindings(),
                relax.pipeline.zero_pipeline(),
            ]
        )(mod)
        tasks = len(ms.relax_integration.extract_tasks(mod, tgt))
        mod = tvm.transform.Sequential(
            [
                transform.MetaScheduleTuneIRMod(
                    {}, str(work), trials_per_task * tasks, max_trials_per_task=trials_per_task
                ),
                transform.MetaScheduleApplyDatabase(str(work)),
            ]
        )(mod)
    ex = tvm.compile(mod, target=tgt)
    wall = time.perf_counter() - start
    lib = out_dir / f"{name}.so"
    ex.export_library(str(lib))
    db = ms.database.JSONDatabase(work_dir=str(work))
    return {"tasks": tasks, "tune_s": wall, "trials": len(db)}


def vm_call(name, lib: Path):
    """(call, inputs, expected): the VM's main over the recorded inputs."""
    import tvm
    from tvm import relax

    _, inputs, expected, _ = load_model(name)
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(lib)), tvm.cpu())
    args = [tvm.nd.array(a) for a in inputs]
    return (lambda: vm["main"](*args)), expected


def outputs(result):
    import tvm

    if isinstance(result, tvm.nd.NDArray):
        return [result.numpy()]
    return [r.numpy() for r in result]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["tune", "time"])
    p.add_argument("dir", type=Path)
    p.add_argument("--only", required=True)
    p.add_argument("--trials-per-task", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    os.environ.setdefault("TVM_NUM_THREADS", str(a.threads))
    out = {}
    for name in a.only.split(","):
        try:
            if a.mode == "tune":
                out[name] = tune_one(name, a.dir, a.trials_per_task, a.threads)
                (a.dir / f"{name}.json").write_text(json.dumps(out[name]))
            else:
                lib = a.dir / f"{name}.so"
                if not lib.exists():
                    out[name] = "not built"
                    continue
                call, expected = vm_call(name, lib)
                check(outputs(call()), expected, f"{name} tvm")
                out[name] = best_secs(call)
        except Exception as e:  # the column says why, the other models still run
            traceback.print_exc()
            out[name] = (
                f"{type(e).__name__}: {str(e).strip().splitlines()[0][:200]}"
                if str(e).strip()
                else type(e).__name__
            )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
