"""Kernel tables for tests that cross the numpy-only fast paths with the generic kernels.

``make_kernels`` takes a fast path only when its namespace *is* the numpy module; numpy
behind a ``SimpleNamespace`` (how the cuda plugin wraps CuPy) gets the generic code that
CuPy runs, on the same arrays, so both can be compared bit for bit.
"""
import types

import numpy as np
import pytest

from ember.backends import array_api


@pytest.fixture(scope="session")
def numpy_kernels() -> dict:
    """The cpu backend's table: numpy with its fast paths."""
    return array_api.make_kernels(np)


@pytest.fixture(scope="session")
def generic_kernels() -> dict:
    """The same kernels built for a namespace that is not numpy: the generic paths."""
    return array_api.make_kernels(types.SimpleNamespace(**vars(np)))


@pytest.fixture
def array_out_none_kernels(monkeypatch) -> dict:
    """The numpy reduction and softmax kernels as numpy < 2.3 gets them: no ``out=...``
    (``reduction.ARRAY_OUT`` None), so full reductions give numpy scalars."""
    from ember.backends.kernels import reduction, softmax
    monkeypatch.setattr(reduction, "ARRAY_OUT", None)
    table = reduction.kernels(np)
    table.update(softmax.kernels(np))
    return table


@pytest.fixture(scope="session")
def assert_same():
    """``assert_same(a, b)``: same dtype, shape and bits (NaN payloads included) for
    arrays or numpy scalars, as ``dispatch.wrap`` would see them."""
    def check(a, b):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype, f"dtype: {a.dtype} != {b.dtype}"
        assert a.shape == b.shape, f"shape: {a.shape} != {b.shape}"
        assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes(), \
            f"values differ:\n{a}\n{b}"
    return check
