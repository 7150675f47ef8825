"""Several threads parsing, scheduling, printing, building and running at once get the same
results as one thread (the MLIR context and the parser are shared: see tir_mlir/context.py)."""

import random
import threading

import numpy as np

import tir_mlir

SRC = open(__file__.replace("tests/runtime/test_concurrency.py", "examples/mm_relu.tir")).read()


def _work(seed, out, errors):
    rng = random.Random(seed)
    for _ in range(12):
        try:
            sch = tir_mlir.Schedule(tir_mlir.parse(SRC))
            b = sch.get_block("Y", "mm_relu")
            i, j, k = sch.get_loops(b)
            fj, fi = rng.choice([2, 4, 8, 16]), rng.choice([2, 4, 8])
            sch.split(j, factors=[None, fj])
            sch.split(i, factors=[fi, None])
            text = sch.mod.script()
            replay = tir_mlir.Schedule(tir_mlir.parse(SRC))
            sch.trace.apply_to_schedule(replay)
            assert replay.mod.script() == text
            out.append((fj, fi, text))
        except Exception as e:  # noqa: BLE001 - collected and reported by the test
            errors.append(repr(e))


def test_parallel_schedules_agree_with_sequential():
    out, errors = [], []
    threads = [threading.Thread(target=_work, args=(s, out, errors)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(out) == 48
    for fj, fi, text in out[::6]:
        sch = tir_mlir.Schedule(tir_mlir.parse(SRC))
        i, j, k = sch.get_loops(sch.get_block("Y", "mm_relu"))
        sch.split(j, factors=[None, fj])
        sch.split(i, factors=[fi, None])
        assert sch.mod.script() == text


def test_parallel_builds_and_calls():
    mod = tir_mlir.parse(SRC)
    rng = np.random.default_rng(0)
    a, b = rng.random((128, 128), np.float32), rng.random((128, 128), np.float32)
    want = np.maximum(a @ b, 0)
    errors = []

    def work(k):
        try:
            sch = tir_mlir.Schedule(mod)
            i, j, _ = sch.get_loops(sch.get_block("Y", "mm_relu"))
            sch.split(j, factors=[None, 2 ** (k + 1)])
            lib = tir_mlir.build(sch.mod)
            for _ in range(3):
                c = np.zeros((128, 128), np.float32)
                lib["mm_relu"](a, b, c)
                np.testing.assert_allclose(c, want, rtol=1e-4)
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
