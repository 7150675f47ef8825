"""`LocalBuilder`: compiles candidates in parallel worker processes, each with a timeout.

A compile that raises, hangs or kills its worker (an LLVM assertion, a segfault) becomes a
BuilderResult with `error_msg`; the other candidates build on. Programs travel to the workers
as MLIR text; artifacts are `export_library` shared objects in `artifact_dir` (default: a
temporary folder removed when the process exits, or by the next tuner if it is killed)."""

import functools
import os
import uuid
import weakref
from typing import Callable, List, Optional

from tir_mlir.meta_schedule.builder.builder import Builder, BuilderInput, BuilderResult
from tir_mlir.meta_schedule.process_pool import ProcessPool, TaskError
from tir_mlir.ir.user_cache import process_temp_dir

_KIND = {"error": "BuildError", "timeout": "BuildTimeout", "crash": "BuildCrash"}


class LocalBuilder(Builder):
    def __init__(
        self,
        max_workers: Optional[int] = None,
        timeout_sec: float = 30.0,
        artifact_dir: Optional[str] = None,
        f_build: Optional[str] = None,
    ):
        """`max_workers` defaults to the number of CPUs; `f_build` ("module:function",
        called as f(mlir_text, target, artifact_path) -> path in the worker) replaces the
        default compile, e.g. to inject failures in tests."""
        self.max_workers = max_workers or os.cpu_count() or 1
        self.timeout_sec = timeout_sec
        self.f_build = f_build or "tir_mlir.meta_schedule.builder.local_builder:build_artifact"
        if artifact_dir is None:  # (those of killed tuners are deleted here too)
            artifact_dir = str(process_temp_dir("tir_mlir_build_"))
        os.makedirs(artifact_dir, exist_ok=True)
        self.artifact_dir = artifact_dir
        self._pool = ProcessPool(self.max_workers)
        weakref.finalize(self, self._pool.shutdown)  # the workers go with the builder

    def build(self, build_inputs: List[BuilderInput]) -> List[BuilderResult]:
        return [f() for f in self.build_async(build_inputs)]

    def build_async(self, build_inputs: List[BuilderInput]) -> List[Callable[[], BuilderResult]]:
        """Start every compile; each returned function waits for its BuilderResult (so a
        caller can measure the first candidates while the others compile)."""
        out = []
        for inp in build_inputs:
            path = os.path.join(self.artifact_dir, f"{uuid.uuid4().hex}.so")
            future = self._pool.submit(
                self.f_build, (inp.mod.mlir(), str(inp.target), path), timeout=self.timeout_sec
            )
            out.append(functools.partial(_result, future, self))  # keeps the pool alive
        return out

    def shutdown(self, kill: bool = False):
        """Stop the worker processes (`kill`: without waiting for the candidates in flight)."""
        self._pool.shutdown(kill)


def _result(future, _builder) -> BuilderResult:
    try:
        return BuilderResult(future.result(), None)
    except TaskError as e:
        return BuilderResult(None, f"{_KIND[e.kind]}: {e.message}")


def build_artifact(mlir_text: str, target: str, path: str) -> str:
    """Runs in a worker: parse the program, compile it, export the shared object."""
    from tir_mlir.module import module_from_mlir
    from tir_mlir.runtime.build import build

    build(module_from_mlir(mlir_text), target=target).export_library(path)
    return path
