"""What LLVM prints on its own while the JIT compiles.

LLVM writes its diagnostics straight to file descriptor 2, without a location that means
anything to the user (`warning: <unknown>:0:0: loop not vectorized: ...`, once per function and
pass). They are captured while compiling: the "loop not vectorized" remarks are dropped (a
`vectorized` loop that LLVM cannot vectorize still runs correctly, scalar), anything else is
passed on once per distinct line.
"""

import contextlib
import os
import sys
import tempfile

SILENCED = ("loop not vectorized", "loop not interleaved", "loop not unrolled")


@contextlib.contextmanager
def captured():
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            text = tmp.read().decode(errors="replace")
    seen = set()
    for line in text.splitlines():
        if line and line not in seen and not any(s in line for s in SILENCED):
            seen.add(line)
            print(line, file=sys.stderr)
