"""Inert: the value of `T.Buffer((128,), "float32")` and the like in a parameter annotation.

Python evaluates annotations when it defines a function; TVMScript reads them from the source
instead, so at run time they only need to evaluate to something, whatever they are applied to.
"""


class Inert:
    __slots__ = ()

    def __call__(self, *args, **kwargs):
        return self

    def __getitem__(self, key):
        return self

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __repr__(self):
        return "<TVMScript annotation>"
