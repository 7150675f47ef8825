"""`DaskRunner`: measure candidates on the workers of a Dask cluster (optional extra:
`pip install 'tir-mlir[distributed]'`).

The tuner builds locally and ships each artifact (the shared object and its signature file,
as bytes) to a worker; the reference inputs/outputs are scattered once to every worker. On
the worker, measurement runs in a child process exactly as with LocalRunner, so a crashing
or endless candidate costs that child, never the Dask worker. Start workers with one thread
each (`dask worker ADDRESS --nthreads 1`) so that two measurements never share a machine's
cores, or pass `resources`.

A worker answers with plain data only (a dict of strings and floats, `measure_remote`), and
the client reads results with Dask's msgpack deserializer alone (`PLAIN_DATA`): a result a
worker sends as a pickle (or as Dask's own typed serialization, which names its type by a
pickle) is refused, never loaded; a plain reply is checked for form and range
(`reply_result`). Dask itself still runs code on workers by design and unpickles the task
errors its scheduler relays: the cluster must be trusted (docs/security.md)."""

import hashlib
import math
import os
import tempfile
import threading
from typing import Any, List, Optional

from tir_mlir.errors import MissingExtraError, TIRError
from tir_mlir.meta_schedule.runner.local_runner import _KIND, measure_args
from tir_mlir.meta_schedule.runner.runner import (
    EvaluatorConfig,
    Runner,
    RunnerFuture,
    RunnerInput,
    RunnerResult,
)


# Dask serialization families the client accepts for results: msgpack (plain data) and
# "error" (the worker's note that it could not serialize a value). Not "pickle", and not
# "dask", whose header names the value's type by a pickle.
PLAIN_DATA = ("msgpack", "error")


def _client_class():
    try:
        # (an optional extra: absent from a plain install, where pyright cannot resolve it)
        from distributed import Client  # pyright: ignore[reportMissingImports]
    except ImportError:
        raise MissingExtraError(
            "the Dask runner needs Dask, which is not installed: "
            "pip install 'tir-mlir[distributed]' (dask[distributed])"
        ) from None
    return Client


def plain_data_client(address=None, security=None):
    """A `distributed.Client` for `address` (a scheduler address or a LocalCluster; None: a
    local cluster) that sends and accepts plain data only (msgpack), as DaskRunner needs."""
    return _client_class()(
        address, security=security, serializers=["msgpack"], deserializers=list(PLAIN_DATA)
    )


def tls_security(ca_file: str, cert: str, key: str):
    """Dask's `Security` for mutual TLS: every connection encrypted, and only holders of a
    certificate signed by `ca_file` admitted (the scheduler and workers started with the same
    `--tls-ca-file/--tls-cert/--tls-key`); the address is then `tls://HOST:PORT`."""
    _client_class()
    from distributed.security import Security  # pyright: ignore[reportMissingImports]

    return Security(
        tls_ca_file=ca_file, tls_client_cert=cert, tls_client_key=key, require_encryption=True
    )


class DaskRunner(Runner):
    def __init__(
        self,
        address=None,
        timeout_sec: float = 30.0,
        evaluator_config: Optional[EvaluatorConfig] = None,
        cooldown_sec: float = 0.0,
        security=None,
        resources: Optional[dict] = None,
        reference: Optional[str] = None,
    ):
        """`address`: the scheduler ("tcp://host:8786"), or a `distributed.Client` made by
        `plain_data_client` (one that may unpickle results is refused).
        `reference`: as LocalRunner's (checks inputs that name none).
        `security`: a `distributed.security.Security` (TLS) for the connection;
        `resources`: Dask resources each measurement needs, e.g. {"measure": 1}."""
        Client = _client_class()
        self.client: Any  # a distributed.Client
        if isinstance(address, Client):
            if list(getattr(address, "_deserializers", None) or ()) != list(PLAIN_DATA):
                raise TIRError(
                    "DaskRunner needs a client that reads results as plain data "
                    "only: make it with ms.runner.plain_data_client("
                    "address), not distributed.Client(address)"
                )
            self.client, self._owns_client = address, False
        else:
            self.client = plain_data_client(address, security)
            self._owns_client = True
        self.timeout_sec = timeout_sec
        self.evaluator_config = evaluator_config or EvaluatorConfig()
        self.cooldown_sec, self.resources, self.reference = cooldown_sec, resources, reference
        self._references = {}
        self._submitted = []  # cancelled by shutdown(kill=True)
        self._lock = threading.Lock()

    def _reference(self, path):
        """The reference file's bytes, scattered to all workers once per file."""
        if path is None:
            return None
        with self._lock:
            if path not in self._references:
                with open(path, "rb") as f:
                    self._references[path] = self.client.scatter(f.read(), broadcast=True)
            return self._references[path]

    def run(self, runner_inputs: List[RunnerInput]) -> List[RunnerFuture]:
        out = []
        for inp in runner_inputs:
            try:
                with open(inp.artifact_path, "rb") as f:
                    so = f.read()
                with open(inp.artifact_path + ".json", "rb") as f:
                    sig = f.read()
            except OSError as e:
                out.append(_Done(RunnerResult(None, f"RunError: cannot read the artifact: {e}")))
                continue
            args = measure_args(inp, self.evaluator_config, self.cooldown_sec, None, self.reference)
            future = self.client.submit(
                measure_remote,
                so,
                sig,
                self._reference(args[4]),
                args[1:],
                self.timeout_sec,
                pure=False,
                resources=self.resources,
            )
            self._submitted = [f for f in self._submitted if not f.done()] + [future]
            out.append(RunnerFuture(future, self._to_result))
        return out

    def shutdown(self, kill: bool = False):
        if kill:
            self.client.cancel([f for f in self._submitted if not f.done()])
        if self._owns_client:
            self.client.close()

    def _to_result(self, future) -> RunnerResult:
        try:
            reply = future.result()
        except Exception as e:  # noqa: BLE001 - a lost worker, a refused pickle ...
            return RunnerResult(
                None, f"RunError: the cluster failed the task: {type(e).__name__}: {str(e)[:2000]}"
            )
        return reply_result(reply, max(1, self.evaluator_config.repeat), self.timeout_sec)


class _Done(RunnerFuture):
    def __init__(self, result):
        self._result = result

    def done(self):
        return True

    def result(self):
        return self._result


def reply_result(reply, max_times: int = 1000, max_secs: float = math.inf) -> RunnerResult:
    """A worker's reply as a RunnerResult. The reply comes from another machine: only the two
    forms measure_remote returns are read, {"status": "ok", "run_secs": [seconds...]} with 1
    to `max_times` times, each a float in (0, max_secs], and {"status": "error", "kind":
    "timeout"|"crash"|"error", "message": str}; anything else is a failed measurement, never
    a time."""
    why = _malformed(reply, max_times, max_secs)
    if why:
        return RunnerResult(None, f"RunError: malformed reply from the worker ({why})")
    if reply["status"] == "ok":
        return RunnerResult(list(reply["run_secs"]), None)
    kind, message = reply["kind"], reply["message"][:2000]
    if kind == "error" and message.startswith("WrongResult:"):
        return RunnerResult(None, message)
    return RunnerResult(None, f"{_KIND.get(kind, 'RunError')}: {message}")


def _malformed(reply, max_times: int, max_secs: float) -> str:
    """Why `reply` is not one of measure_remote's two forms ("" when it is)."""
    if type(reply) is not dict:
        return f"a {type(reply).__name__}, not a dict"
    if reply.get("status") == "ok":
        secs = reply.get("run_secs")
        if set(reply) != {"status", "run_secs"} or (
            type(secs) is not list and type(secs) is not tuple
        ):
            return "an 'ok' reply is {status, run_secs: [seconds]}"
        if not 1 <= len(secs) <= max_times:
            return f"{len(secs)} times, expected 1 to {max_times}"
        for s in secs:
            if type(s) is not float or not 0 < s <= max_secs:
                return f"time {str(s)[:40]!r} is not a float in (0, {max_secs}] seconds"
        return ""
    if reply.get("status") == "error":
        if (
            set(reply) != {"status", "kind", "message"}
            or reply["kind"] not in ("timeout", "crash", "error")
            or type(reply["message"]) is not str
        ):
            return "an 'error' reply is {status, kind: timeout|crash|error, message: str}"
        return ""
    return "status is neither 'ok' nor 'error'"


# --- on the worker -------------------------------------------------------------------------
_POOL = None
_POOL_LOCK = threading.Lock()


def measure_remote(so: bytes, sig: bytes, reference: Optional[bytes], args, timeout_sec) -> dict:
    """Runs on a Dask worker: write the artifact, measure it in a child process. The reply is
    plain data (msgpack), whatever happens: a failure here is an "error" reply, not an
    exception (Dask would send an exception to the client as a pickle)."""
    try:
        return _measure(so, sig, reference, args, timeout_sec)
    except Exception as e:  # noqa: BLE001 - the worker's own failure (disk full ...)
        return {
            "status": "error",
            "kind": "error",
            "message": f"the worker failed: {type(e).__name__}: {e}"[:2000],
        }


def _measure(so, sig, reference, args, timeout_sec) -> dict:
    global _POOL
    from tir_mlir.meta_schedule.process_pool import ProcessPool, TaskError

    with _POOL_LOCK:
        if _POOL is None:
            env = (
                {"OMP_NUM_THREADS": os.environ["TVM_NUM_THREADS"]}
                if os.environ.get("TVM_NUM_THREADS")
                else {}
            )
            _POOL = ProcessPool(1, env)
    with tempfile.TemporaryDirectory(prefix="tir_mlir_remote_") as tmp:
        path = os.path.join(tmp, hashlib.sha256(so).hexdigest()[:16] + ".so")
        with open(path, "wb") as f:
            f.write(so)
        with open(path + ".json", "wb") as f:
            f.write(sig)
        ref_path = None
        if reference is not None:
            ref_path = os.path.join(tmp, "reference.npz")
            with open(ref_path, "wb") as f:
                f.write(reference)
        args_info, func_name, config, _, cooldown, affinity, slow_secs = args
        task = _POOL.submit(
            "tir_mlir.meta_schedule.runner.measure:run_artifact",
            (path, args_info, func_name, config, ref_path, cooldown, affinity, slow_secs),
            timeout=timeout_sec,
        )
        try:
            return {"status": "ok", "run_secs": [float(t) for t in task.result()]}
        except TaskError as e:
            return {"status": "error", "kind": str(e.kind), "message": str(e.message)[:2000]}
