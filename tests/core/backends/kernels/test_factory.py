"""The logspace and randperm factories (kernels/factory.py) against numpy."""
import numpy as np
import pytest
from helpers import assert_close

import ember as E


@pytest.mark.parametrize("dtype", [E.float32, E.float64, E.float16, E.bfloat16])
@pytest.mark.parametrize("start,end,steps,base", [(0, 3, 4, 10.0), (-2, 2, 5, 2.0),
                                                  (1, 1, 1, 10.0), (0, 2, 0, 10.0),
                                                  (2.5, -1, 6, 3.0)])
def test_logspace_matches_numpy(dtype, start, end, steps, base):
    got = E.logspace(start, end, steps, base, dtype=dtype)
    assert_close(got, np.logspace(start, end, steps, base=base), dtype)


def test_logspace_defaults_integers_and_errors():
    assert E.logspace(0, 2, 3).dtype is E.get_default_dtype()
    assert E.logspace(0, 1, 3, dtype=E.int64).tolist() == [1, 3, 10]  # truncates, as torch
    assert E.logspace(0, 2, 3, base=2, dtype=E.int32).tolist() == [1, 2, 4]
    assert E.logspace(0, 1, 2, requires_grad=True).requires_grad
    with pytest.raises(ValueError, match="must be non-negative, got -1"):
        E.logspace(0, 2, -1)
    with pytest.raises(TypeError, match="'base' must be a number"):
        E.logspace(0, 2, 3, base="10")


@pytest.mark.parametrize("dtype", [E.int64, E.int32, E.uint8, E.float32, E.float16])
@pytest.mark.parametrize("n", [0, 1, 7, 200])
def test_randperm_is_a_permutation(dtype, n):
    p = E.randperm(n, dtype=dtype)
    assert p.shape == (n,) and p.dtype is dtype
    np.testing.assert_array_equal(np.sort(p.numpy().astype(np.int64)), np.arange(n))


def test_randperm_follows_the_seed_and_generator():
    E.manual_seed(3)
    a = E.randperm(20)
    E.manual_seed(3)
    assert E.randperm(20).tolist() == a.tolist() and a.dtype is E.int64
    g = E.Generator().manual_seed(5)
    state = g.get_state()
    b = E.randperm(20, generator=g)
    g.set_state(state)
    assert E.randperm(20, generator=g).tolist() == b.tolist()
    draws = {tuple(E.randperm(5).tolist()) for _ in range(40)}
    assert len(draws) > 10  # not a fixed order


def test_randperm_errors():
    with pytest.raises(ValueError, match="non-negative, got -1"):
        E.randperm(-1)
    with pytest.raises(NotImplementedError, match="bool"):
        E.randperm(3, dtype=E.bool_)
    with pytest.raises(RuntimeError, match="n = 257 is too large for ember.uint8"):
        E.randperm(257, dtype=E.uint8)
    with pytest.raises(RuntimeError, match="at most 2048"):
        E.randperm(2049, dtype=E.float16)
    with pytest.raises(RuntimeError, match="floating point"):
        E.randperm(3, requires_grad=True)
    with pytest.raises(TypeError):
        E.randperm(3.5)
