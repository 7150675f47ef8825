"""`JSONDatabase(path_workload, path_tuning_record)`: TVM's two JSON-lines files.

    workloads file:  ["<structural hash>", "<base64 of the program>"]       one per line
    records file:    [workload line number, [trace, run_secs, target, args_info]]

Traces are in TVM's instruction form (`tvm_trace`), targets TVM's dicts
({"kind": "llvm", "mcpu": ..., "num-cores": ...}), failed candidates TVM's way: run_secs
[1e9]. The program is TVM's serialised IRModule (`tvm_ir_json`: written and read without
TVM), so TVM 0.21's JSONDatabase reads these files and tir-mlir reads TVM's; TVMScript
payloads (older tir-mlir files) are read too. Lines are appended and flushed one record at a time; a line torn
by a killed process is dropped (with a warning) when the file is opened again, and the file
is cut back to its last whole line before anything is appended."""

import base64
import contextlib
import fcntl
import functools
import json
import os
import statistics
import warnings
from typing import Dict, List, Optional

from tir_mlir.meta_schedule.database.database import Database, check_module_equality
from tir_mlir.meta_schedule.database.record import TuningRecord
from tir_mlir.errors import TIRError
from tir_mlir.meta_schedule.database.tvm_ir_json import module_to_tvm_json, tvm_payload
from tir_mlir.meta_schedule.database.tvm_ir_read import graph_from_payload, tvm_json_to_script
from tir_mlir.meta_schedule.database.workload import Workload
from tir_mlir.meta_schedule.target_key import MACHINE_FLAGS
from tir_mlir.module import IRModule

FAILED_RUN_SECS = 1e9  # TVM's run time of a failed candidate


class JSONDatabase(Database):
    def __init__(
        self,
        path_workload: str,
        path_tuning_record: str,
        allow_missing: bool = True,
        module_equality: str = "structural",
    ):
        """Opening splits the records file into lines and reads only each line's workload
        number; a record's run time and target are read (from the end of its line) when a
        query needs them, its trace and arguments parsed when a query returns it. So a log of
        100,000 records opens in well under a second."""
        self.path_workload, self.path_tuning_record = str(path_workload), str(path_tuning_record)
        self.module_equality = check_module_equality(module_equality)
        for p in (self.path_workload, self.path_tuning_record):
            if not os.path.exists(p):
                if not allow_missing:
                    raise FileNotFoundError(p)
                open(p, "a").close()
        self.workloads: List[Workload] = []
        self._index: Dict[str, int] = {}
        self._entries: List[_Entry] = []
        for line in _lines(self.path_workload):
            self._add_workload(_workload_from_json(json.loads(line)))
        for k, raw in enumerate(_lines(self.path_tuning_record)):
            try:
                index = int(raw[1 : raw.index(b",")])
                workload = self.workloads[index]
            except (ValueError, IndexError):
                raise ValueError(
                    f"{self.path_tuning_record}: record {k + 1} does not start "
                    f"with a workload number of the workloads file"
                ) from None
            self._entries.append(_Entry(workload, raw))

    def _add_workload(self, w: Workload) -> int:
        self._index[w.shash] = len(self.workloads)
        self.workloads.append(w)
        return self._index[w.shash]

    def commit_workload(self, mod) -> Workload:
        w = Workload(mod)
        if w.shash not in self._index:
            with _locked(self.path_workload) as f:
                # other processes may have appended workloads: a record names its workload
                # by line number, so this process's list must match the file's lines
                for line in _lines(self.path_workload)[len(self.workloads) :]:
                    self._add_workload(_workload_from_json(json.loads(line)))
                if w.shash not in self._index:
                    _append_locked(f, _workload_to_json(w.shash, mod))
                    self._add_workload(w)
        return self.workloads[self._index[w.shash]]

    def commit_tuning_records(self, records: List[TuningRecord]) -> None:
        for r in records:
            if r.workload.shash not in self._index:
                self.commit_workload(r.workload.mod)
            _append(self.path_tuning_record, [self._index[r.workload.shash], record_to_json(r)])
            self._entries.append(_Entry(r.workload, None, r))

    def _find_workload(self, shash) -> Optional[Workload]:
        k = self._index.get(shash)
        return None if k is None else self.workloads[k]

    def get_top_k(self, workload, top_k, target=None):
        if top_k <= 0:
            return []
        mine = [
            (mean, e)
            for e in self._entries
            if e.workload.shash == workload.shash
            and (mean := e.mean_sec) is not None
            and (target is None or e.target == target)
        ]
        return [e.record for _, e in sorted(mine, key=lambda me: me[0])[:top_k]]

    def get_all_tuning_records(self):
        return [e.record for e in self._entries]

    def __len__(self):
        return len(self._entries)


class _Entry:
    """A record line: run time and target read on first use (`_header`), the rest parsed
    when the record is returned."""

    def __init__(self, workload, raw: Optional[bytes], record: Optional[TuningRecord] = None):
        self.workload, self.raw, self._record = workload, raw, record
        self._head = None if record is None else (record.mean_sec, record.target)

    def _header(self):
        if self._head is None:
            secs, target = _run_secs_and_target(self._line())
            mean = (
                statistics.fmean(secs) if secs and any(s < FAILED_RUN_SECS for s in secs) else None
            )
            self._head = (mean, target)
        return self._head

    @property
    def mean_sec(self):
        return self._header()[0]

    @property
    def target(self):
        return self._header()[1]

    @property
    def record(self) -> TuningRecord:
        if self._record is None:
            self._record = record_from_json(json.loads(self._line())[1], self.workload)
        return self._record

    def _line(self) -> bytes:
        assert self.raw is not None  # (an entry made from a record has its header and record)
        return self.raw


def _run_secs_and_target(raw: bytes):
    """(run_secs, canonical target) of a record line `[n,[trace,run_secs,target,args]]`,
    read from its end without parsing the trace: the last `],{` or `],null,` (either
    separator style) ends the run times when what follows is exactly a target, the
    arguments and `]]`. Otherwise the whole line is parsed."""
    near = max(0, len(raw) - _TAIL)  # target and arguments are short
    end = max(raw.rfind(sep, near) for sep in (b"],{", b"], {", b"],null,", b"], null,"))
    start = max(raw.rfind(b",[", near, end), raw.rfind(b", [", near, end))
    if end > 0 and start > 0:
        try:
            secs = [float(x) for x in raw[raw.index(b"[", start) + 1 : end].split(b",")]
            tail = raw[raw.index(b",", end) + 1 :].decode().lstrip()
            _, k = _DECODER.raw_decode(tail)
            rest = tail[k:].lstrip()
            if rest[:1] == ",":
                rest = rest[1:].lstrip()
                _, j = _DECODER.raw_decode(rest)  # the arguments
                if rest[j:].strip() == "]]":
                    return secs, _target_key(tail[:k])
        except (ValueError, IndexError):
            pass
    rec = json.loads(raw)[1]
    return (
        (rec[1] if len(rec) > 1 else None),
        _target_key(json.dumps(rec[2] if len(rec) > 2 else None)),
    )


@functools.lru_cache(maxsize=64)
def _target_key(target_json: str) -> Optional[str]:
    """The canonical target of a record's target JSON (a log holds few distinct ones)."""
    return _canonical(_target_from_json(json.loads(target_json)))


_DECODER = json.JSONDecoder()
_TAIL = 4096


def _canonical(target):
    from tir_mlir.meta_schedule.target_key import canonical_target

    return None if target is None else canonical_target(target)


def _lines(path) -> List[bytes]:
    """The non-empty lines of a JSON-lines file, unparsed; a torn last line (no newline
    after it, not valid JSON) is dropped with a warning."""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    torn = lines.pop() if lines else b""  # what follows the last newline
    if torn.strip():
        try:
            json.loads(torn)
            lines.append(torn)
        except json.JSONDecodeError:
            warnings.warn(f"{path}: dropping an incomplete last line (a killed writer)")
    return [line for line in lines if line.strip()]


def _append(path, obj):
    """Append one line (flushed to disk) under the file's lock."""
    with _locked(path) as f:
        _append_locked(f, obj)


@contextlib.contextmanager
def _locked(path):
    """The file opened for update under an exclusive lock (flock): writers in several
    processes take turns, so none cuts another's line in progress as a torn tail or writes
    over it (two writers of 400 records each lost records without it)."""
    with open(path, "r+b") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield f
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _append_locked(f, obj):
    """Append one line to the locked file `f`, first cutting a torn tail (a killed writer's)
    so that it starts a line."""
    line = (json.dumps(obj, separators=(",", ":")) + "\n").encode()
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


def _workload_to_json(shash: str, mod: IRModule) -> list:
    """The program as TVM's serialised IRModule, which TVM 0.21 reads (tvm_ir_json); as
    TVMScript, which only tir-mlir reads, when it holds a construct the writer does not cover."""
    try:
        return [shash, tvm_payload(module_to_tvm_json(mod))]
    except ValueError:
        return [shash, base64.b64encode(mod.script().encode()).decode()]


def _workload_from_json(line) -> Workload:
    """A workload line: TVM's serialised IRModule (written by tir-mlir or by TVM) or TVMScript
    (older tir-mlir files) is parsed and keyed by tir-mlir's hash (the one on the line when
    tir-mlir wrote it: that of the program before printing; recomputed for TVM's numeric
    hashes). A program tir-mlir cannot read is kept under its hash and matches no program."""
    from tir_mlir.frontend.parser import parse

    shash, payload = line
    data = base64.b64decode(payload)
    ours = len(shash) == 64 and all(c in "0123456789abcdef" for c in shash)
    if data.lstrip()[:1] in (b"#", b"@"):
        return Workload(parse(data.decode()), shash=shash if ours else None)
    graph = graph_from_payload(payload)
    if graph is not None:
        try:
            mod = parse(tvm_json_to_script(graph))
        except (ValueError, KeyError, IndexError, TypeError, TIRError):
            return Workload(shash=str(shash))
        return Workload(mod, shash=shash if ours else None)
    return Workload(shash=str(shash))


def record_to_json(r: TuningRecord) -> list:
    from tir_mlir.schedule.tvm_trace import to_tvm_json

    run_secs = r.run_secs if r.is_valid else [FAILED_RUN_SECS]
    args = None if r.args_info is None else [a.as_json() for a in r.args_info]
    return [to_tvm_json(r.trace), run_secs, _target_to_json(r.target), args]


def record_from_json(rec, workload: Workload) -> TuningRecord:
    from tir_mlir.meta_schedule.arg_info import ArgInfo
    from tir_mlir.schedule.tvm_trace import from_tvm_json

    trace, run_secs, target, args = (list(rec) + [None] * 4)[:4]
    error = None
    if run_secs and all(s >= FAILED_RUN_SECS for s in run_secs):
        run_secs, error = None, "Failed: recorded with TVM's failure time (1e9 s)"
    return TuningRecord(
        from_tvm_json(trace),
        workload,
        run_secs,
        _target_from_json(target),
        None if args is None else [ArgInfo.from_json(a) for a in args],
        error,
    )


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
    for key in MACHINE_FLAGS:
        if key in obj:
            val = obj[key]
            val = ",".join(val) if isinstance(val, list) else val
            words.append(f"-{key}={val}")
    return " ".join(words)
