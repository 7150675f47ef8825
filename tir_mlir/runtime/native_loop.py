"""Repeating a compiled function natively: `tir_mlir_repeat(fn, args, nargs, count)` calls
`fn(args[0], ..., args[nargs-1])` `count` times in C, so `time_evaluator` measures the kernel,
not one Python-to-C call per run. A small C helper, compiled once with `cc` into the cache folder
(or a private temporary one) and loaded on first use."""

import ctypes
import functools
import hashlib
import os
import subprocess

from tir_mlir.ir.user_cache import cache_dir, discard, intact, private_dir, seal_as

MAX_ARGS = 32


def _source() -> str:
    cases = []
    for n in range(MAX_ARGS + 1):
        params = ", ".join(["void *"] * n) or "void"
        args = ", ".join(f"a[{k}]" for k in range(n))
        cases.append(
            f"  case {n}: for (i = 0; i < count; ++i) (({'void (*)(' + params + ')'})fn)"
            f"({args}); break;"
        )
    return (
        "void tir_mlir_repeat(void *fn, void **a, int nargs, long count) {\n  long i;\n"
        "  switch (nargs) {\n" + "\n".join(cases) + "\n  }\n}\n"
    )


@functools.lru_cache(maxsize=1)
def _helper():
    src = _source()
    folder = cache_dir() or private_dir()
    path = folder / f"repeat-{hashlib.sha256(src.encode()).hexdigest()[:16]}.helper"
    if not intact(path):  # missing, damaged or replaced: built again
        discard(path)
        tmp = folder / f"{path.name}.{os.getpid()}.tmp"
        try:
            p = subprocess.run(
                ["cc", "-O2", "-shared", "-fPIC", "-x", "c", "-", "-o", str(tmp)],
                input=src,
                capture_output=True,
                text=True,
                check=False,
            )
            if p.returncode:
                return None
            seal_as(tmp, path)
            os.replace(tmp, path)
        except OSError:
            return None
        finally:
            tmp.unlink(missing_ok=True)
    fn = ctypes.CDLL(str(path)).tir_mlir_repeat
    fn.restype = None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_long]
    return fn


def repeater(fn_address: int, arg_addresses, call):
    """`repeat(count)`: run the C function at `fn_address` on these pointer arguments `count`
    times (the helper is built on first use; without it, `call()` runs `count` times)."""
    args = (ctypes.c_void_p * max(1, len(arg_addresses)))(*arg_addresses)

    def repeat(count):
        helper = _helper() if len(arg_addresses) <= MAX_ARGS else None
        if helper is None:
            for _ in range(count):
                call()
        else:
            helper(fn_address, args, len(arg_addresses), count)

    return repeat
