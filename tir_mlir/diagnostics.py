"""Rendering errors for a terminal the way mlir-opt does:

    prog.tir:8:23: error: division by zero
                B[vi] = A[vi // 0]
                          ^

followed by the error's notes, the same way (`prog.tir:4:10: note: buffer 'A' declared here`).

Bold location and red `error:` on a terminal; plain text when the stream is not a terminal or
NO_COLOR is set (https://no-color.org). Source lines come from the texts the CLI read (stdin
included) or, failing that, from the file on disk.
"""

import os
import re
from typing import Dict, Optional

from tir_mlir.errors import SourceLoc

BOLD, RED, GREEN, RESET = "\033[1m", "\033[1;31m", "\033[1;32m", "\033[0m"


def use_color(stream) -> bool:
    return not os.environ.get("NO_COLOR") and hasattr(stream, "isatty") and stream.isatty()


def source_line(loc: SourceLoc, sources: Dict[str, str]) -> Optional[str]:
    text = sources.get(loc.file)
    if text is None and os.path.isfile(loc.file):
        try:
            with open(loc.file, encoding="utf-8", errors="replace") as f:
                text = f.read(1 << 24)
        except OSError:
            return None
    if text is None:
        return None
    lines = re.split(r"\r\n?|\n", text)
    return lines[loc.line - 1] if 0 < loc.line <= len(lines) else None


def render(
    message: str,
    loc: Optional[SourceLoc],
    sources: Dict[str, str],
    color: bool = False,
    severity: str = "error",
    notes=(),
) -> str:
    bold, red, green, reset = (BOLD, RED, GREEN, RESET) if color else ("", "", "", "")
    head = f"{bold}{loc}: {reset}" if loc else ""
    kind = red if severity == "error" else bold
    out = [f"{head}{kind}{severity}: {reset}{bold}{message}{reset}"]
    line = source_line(loc, sources) if loc else None
    if loc and line is not None and len(line) <= 500:
        col = max(1, min(loc.col, len(line) + 1))
        pad = "".join(c if c == "\t" else " " for c in line[: col - 1])
        out += [line, f"{pad}{green}^{reset}"]
    for note, note_loc in notes:
        out.append(render(note, note_loc, sources, color, "note"))
    return "\n".join(out)
