"""`derived_object` (TVM 0.21's `ms.derived_object` / `ms.utils.derived_object`): the decorator
a TVM user puts on a subclass of a user-facing `Py*` class (PyScheduleRule, PyPostproc,
PyMutator, PyCostModel, PySearchStrategy, PyMeasureCallback).

TVM needs it to wrap the Python object in a C++ one. Here every tuner class is Python, so the
subclass is used as it is: the decorator checks that it derives from a `Py*` class (TVM's
error otherwise) and gives its instances TVM's `_outer` (a weak reference to the object the
tuner holds, which TVM's own derived classes call)."""
import functools
import weakref


def derived_object(cls: type) -> type:
    if not isinstance(cls, type) or not getattr(cls, "_py_interface", False):
        raise TypeError("Please use the user-facing method overriding class, i.e., "
                        "PyScheduleRule, PyPostproc, PyMutator, PyCostModel, "
                        "PySearchStrategy or PyMeasureCallback.")
    init = cls.__init__

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self._outer = weakref.ref(self)
    cls.__init__ = __init__
    return cls
