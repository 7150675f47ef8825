"""`tvm.target.Target`: a target string with TVM's accessors (`.kind.name`, `.attrs`,
`.host`). `build`/`compile` take it wherever they take the string (`str(target)`)."""

from types import SimpleNamespace
from typing import Union

from tir_mlir.errors import BuildError

_KINDS = {"llvm": "llvm", "cpu": "llvm", "c": "llvm", "cuda": "cuda", "nvptx": "cuda"}


class Target:
    def __init__(self, target: Union[str, dict, "Target"], host=None):
        """`target`: `"llvm"`, `"llvm -mcpu=znver4"`, `"cuda"`, a dict `{"kind": "llvm",
        "mcpu": ...}` (TVM's JSON form) or a Target."""
        if isinstance(target, Target):
            text = target.text
        elif isinstance(target, dict):
            options = [f"-{k}={v}" for k, v in target.items() if k not in ("kind", "host")]
            text = " ".join([str(target.get("kind", "llvm")), *options])
        else:
            text = str(target)
        words = text.split()
        if not words or words[0] not in _KINDS:
            raise BuildError(f"unknown target {text!r}; known: {', '.join(_KINDS)}")
        self.text = text
        self.kind = SimpleNamespace(name=_KINDS[words[0]])
        self.attrs = {k.lstrip("-"): v for k, _, v in (w.partition("=") for w in words[1:])}
        self.keys = ["cpu"] if self.kind.name == "llvm" else ["cuda", "gpu"]
        self.host: Target | None = Target(host) if host is not None else None

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"Target({self.text!r})"

    def __eq__(self, other):
        return isinstance(other, (Target, str)) and str(other) == self.text

    def __hash__(self):
        return hash(self.text)
