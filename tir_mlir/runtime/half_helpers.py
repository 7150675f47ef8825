"""libgcc's float16 conversion helpers, bound explicitly into JIT-compiled code.

LLVM lowers a float -> float16 conversion it has no instruction for (float64 -> float16 on
any x86; all of them without F16C) to a call of `__truncdfhf2` & co. The JIT looks such names up
in the whole process, where the first library exporting one wins: TVM's libtvm exports its own
`__truncdfhf2` returning the half in an integer register, so with `import tvm` before a build
every such cast read an empty vector register (zeros). Registering libgcc_s's addresses by
name keeps the JIT on the ABI LLVM emits calls for. (The cached shared objects were not
affected: tests/runtime/test_runtime_half_helpers.py checks both builds.)
"""

import ctypes
import functools

_NAMES = (
    "__truncdfhf2",
    "__truncsfhf2",
    "__extendhfsf2",
    "__extendhfdf2",
    "__truncxfhf2",
    "__truncdfbf2",
    "__truncsfbf2",
)


@functools.lru_cache(maxsize=1)
def helper_addresses():
    """[(name, address)] of the helpers libgcc_s defines (none when it is not found)."""
    try:
        lib = ctypes.CDLL("libgcc_s.so.1")  # (its soname on Linux; loaded already by most)
    except OSError:
        return []
    out = []
    for name in _NAMES:
        try:
            out.append((name, ctypes.cast(getattr(lib, name), ctypes.c_void_p).value))
        except AttributeError:
            continue
    return out


def register(engine) -> None:
    for name, address in helper_addresses():
        engine.raw_register_runtime(name, ctypes.c_void_p(address))
