"""`tvm.testing.assert_allclose`: numpy's, taking NDArrays as they are (numpy arrays)."""

from numpy.testing import assert_allclose

__all__ = ["assert_allclose"]
