"""A Dask worker's reply is read as data of two forms only: a malformed one, or times that are
not positive finite seconds, are failed measurements, never times the search could choose
(checked without Dask: the function that reads a reply)."""
import pytest

from tir_mlir.meta_schedule.runner.dask_runner import reply_result


@pytest.mark.parametrize("reply", [
    None, "ok", ("ok",), ("ok", 1e-3), ("ok", [-1e-3]), ("ok", [0.0]), ("ok", ["1e-3"]),
    ("ok", [float("nan")]), ("ok", [True]), ["ok", [1e-3]], ("ok", [1e-3], "extra"),
    ("error", 5, "m"), ("error", "crash"), {"ok": [1e-3]}, ("fine", [1e-3])])
def test_malformed_or_forged_replies_are_failures(reply):
    r = reply_result(reply)
    assert r.run_secs is None and r.error_msg.startswith(("RunError: ", "InvalidResult: "))


def test_well_formed_replies():
    assert reply_result(("ok", [1e-3, 2e-3])).run_secs == [1e-3, 2e-3]
    assert reply_result(("error", "timeout", "timed out after 3 s")).error_msg == \
        "RunTimeout: timed out after 3 s"
    assert reply_result(("error", "error", "WrongResult: buffer 'C' differs")).error_msg == \
        "WrongResult: buffer 'C' differs"


def _tune(tmp_path, *extra):
    from click.testing import CliRunner

    from test_ms_tune_cli import MATMUL
    from tir_mlir.cli import main
    src = tmp_path / "mm.tir"
    src.write_text(MATMUL)
    for name in ("ca.pem", "cert.pem", "key.pem"):
        (tmp_path / name).write_text("x")
    return CliRunner().invoke(main, ["tune", str(src), "--work-dir", str(tmp_path / "w"),
                                     *extra])


def test_tls_options_go_together_and_need_dask(tmp_path):
    r = _tune(tmp_path, "--tls-ca-file", str(tmp_path / "ca.pem"))
    assert r.exit_code == 2 and "go together" in r.output
    r = _tune(tmp_path, "--tls-ca-file", str(tmp_path / "ca.pem"), "--tls-cert",
              str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem"))
    assert r.exit_code == 1 and "are for --runner dask" in r.output


def test_tls_options_reach_the_dask_client(monkeypatch):
    from tir_mlir.meta_schedule.runner import dask_runner
    from tir_mlir.meta_schedule.tune_command import make_runner
    made = {}
    monkeypatch.setattr(dask_runner, "tls_security", lambda *files: ("security", files))
    monkeypatch.setattr(dask_runner, "DaskRunner",
                        lambda address, **kw: made.update(address=address, **kw) or "runner")
    assert make_runner("dask", "tls://h:8786", None, 30, ("ca", "cert", "key")) == "runner"
    assert made["address"] == "tls://h:8786"
    assert made["security"] == ("security", ("ca", "cert", "key"))
