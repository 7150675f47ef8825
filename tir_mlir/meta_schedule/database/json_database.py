"""`JSONDatabase(path_workload, path_tuning_record)`: TVM's two JSON-lines files.

    workloads file:  ["<structural hash>", "<base64 of the program>"]       one per line
    records file:    [workload line number, [trace, run_secs, target, args_info]]

Traces are in TVM's instruction form (`tvm_trace`), targets TVM's dicts
({"kind": "llvm", "mcpu": ..., "num-cores": ...}), failed candidates TVM's way: run_secs
[1e9]. tir-mlir writes the program as TVMScript text; a workload written by TVM (its
serialised IRModule) is kept as is, and records of it are readable (`get_all_tuning_records`)
but match no program here until the workloads file is converted to TVMScript (a few lines run
with TVM, given in docs/meta_schedule.md). Lines are appended and flushed one record at a time; a line torn
by a killed process is dropped (with a warning) when the file is opened again, and the file
is cut back to its last whole line before anything is appended."""
import base64
import json
import os
import statistics
import warnings
from typing import Dict, List, Optional

from tir_mlir.meta_schedule.database.database import Database
from tir_mlir.meta_schedule.database.record import TuningRecord
from tir_mlir.meta_schedule.database.workload import Workload

FAILED_RUN_SECS = 1e9     # TVM's run time of a failed candidate


class JSONDatabase(Database):
    def __init__(self, path_workload: str, path_tuning_record: str, allow_missing: bool = True):
        """Opening reads every line but parses a record (trace, arguments) only when a query
        returns it, so large logs open in about the time json.loads takes."""
        self.path_workload, self.path_tuning_record = str(path_workload), str(path_tuning_record)
        for p in (self.path_workload, self.path_tuning_record):
            if not os.path.exists(p):
                if not allow_missing:
                    raise FileNotFoundError(p)
                open(p, "a").close()
        self.workloads: List[Workload] = []
        self._index: Dict[str, int] = {}
        self._entries: List[_Entry] = []
        for line in _lines(self.path_workload):
            self._add_workload(_workload_from_json(line))
        for index, rec in _lines(self.path_tuning_record):
            self._entries.append(_Entry(self.workloads[index], rec))

    def _add_workload(self, w: Workload) -> int:
        self._index[w.shash] = len(self.workloads)
        self.workloads.append(w)
        return self._index[w.shash]

    def commit_workload(self, mod) -> Workload:
        w = Workload(mod)
        if w.shash not in self._index:
            _append(self.path_workload, _workload_to_json(w))
            self._add_workload(w)
        return self.workloads[self._index[w.shash]]

    def commit_tuning_records(self, records: List[TuningRecord]) -> None:
        for r in records:
            if r.workload.shash not in self._index:
                self.commit_workload(r.workload.mod)
            _append(self.path_tuning_record, [self._index[r.workload.shash], _record_to_json(r)])
            self._entries.append(_Entry(r.workload, None, r))

    def _find_workload(self, shash) -> Optional[Workload]:
        k = self._index.get(shash)
        return None if k is None else self.workloads[k]

    def get_top_k(self, workload, top_k, target=None):
        if top_k <= 0:
            return []
        mine = [e for e in self._entries if e.workload.shash == workload.shash
                and e.mean_sec is not None and (target is None or e.target == target)]
        return [e.record for e in sorted(mine, key=lambda e: e.mean_sec)[:top_k]]

    def get_all_tuning_records(self):
        return [e.record for e in self._entries]

    def __len__(self):
        return len(self._entries)


class _Entry:
    """A record line: run time and target read at once, the rest parsed on first use."""

    def __init__(self, workload, raw, record: Optional[TuningRecord] = None):
        self.workload, self.raw, self._record = workload, raw, record
        if record is not None:
            self.mean_sec = record.mean_sec
        else:
            secs = raw[1] if len(raw) > 1 else None
            self.mean_sec = (statistics.fmean(secs) if secs and all(
                s < FAILED_RUN_SECS for s in secs) else None)
        self._target = None

    @property
    def target(self):
        if self._target is None:
            self._target = (self._record.target if self._record is not None else
                            _canonical(_target_from_json(self.raw[2] if len(self.raw) > 2
                                                         else None)))
        return self._target

    @property
    def record(self) -> TuningRecord:
        if self._record is None:
            self._record = _record_from_json(self.raw, self.workload)
        return self._record


def _canonical(target):
    from tir_mlir.meta_schedule.target_key import canonical_target
    return None if target is None else canonical_target(target)


def _lines(path):
    """The parsed lines of a JSON-lines file; a torn last line is dropped with a warning."""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    out = []
    for k, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            out.append(json.loads(raw))
        except json.JSONDecodeError:
            if k == len(lines) - 1:        # no newline after it: a write cut short
                warnings.warn(f"{path}: dropping an incomplete last line (a killed writer)")
                continue
            raise ValueError(f"{path}:{k + 1}: not a JSON line") from None
    return out


def _append(path, obj):
    """Append one line (flushed to disk), first cutting a torn tail so that it starts a line."""
    line = (json.dumps(obj, separators=(",", ":")) + "\n").encode()
    with open(path, "r+b") as f:
        _cut_torn_tail(f)
        f.seek(0, os.SEEK_END)
        f.write(line)
        f.flush()
        os.fsync(f.fileno())


def _cut_torn_tail(f, chunk=65536):
    end = pos = f.seek(0, os.SEEK_END)
    while pos > 0:
        start = max(0, pos - chunk)
        f.seek(start)
        data = f.read(pos - start)
        if pos == end and data.endswith(b"\n"):
            return
        k = data.rfind(b"\n")
        if k >= 0:
            f.truncate(start + k + 1)
            return
        pos = start
    f.truncate(0)


def _workload_to_json(w: Workload) -> list:
    return [w.shash, base64.b64encode(w.mod.script().encode()).decode()]


def _workload_from_json(line) -> Workload:
    """A workload line: TVMScript (written by tir-mlir, or converted from TVM's form, see
    docs/meta_schedule.md) is parsed and keyed by tir-mlir's hash (the one on the line when
    tir-mlir wrote it: that of the program before printing); TVM's serialised IRModule is
    kept under TVM's hash and matches no program here."""
    shash, payload = line
    data = base64.b64decode(payload)
    if data.lstrip()[:1] in (b"#", b"@"):
        from tir_mlir.frontend.parser import parse
        ours = len(shash) == 64 and all(c in "0123456789abcdef" for c in shash)
        return Workload(parse(data.decode()), shash=shash if ours else None)
    return Workload(shash=str(shash))


def _record_to_json(r: TuningRecord) -> list:
    from tir_mlir.meta_schedule.database.tvm_trace import to_tvm_json
    run_secs = r.run_secs if r.is_valid else [FAILED_RUN_SECS]
    args = None if r.args_info is None else [a.as_json() for a in r.args_info]
    return [to_tvm_json(r.trace), run_secs, _target_to_json(r.target), args]


def _record_from_json(rec, workload: Workload) -> TuningRecord:
    from tir_mlir.meta_schedule.arg_info import ArgInfo
    from tir_mlir.meta_schedule.database.tvm_trace import from_tvm_json
    trace, run_secs, target, args = (list(rec) + [None] * 4)[:4]
    error = None
    if run_secs is not None and any(s >= FAILED_RUN_SECS for s in run_secs):
        run_secs, error = None, "Failed: recorded with TVM's failure time (1e9 s)"
    return TuningRecord(from_tvm_json(trace), workload, run_secs, _target_from_json(target),
                        None if args is None else [ArgInfo.from_json(a) for a in args], error)


def _target_to_json(target: Optional[str]):
    if target is None:
        return None
    words = target.split()
    out = {"kind": words[0], "tag": "", "keys": ["cpu"] if words[0] == "llvm" else [words[0]]}
    for w in words[1:]:
        key, _, val = w.lstrip("-").partition("=")
        out[key] = int(val) if val.isdigit() else (val or True)
    return out


def _target_from_json(obj) -> Optional[str]:
    """A target string from TVM's dict (its kind and the flags that tell machines apart)."""
    if obj is None or isinstance(obj, str):
        return obj
    words = [obj["kind"]]
    for key in ("mcpu", "num-cores", "arch", "mattr"):
        if key in obj:
            val = obj[key]
            val = ",".join(val) if isinstance(val, list) else val
            words.append(f"-{key}={val}")
    return " ".join(words)
