"""`show()` and notebook display of scripts (IRModule, Schedule, Trace, loop/block views).

On a terminal the text is syntax-highlighted with pygments (when it is installed); piped
output, NO_COLOR, or a missing pygments print it plain. In notebooks (an IPython kernel:
Jupyter, VS Code) `show()` displays highlighted HTML with inline styles, as `_repr_html_`
does when an object is the cell's value (plain <pre> without pygments).
"""

import html
import os
import sys
from typing import Optional


def _pygments():
    try:
        import pygments
        from pygments import formatters, lexers

        return pygments, formatters, lexers
    except ImportError:
        return None


def _use_color(stream) -> bool:
    return (
        not os.environ.get("NO_COLOR")
        and hasattr(stream, "isatty")
        and stream.isatty()
        and _pygments() is not None
    )


def show_text(text: str, style: Optional[str] = None, file=None) -> None:
    """Print `text` (Python syntax), highlighted when `file` (default stdout) is a terminal.
    `style`: a pygments style name (default "default"); "plain" never highlights."""
    if file is None and style != "plain":
        display = _notebook_display()
        if display is not None:
            display(html_text(text, style))
            return
    file = file or sys.stdout
    found = _pygments()
    if style == "plain" or found is None or not _use_color(file):
        print(text, file=file)
        return
    pygments, formatters, lexers = found
    out = pygments.highlight(
        text, lexers.PythonLexer(), formatters.Terminal256Formatter(style=style or "default")
    )
    print(out.rstrip("\n"), file=file)


def html_text(text: str, style: Optional[str] = None) -> str:
    """`text` as highlighted HTML for notebooks."""
    lib = _pygments()
    if lib is None:
        return f"<pre>{html.escape(text)}</pre>"
    pygments, formatters, lexers = lib
    return pygments.highlight(
        text,
        lexers.PythonLexer(),
        formatters.HtmlFormatter(style=style or "default", noclasses=True),
    )


def _notebook_display():
    """f(html) showing HTML in the notebook this runs in, or None outside an IPython kernel
    (a terminal IPython prints text, as elsewhere)."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if get is not None else None
    if shell is None or "IPKernelApp" not in getattr(shell, "config", {}):
        return None
    # IPython is optional (only a notebook reaches here), and where installed its package does
    # not list HTML as re-exported from its documented home
    from IPython.display import HTML, display  # pyright: ignore[reportMissingImports, reportPrivateImportUsage]

    return lambda text: display(HTML(text))
