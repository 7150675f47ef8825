"""A Dask worker's reply is read as plain data of two forms only: a malformed one, or times that
are not floats in (0, timeout], are failed measurements, never times the search could choose
(checked without Dask: the function that reads a reply). With Dask installed, on a local
cluster of one worker process (real TCP serialization): a real measurement's reply
round-trips as plain data, and a worker that answers with a pickle is refused without the
pickle being loaded."""

import importlib
import os
from pathlib import Path

import pytest

from tir_mlir.meta_schedule.runner.dask_runner import reply_result


def _ok(*secs):
    return {"status": "ok", "run_secs": list(secs)}


@pytest.mark.parametrize(
    "reply",
    [
        None,
        "ok",
        ("ok", [1e-3]),
        ["ok", [1e-3]],
        {"ok": [1e-3]},
        {"status": "fine"},
        _ok(),
        _ok(-1e-3),
        _ok(0.0),
        _ok("1e-3"),
        _ok(float("nan")),
        _ok(float("inf")),
        _ok(True),
        _ok(1),
        _ok(1e-3, 2e-3, 3e-3, 4e-3),
        _ok(31.0),
        {"status": "ok", "run_secs": 1e-3},
        {"status": "ok", "run_secs": [1e-3], "extra": 1},
        {"status": "error", "kind": "crash"},
        {"status": "error", "kind": 5, "message": "m"},
        {"status": "error", "kind": "boom", "message": "m"},
        {"status": "error", "kind": "error", "message": b"m"},
    ],
)
def test_malformed_or_forged_replies_are_failures(reply):
    r = reply_result(reply, max_times=3, max_secs=30.0)
    assert r.run_secs is None and r.error_msg.startswith("RunError: malformed reply")


def test_well_formed_replies():
    assert reply_result(_ok(1e-3, 2e-3), 3, 30.0).run_secs == [1e-3, 2e-3]
    assert reply_result({"status": "ok", "run_secs": (1e-3,)}).run_secs == [1e-3]
    assert (
        reply_result(
            {"status": "error", "kind": "timeout", "message": "timed out after 3 s"}
        ).error_msg
        == "RunTimeout: timed out after 3 s"
    )
    assert (
        reply_result(
            {"status": "error", "kind": "error", "message": "WrongResult: buffer 'C' differs"}
        ).error_msg
        == "WrongResult: buffer 'C' differs"
    )


def _tune(tmp_path, *extra):
    from click.testing import CliRunner

    from workloads import matmul
    from tir_mlir.cli import main

    src = tmp_path / "mm.tir"
    src.write_text(matmul(32))
    for name in ("ca.pem", "cert.pem", "key.pem"):
        (tmp_path / name).write_text("x")
    return CliRunner().invoke(main, ["tune", str(src), "--work-dir", str(tmp_path / "w"), *extra])


def test_tls_options_go_together_and_need_dask(tmp_path):
    r = _tune(tmp_path, "--tls-ca-file", str(tmp_path / "ca.pem"))
    assert r.exit_code == 2 and "go together" in r.output
    r = _tune(
        tmp_path,
        "--tls-ca-file",
        str(tmp_path / "ca.pem"),
        "--tls-cert",
        str(tmp_path / "cert.pem"),
        "--tls-key",
        str(tmp_path / "key.pem"),
    )
    assert r.exit_code == 1 and "are for --runner dask" in r.output


def test_tls_options_reach_the_dask_client(monkeypatch):
    from tir_mlir.meta_schedule.runner import dask_runner
    from tir_mlir.meta_schedule.tune_command import make_runner

    made = {}
    monkeypatch.setattr(dask_runner, "tls_security", lambda *files: ("security", files))
    monkeypatch.setattr(
        dask_runner,
        "DaskRunner",
        lambda address, **kw: made.update(address=address, **kw) or "runner",
    )
    assert make_runner("dask", "tls://h:8786", None, 30, ("ca", "cert", "key")) == "runner"
    assert made["address"] == "tls://h:8786"
    assert made["security"] == ("security", ("ca", "cert", "key"))


@pytest.fixture(scope="module")
def cluster_client():
    distributed = pytest.importorskip(
        "distributed", reason="the 'distributed' extra (dask) is not installed"
    )
    from tir_mlir.meta_schedule.runner import plain_data_client

    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        with plain_data_client(cluster) as client:
            yield client


def test_a_measurement_round_trips_as_plain_data(cluster_client, tmp_path):
    import tir_mlir
    from tir_mlir.meta_schedule.arg_info import ArgInfo
    from tir_mlir.meta_schedule.builder import BuilderInput, LocalBuilder
    from tir_mlir.meta_schedule.runner import (
        DaskRunner,
        EvaluatorConfig,
        RunnerInput,
        make_reference,
    )

    MM_RELU = (Path(__file__).resolve().parents[2] / "examples" / "mm_relu.tir").read_text()
    mod = tir_mlir.parse(MM_RELU)
    wrong = tir_mlir.parse(MM_RELU.replace("T.max(Y[vi, vj], T.float32(0))", "Y[vi, vj]"))
    built = LocalBuilder(max_workers=1).build([BuilderInput(mod), BuilderInput(wrong)])
    ref = make_reference(mod, str(tmp_path / "ref.npz"))
    runner = DaskRunner(
        cluster_client,
        timeout_sec=20,
        evaluator_config=EvaluatorConfig(number=2, repeat=2, min_repeat_ms=5),
    )
    infos = ArgInfo.from_entry_func(mod)
    good, bad = [
        f.result()
        for f in runner.run([RunnerInput(b.artifact_path, "cpu", infos, ref) for b in built])
    ]
    runner.shutdown()
    assert good.error_msg is None and len(good.run_secs) == 2
    assert all(0 < s < 20 for s in good.run_secs)
    assert bad.run_secs is None and bad.error_msg.startswith("WrongResult: buffer 'C' differs")


def test_a_pickled_reply_is_refused_unloaded(cluster_client, tmp_path):
    import distributed

    from tir_mlir.meta_schedule.runner import DaskRunner

    marker = str(tmp_path / "unpickled")

    class Rogue:  # loading this pickle creates the marker file
        def __reduce__(self):
            return open, (marker, "w")

    def rogue_worker():  # a worker that sends pickles whatever the client asked for
        ser = importlib.import_module("distributed.protocol.serialize")
        honest = ser.serialize

        def forced(x, serializers=None, *args, **kw):
            return honest(x, ("pickle",), *args, **kw)

        ser.serialize, ser._honest = forced, honest

    def restore():
        ser = importlib.import_module("distributed.protocol.serialize")
        ser.serialize = ser._honest

    runner = DaskRunner(cluster_client, timeout_sec=20)
    admin = distributed.Client(cluster_client.scheduler.address)  # may read the pickles
    admin.run(rogue_worker)
    try:
        forged = runner._to_result(cluster_client.submit(lambda: Rogue(), pure=False))
        times = runner._to_result(
            cluster_client.submit(lambda: {"status": "ok", "run_secs": [1e-3]}, pure=False)
        )
    finally:
        admin.run(restore)
        admin.close()
    for r in (forged, times):  # even plain data, when the worker pickled it
        assert r.run_secs is None
        assert "serialized with pickle but only able to deserialize" in r.error_msg
    assert not os.path.exists(marker)
    honest = runner._to_result(
        cluster_client.submit(lambda: {"status": "ok", "run_secs": [1e-3]}, pure=False)
    )
    assert honest.run_secs == [1e-3]


def test_a_client_that_may_unpickle_is_refused(cluster_client):
    import distributed

    from tir_mlir.errors import TIRError
    from tir_mlir.meta_schedule.runner import DaskRunner

    with distributed.Client(cluster_client.scheduler.address) as pickling:
        with pytest.raises(TIRError, match="plain_data_client"):
            DaskRunner(pickling)
