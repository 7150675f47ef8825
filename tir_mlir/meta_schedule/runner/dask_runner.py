"""`DaskRunner`: measure candidates on the workers of a Dask cluster (optional extra:
`pip install 'tir-mlir[distributed]'`).

The tuner builds locally and ships each artifact (the shared object and its signature file,
as bytes) to a worker; the reference inputs/outputs are scattered once to every worker. On
the worker, measurement runs in a child process exactly as with LocalRunner, so a crashing
or endless candidate costs that child, never the Dask worker. Start workers with one thread
each (`dask worker ADDRESS --nthreads 1`) so that two measurements never share a machine's
cores, or pass `resources`. Security: whoever can connect to the scheduler can run code on
every worker, and a worker's reply is deserialized by Dask (possibly a pickle): the cluster
must be trusted (docs/security.md); replies are still checked for form (`reply_result`)."""
import hashlib
import os
import tempfile
import threading
from typing import List, Optional

from tir_mlir.errors import MissingExtraError
from tir_mlir.meta_schedule.runner.local_runner import _KIND, measure_args
from tir_mlir.meta_schedule.runner.runner import (EvaluatorConfig, Runner, RunnerFuture,
                                                  RunnerInput, RunnerResult)


def _client_class():
    try:
        from distributed import Client
    except ImportError:
        raise MissingExtraError("the Dask runner needs Dask, which is not installed: "
                                "pip install 'tir-mlir[distributed]' (dask[distributed])") \
            from None
    return Client


def tls_security(ca_file: str, cert: str, key: str):
    """Dask's `Security` for mutual TLS: every connection encrypted, and only holders of a
    certificate signed by `ca_file` admitted (the scheduler and workers started with the same
    `--tls-ca-file/--tls-cert/--tls-key`); the address is then `tls://HOST:PORT`."""
    _client_class()
    from distributed.security import Security
    return Security(tls_ca_file=ca_file, tls_client_cert=cert, tls_client_key=key,
                    require_encryption=True)


class DaskRunner(Runner):
    def __init__(self, address=None, timeout_sec: float = 30.0,
                 evaluator_config: Optional[EvaluatorConfig] = None, cooldown_sec: float = 0.0,
                 security=None, resources: Optional[dict] = None,
                 reference: Optional[str] = None):
        """`address`: the scheduler ("tcp://host:8786"), or a `distributed.Client`.
        `reference`: as LocalRunner's (checks inputs that name none).
        `security`: a `distributed.security.Security` (TLS) for the connection;
        `resources`: Dask resources each measurement needs, e.g. {"measure": 1}."""
        Client = _client_class()
        if isinstance(address, Client):
            self.client, self._owns_client = address, False
        else:
            self.client = Client(address, security=security) if address else Client(
                security=security)
            self._owns_client = True
        self.timeout_sec = timeout_sec
        self.evaluator_config = evaluator_config or EvaluatorConfig()
        self.cooldown_sec, self.resources, self.reference = cooldown_sec, resources, reference
        self._references = {}
        self._submitted = []       # cancelled by shutdown(kill=True)
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
            args = measure_args(inp, self.evaluator_config, self.cooldown_sec, None,
                                self.reference)
            future = self.client.submit(measure_remote, so, sig, self._reference(args[4]),
                                        args[1:], self.timeout_sec, pure=False,
                                        resources=self.resources)
            self._submitted = [f for f in self._submitted if not f.done()] + [future]
            out.append(RunnerFuture(future, _to_result))
        return out

    def shutdown(self, kill: bool = False):
        if kill:
            self.client.cancel([f for f in self._submitted if not f.done()])
        if self._owns_client:
            self.client.close()


class _Done(RunnerFuture):
    def __init__(self, result):
        self._result = result

    def done(self):
        return True

    def result(self):
        return self._result


def _to_result(future) -> RunnerResult:
    try:
        reply = future.result()
    except Exception as e:  # noqa: BLE001 - a lost worker, a cancelled task ...
        return RunnerResult(None, f"RunError: the cluster failed the task: {type(e).__name__}: {e}")
    return reply_result(reply)


def reply_result(reply) -> RunnerResult:
    """A worker's reply as a RunnerResult. The reply comes from another machine: only the two
    forms measure_remote returns are read, ("ok", [seconds...]) with each time a positive
    finite number (RunnerResult checks that) and ("error", kind, message) with strings;
    anything else is a failed measurement, never a time."""
    if type(reply) is tuple and len(reply) == 2 and reply[0] == "ok" and \
            type(reply[1]) in (list, tuple):
        return RunnerResult(list(reply[1]), None)
    if type(reply) is tuple and len(reply) == 3 and reply[0] == "error" and \
            all(type(x) is str for x in reply[1:]):
        _, kind, message = reply
        if kind == "error" and message.startswith("WrongResult:"):
            return RunnerResult(None, message[:2000])
        return RunnerResult(None, f"{_KIND.get(kind, 'RunError')}: {message[:2000]}")
    return RunnerResult(None, f"RunError: malformed reply from the worker "
                              f"({type(reply).__name__})")


# --- on the worker -------------------------------------------------------------------------
_POOL = None
_POOL_LOCK = threading.Lock()


def measure_remote(so: bytes, sig: bytes, reference: Optional[bytes], args, timeout_sec):
    """Runs on a Dask worker: write the artifact, measure it in a child process."""
    global _POOL
    from tir_mlir.meta_schedule.process_pool import ProcessPool, TaskError
    with _POOL_LOCK:
        if _POOL is None:
            env = {"OMP_NUM_THREADS": os.environ["TVM_NUM_THREADS"]} \
                if os.environ.get("TVM_NUM_THREADS") else {}
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
        task = _POOL.submit("tir_mlir.meta_schedule.runner.measure:run_artifact",
                            (path, args_info, func_name, config, ref_path, cooldown, affinity,
                             slow_secs),
                            timeout=timeout_sec)
        try:
            return ("ok", task.result())
        except TaskError as e:
            return ("error", e.kind, e.message)
