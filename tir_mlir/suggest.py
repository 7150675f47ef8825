"""`did you mean` hints for a misspelt name (a block, a buffer, a keyword argument)."""

import difflib
from collections.abc import Iterable


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """` (did you mean 'x'?)` for the candidate closest to `name` (case aside), or "" when
    none is close."""
    by_folded = {}
    for c in sorted(set(map(str, candidates))):
        by_folded.setdefault(c.lower(), c)
    near = difflib.get_close_matches(str(name).lower(), list(by_folded), 1)
    return f" (did you mean {by_folded[near[0]]!r}?)" if near else ""
