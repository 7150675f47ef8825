"""DaskRunner on a local cluster started in the test: artifacts shipped as bytes, the reference
scattered, crashes isolated on the worker side."""

from pathlib import Path

import pytest

import tir_mlir
from tir_mlir.meta_schedule.arg_info import ArgInfo
from tir_mlir.meta_schedule.builder import BuilderInput, LocalBuilder
from tir_mlir.meta_schedule.runner import EvaluatorConfig, RunnerInput, make_reference

distributed = pytest.importorskip(
    "distributed", reason="the 'distributed' extra (dask) is not installed"
)

ROOT = Path(__file__).parent.parent.parent
MM_RELU = (ROOT / "examples" / "mm_relu.tir").read_text()


def test_dask_runner_measures_checks_and_isolates(tmp_path):
    from tir_mlir.meta_schedule.runner import DaskRunner, plain_data_client
    from crash_programs import SEGFAULT

    mod = tir_mlir.parse(MM_RELU)
    wrong = tir_mlir.parse(MM_RELU.replace("T.max(Y[vi, vj], T.float32(0))", "Y[vi, vj]"))
    crash = tir_mlir.parse(SEGFAULT)
    built = LocalBuilder(max_workers=2).build([BuilderInput(m) for m in (mod, wrong, crash)])
    assert all(b.artifact_path for b in built)
    ref = make_reference(mod, str(tmp_path / "ref.npz"))
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        plain_data_client(cluster) as client,
    ):
        runner = DaskRunner(
            client, timeout_sec=20, evaluator_config=EvaluatorConfig(number=2, min_repeat_ms=5)
        )
        infos = ArgInfo.from_entry_func(mod)
        futures = runner.run(
            [
                RunnerInput(built[0].artifact_path, "cpu", infos, ref),
                RunnerInput(built[1].artifact_path, "cpu", infos, ref),
                RunnerInput(built[2].artifact_path, "cpu", None, None),
                RunnerInput(str(tmp_path / "missing.so")),
            ]
        )
        good, bad, crashed, missing = [f.result() for f in futures]
        runner.shutdown()
    assert good.error_msg is None and len(good.run_secs) == 1 and good.run_secs[0] > 0
    assert bad.error_msg.startswith("WrongResult: buffer 'C' differs")
    assert crashed.error_msg.startswith("RunCrash: worker process died (signal SIGSEGV)")
    assert missing.error_msg.startswith("RunError: cannot read the artifact")


def test_dask_runner_without_address_or_extra_says_what_to_do():
    from tir_mlir.errors import TIRError
    from tir_mlir.meta_schedule.tune_command import make_runner

    with pytest.raises(TIRError, match="--address"):
        make_runner("dask", None, None, 10)
