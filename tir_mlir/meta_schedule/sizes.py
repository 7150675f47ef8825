"""Tuning a symbolic function over sizes (`tune_tir(..., sizes=[{"n": 128}, {"n": 1024}])`,
`tir-mlir tune F.tir --sizes n=128,1024`).

The tuner searches schedules of the symbolic program itself: one candidate is one kernel that
runs at any size. `SizesRunner` wraps the tuner's runner: it measures each built candidate at
every listed size (on inputs made once per size, `write_size_references`, against which the
candidate's outputs are also checked) and reports the weighted geometric mean of the times,
so the search minimizes that. The database keys the records by the symbolic workload.
"""

import math
from typing import Dict, List, Optional, Sequence

from tir_mlir.errors import TIRError
from tir_mlir.meta_schedule.process_pool import ProcessPool, TaskError
from tir_mlir.meta_schedule.runner.runner import RunnerFuture, RunnerInput, RunnerResult

Size = Dict[str, int]


def parse_sizes(specs: Sequence[str]) -> List[Size]:
    """`["n=128,1024"]` -> [{"n": 128}, {"n": 1024}]; several vars (`n=128,256 m=64,64`, or
    one option per var) pair their lists position by position; one value is shared."""
    lists: Dict[str, List[int]] = {}
    for spec in specs:
        for part in spec.split():
            name, eq, values = part.partition("=")
            if not eq or not name.isidentifier():
                raise TIRError(f"--sizes: expected NAME=V1,V2,... (n=128,1024), got {part!r}")
            try:
                lists[name] = [int(v) for v in values.split(",") if v.strip()]
            except ValueError:
                raise TIRError(
                    f"--sizes: {name}'s values must be integers, got {values!r}"
                ) from None
            if not lists[name] or any(v < 0 for v in lists[name]):
                raise TIRError(f"--sizes: {name} needs non-negative sizes, got {values!r}")
    count = max((len(v) for v in lists.values()), default=0)
    for name, values in lists.items():
        if len(values) not in (1, count):
            raise TIRError(f"--sizes: {name} has {len(values)} values, the others {count}")
    return [{name: values[k % len(values)] for name, values in lists.items()} for k in range(count)]


def parse_weights(spec: Optional[str], count: int) -> List[float]:
    """`"1,2,1"` -> [1.0, 2.0, 1.0] (default: all 1); one per size, positive."""
    if spec is None:
        return [1.0] * count
    try:
        weights = [float(w) for w in spec.split(",")]
    except ValueError:
        raise TIRError(f"--weights: expected numbers W1,W2,..., got {spec!r}") from None
    check_weights(weights, count)
    return weights


def check_weights(weights: Sequence[float], count: int):
    if len(weights) != count or any(not w > 0 or not math.isfinite(w) for w in weights):
        raise TIRError(f"weights: one positive number per size ({count}), got {list(weights)}")


def check_sizes(mod, sizes: Sequence[Size], func_name: Optional[str] = None):
    """Each size gives a value to every size variable of the function (its implicit vars and
    integer scalar parameters), and to nothing else."""
    from tir_mlir.meta_schedule.arg_info import entry_func_name
    from tir_mlir.runtime.signature import signatures

    if not sizes:
        raise TIRError("sizes: give at least one size (n=128)")
    name = entry_func_name(mod, func_name)
    params = signatures(mod.module)[name]
    need = sorted(p.name for p in params if p.kind in ("var", "index"))
    if not need:
        raise TIRError(
            f"sizes: {name} has no symbolic size (its shapes are static): tune it without sizes"
        )
    for size in sizes:
        if sorted(size) != need:
            raise TIRError(
                f"sizes: each size gives {', '.join(need)} (the sizes and integer "
                f"parameters of {name}), got {', '.join(sorted(size)) or 'nothing'}"
            )


def write_size_references(
    mod,
    sizes: Sequence[Size],
    work_dir: str,
    func_name: Optional[str] = None,
    seed: int = 0,
    timeout_sec: float = 600.0,
) -> List[str]:
    """One reference file per size (`make_reference`'s format: inputs and the unscheduled
    program's outputs), in `work_dir/reference_<values>.npz`."""
    import os

    paths = []
    with ProcessPool(1) as pool:
        for size in sizes:
            tag = "_".join(f"{k}{v}" for k, v in sorted(size.items()))
            path = os.path.join(work_dir, f"reference_{tag}.npz")
            future = pool.submit(
                "tir_mlir.meta_schedule.runner.measure:write_reference",
                (mod.mlir(), func_name, seed, path, dict(size)),
                timeout=timeout_sec,
            )
            try:
                paths.append(future.result())
            except TaskError as e:
                raise TIRError(
                    f"the unscheduled program cannot serve as the reference at "
                    f"{_shown(size)}: {e.message}"
                ) from None
    return paths


def _shown(size: Size) -> str:
    return ", ".join(f"{k} = {v}" for k, v in size.items())


def geometric_mean(times: Sequence[float], weights: Sequence[float]) -> float:
    total = sum(weights)
    return math.exp(sum(w * math.log(t) for t, w in zip(times, weights)) / total)


class SizesRunner:
    """A runner that measures every input at each size with `runner` and reports the
    weighted geometric mean of the per-size times (each size's mean over its repeats); a
    failure at any size is the candidate's failure, naming the size."""

    def __init__(
        self,
        runner,
        sizes: Sequence[Size],
        references: Sequence[str],
        weights: Optional[Sequence[float]] = None,
    ):
        self.runner, self.sizes, self.references = runner, list(sizes), list(references)
        self.weights = list(weights) if weights is not None else [1.0] * len(self.sizes)
        check_weights(self.weights, len(self.sizes))
        # the task scheduler makes no reference of its own when the runner has one
        self.reference = self.references[0]

    def run(self, runner_inputs: List[RunnerInput]) -> List[RunnerFuture]:
        out = []
        for inp in runner_inputs:
            per_size = [
                RunnerInput(inp.artifact_path, inp.device_type, None, ref, inp.func_name, None)
                for ref in self.references
            ]
            out.append(_Combined(self.runner.run(per_size), self))
        return out

    def combine(self, results: List[RunnerResult]) -> RunnerResult:
        means = []
        for size, r in zip(self.sizes, results):
            if r.run_secs is None:
                return RunnerResult(None, f"{r.error_msg} (at {_shown(size)})")
            means.append(sum(r.run_secs) / len(r.run_secs))
        return RunnerResult([geometric_mean(means, self.weights)], None)

    def shutdown(self, kill: bool = False):
        self.runner.shutdown(kill)

    def __getattr__(self, name):
        return getattr(self.runner, name)


class _Combined(RunnerFuture):
    """The futures of one candidate's per-size measurements, as one RunnerFuture."""

    def __init__(self, futures, owner: SizesRunner):
        self.futures, self.owner = futures, owner

    def done(self) -> bool:
        return all(f.done() for f in self.futures)

    def result(self) -> RunnerResult:
        return self.owner.combine([f.result() for f in self.futures])


def sizes_runner(mod, runner, sizes: Sequence[Size], weights, work_dir: str) -> SizesRunner:
    """`runner` measuring `mod`'s one function at each of `sizes` (checked), on reference
    inputs written to `work_dir`."""
    if len(list(mod)) != 1:
        raise TIRError(f"sizes: tune one function at a time (the module has {', '.join(mod)})")
    sizes = [dict(s) for s in sizes]
    check_sizes(mod, sizes)
    if weights is not None:
        check_weights(weights, len(sizes))
    return SizesRunner(runner, sizes, write_size_references(mod, sizes, work_dir), weights)


def feature_size(sizes: Sequence[Size]) -> Size:
    """The size the cost model sees a symbolic program at: each var's geometric mean."""
    names = sorted({k for s in sizes for k in s})
    return {
        k: max(1, round(math.exp(sum(math.log(max(1, s[k])) for s in sizes) / len(sizes))))
        for k in names
    }
