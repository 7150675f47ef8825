"""`derived_object` (TVM 0.21's `ms.derived_object` / `ms.utils.derived_object`): the decorator
a TVM user puts on a subclass of a user-facing `Py*` class (PyScheduleRule, PyPostproc,
PyMutator, PyCostModel, PySearchStrategy, PyMeasureCallback, PyDatabase,
PySpaceGenerator).

TVM needs it to wrap the Python object in a C++ one. Here every tuner class is Python, so the
subclass is used as it is: the decorator checks that it derives from a `Py*` class (TVM's
error otherwise) and gives it TVM's `_outer()` (in TVM a weak reference to the wrapping
object, which TVM's own derived classes call; here the object itself). Nothing is added to
the instances, so they still pickle (the search's worker processes get them) and copy."""


def _outer(self):
    return self


def derived_object(cls: type) -> type:
    if not isinstance(cls, type) or not getattr(cls, "_py_interface", False):
        raise TypeError(
            "Please use the user-facing method overriding class, i.e., "
            "PyScheduleRule, PyPostproc, PyMutator, PyCostModel, "
            "PySearchStrategy, PyMeasureCallback, PyDatabase or "
            "PySpaceGenerator."
        )
    cls._outer = _outer
    return cls
