"""What a builder takes and returns (TVM's `BuilderInput` / `BuilderResult`)."""

from dataclasses import dataclass
from typing import Callable, List, Optional

from tir_mlir.module import IRModule


@dataclass
class BuilderInput:
    """A candidate: an IRModule (a scheduled program) and the target to compile it for.
    `params` is TVM's (constant parameters); tir-mlir programs have none."""

    mod: IRModule
    target: str = "llvm"
    params: Optional[dict] = None


@dataclass
class BuilderResult:
    """`artifact_path`: a shared object `tir_mlir.load_module` loads; None on failure, and then
    `error_msg` says why, starting with its kind ("BuildError: ...", "BuildTimeout: ...",
    "BuildCrash: ...")."""

    artifact_path: Optional[str]
    error_msg: Optional[str] = None


class Builder:
    def build(self, build_inputs: List[BuilderInput]) -> List[BuilderResult]:
        raise NotImplementedError

    def build_async(self, build_inputs: List[BuilderInput]) -> List[Callable[[], BuilderResult]]:
        """Functions that each return one BuilderResult; by default the whole batch is built
        first (a builder with workers starts them all and returns at once)."""
        results = self.build(build_inputs)
        return [lambda r=r: r for r in results]
