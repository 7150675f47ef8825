"""The tuning target: a TVM-style target string ("llvm -num-cores 2", "cuda") read for what
the rules need (kind, cores, GPU limits)."""

import os
import shlex


class Target:
    def __init__(self, target="llvm"):
        if isinstance(target, Target):
            target = target.text
        self.text = str(target)
        words = shlex.split(self.text)
        if not words:
            raise ValueError("empty target")
        self.kind = {"cpu": "llvm", "nvptx": "cuda"}.get(words[0], words[0])
        if self.kind not in ("llvm", "cuda"):
            raise ValueError(f"unsupported target {self.text!r}: expected llvm or cuda")
        self.attrs = {}
        for w in words[1:]:
            if not w.startswith("-"):
                continue  # the value of "-key value"
            key, _, val = w.lstrip("-").partition("=")
            self.attrs[key] = val
        for key, val in zip(words[1:], words[2:]):  # "-num-cores 2"
            if key.startswith("-") and "=" not in key and not val.startswith("-"):
                self.attrs[key.lstrip("-")] = val

    @property
    def num_cores(self) -> int:
        return int(self.attrs.get("num-cores") or os.cpu_count() or 1)

    @property
    def keys(self) -> list:
        """TVM's target keys (what ApplyCustomRule looks registered rules up by): `-keys=a,b`
        or the kind's ("cpu" for llvm; "cuda", "gpu" for cuda)."""
        if self.attrs.get("keys"):
            return self.attrs["keys"].split(",")
        return ["cuda", "gpu"] if self.kind == "cuda" else ["cpu"]

    @property
    def is_gpu(self) -> bool:
        return self.kind == "cuda"

    # CUDA limits (TVM's defaults for cuda targets)
    max_threads_per_block = 1024
    max_shared_memory_per_block = 49152
    thread_warp_size = 32

    def __str__(self):
        """The canonical form, `kind -key=value ...` (what tir_mlir.build and TVM accept)."""
        return " ".join(
            [self.kind] + [f"-{k}={v}" if v != "" else f"-{k}" for k, v in self.attrs.items()]
        )

    def __repr__(self):
        return f"Target({self.text!r})"
