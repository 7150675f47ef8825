"""Scoped, TVM-style unique names: a second live `i` prints as `i_1`, then `i_2`.

Names are freed when their scope (loop, block, function) ends, so sibling loops may both
be called `i`, exactly like TVM's printer.
"""

import contextlib


class Namer:
    def __init__(self):
        self._names = {}  # ir.Value -> printed name
        self._live = set()
        self._frames = [[]]

    def define(self, value, hint: str) -> str:
        name, k = hint, 0
        while name in self._live:
            k += 1
            name = f"{hint}_{k}"
        self._live.add(name)
        self._frames[-1].append(name)
        self._names[value] = name
        return name

    def alias(self, value, name: str):
        """Let another value (an init region's copy of an iter var) print as `name`."""
        self._names[value] = name

    def __getitem__(self, value) -> str:
        return self._names[value]

    def __contains__(self, value) -> bool:
        return value in self._names

    @contextlib.contextmanager
    def scope(self):
        self._frames.append([])
        try:
            yield
        finally:
            for name in self._frames.pop():
                self._live.discard(name)
