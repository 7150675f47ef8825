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
