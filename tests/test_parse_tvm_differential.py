"""The differential parse fuzzer (tests/parse_differential.py) at a size CI affords: malformed
programs are accepted or rejected as TVM 0.21 decides, except for the documented differences.
Long mode: `python tests/parse_differential.py 2000`."""
import pytest

import parse_differential as P

N = 120


def test_malformed_programs_never_crash_and_agree_with_tvm():
    pytest.importorskip("tvm")
    tvm = P.TvmOracle()
    bad = []
    try:
        for k, text in enumerate(P.inputs(N, seed=0)):
            kind, msg = P.classify(text, tvm)
            if kind not in ("agree", "documented"):
                bad.append(f"#{k} {kind}: {msg}\n{text}")
    finally:
        tvm.close()
    assert not bad, "\n\n".join(bad[:3])


def test_malformed_programs_never_crash_without_tvm():
    for text in P.inputs(N, seed=1):
        P.ours(text)          # raises on anything but a module or a located TIRParseError
