"""`time_evaluator`, with TVM's parameters and result fields (seconds)."""

import statistics
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class BenchmarkResult:
    results: tuple  # mean seconds per call, one entry per repeat

    @property
    def mean(self):
        return statistics.fmean(self.results)

    @property
    def median(self):
        return statistics.median(self.results)

    @property
    def min(self):
        return min(self.results)

    @property
    def max(self):
        return max(self.results)

    @property
    def std(self):
        return statistics.pstdev(self.results)

    def __str__(self):
        return (
            f"Execution time summary:\n mean (ms)   median (ms)    max (ms)     min (ms)\n"
            f" {self.mean * 1e3:9.4f}   {self.median * 1e3:9.4f}   {self.max * 1e3:9.4f}"
            f"   {self.min * 1e3:9.4f}"
        )


def time_calls(call, number=10, repeat=1, min_repeat_ms=0, warmup=True) -> BenchmarkResult:
    """Time `call()`: `repeat` measurements of `number` calls each; like TVM, `number` grows
    until one measurement lasts at least `min_repeat_ms`. A `call.repeat(n)`, when there is
    one, makes the n calls natively (no Python in between). `warmup` calls it once first."""
    native = getattr(call, "repeat", None)
    # warm-up: first-touch of pages, lazy symbol resolution (and the native loop's set-up)
    if warmup:
        if native is not None:
            native(1)
        else:
            call()
    results = []
    for _ in range(repeat):
        n = max(1, number)
        while True:
            start = time.perf_counter()
            if native is not None:
                native(n)
            else:
                for _ in range(n):
                    call()
            elapsed = time.perf_counter() - start
            if elapsed * 1e3 >= min_repeat_ms or min_repeat_ms <= 0:
                break
            n = max(n * 2, int(n * min_repeat_ms / max(elapsed * 1e3, 1e-3) * 1.1) + 1)
        results.append(elapsed / n)
    return BenchmarkResult(tuple(results))
