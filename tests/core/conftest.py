"""Fixtures of the core tests."""
import numpy as np
import pytest

from ember.backends import array_api, registry
from ember.types import Backend


@pytest.fixture
def alt():
    """A second numpy-backed backend named ``alt``, standing in for another device (no
    GPU needed); its from_numpy copies, as a device transfer does."""
    b = Backend(name="alt", xp=np, kernels=array_api.make_kernels(np), type_prefix="Alt",
                array_type=np.ndarray, to_numpy=lambda a: a,
                from_numpy=lambda a, i: np.array(a, copy=True),
                make_rng=np.random.default_rng)
    registry.register(b)
    yield b
    registry.unregister("alt")
