"""What `tir-mlir tune` shows while it runs: trials done, best GFLOP/s so far, ETA, failures by
kind. It watches the database: every measured candidate (failed ones included) is committed
there, whatever the search does, so `ProgressDatabase` wraps the real database and reports
each committed batch to a `Progress`."""
import collections
import sys
from typing import Optional

from tir_mlir.meta_schedule.database.database import Database


def error_kind(error_msg: Optional[str]) -> Optional[str]:
    """"BuildError: ..." -> "BuildError"."""
    return None if error_msg is None else error_msg.split(":", 1)[0]


class Progress:
    """A tqdm bar (plain lines when tqdm is missing or the output is not a terminal)."""

    def __init__(self, total: int, flops: Optional[int], done: int = 0,
                 best_sec: Optional[float] = None, stream=None):
        self.total, self.flops, self.done, self.best_sec = total, flops, done, best_sec
        self.failures = collections.Counter()
        self.stream = stream or sys.stderr
        try:
            from tqdm import tqdm
            self._bar = tqdm(total=total, initial=min(done, total), file=self.stream,
                             unit="trial", dynamic_ncols=True, leave=True)
        except ImportError:
            self._bar = None

    def rate(self, sec: Optional[float]) -> str:
        if sec is None:
            return "-"
        if self.flops:
            return f"{self.flops / sec / 1e9:.2f} GFLOP/s"
        return f"{sec * 1e3:.4f} ms"

    def update(self, records):
        for r in records:
            self.done += 1
            if r.is_valid:
                if self.best_sec is None or r.mean_sec < self.best_sec:
                    self.best_sec = r.mean_sec
            else:
                self.failures[error_kind(r.error_msg) or "Failed"] += 1
        status = f"best {self.rate(self.best_sec)}"
        if self.failures:
            status += ", failed: " + ", ".join(f"{k} {n}" for k, n in sorted(self.failures.items()))
        if self._bar is not None:
            self._bar.n = min(self.done, self.total)
            self._bar.set_postfix_str(status, refresh=False)
            self._bar.refresh()
        else:
            print(f"[{self.done}/{self.total}] {status}", file=self.stream, flush=True)

    def close(self):
        if self._bar is not None:
            self._bar.close()


class ProgressDatabase(Database):
    """Delegates to `inner`; reports every committed batch of records to `progress`."""

    def __init__(self, inner: Database, progress: Progress):
        self.inner, self.progress = inner, progress

    def commit_tuning_records(self, records):
        self.inner.commit_tuning_records(records)
        self.progress.update(records)

    def commit_workload(self, mod):
        return self.inner.commit_workload(mod)

    def has_workload(self, mod):
        return self.inner.has_workload(mod)

    def get_top_k(self, workload, top_k, target=None):
        return self.inner.get_top_k(workload, top_k, target)

    def get_all_tuning_records(self):
        return self.inner.get_all_tuning_records()

    def _find_workload(self, shash):
        return self.inner._find_workload(shash)

    def __len__(self):
        return len(self.inner)

    def close(self):
        self.inner.close()
