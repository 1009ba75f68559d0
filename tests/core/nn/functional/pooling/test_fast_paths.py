"""The fast paths of the pooling composites and kernels (issue 30) against the float64
references of ``reference.py``: adaptive pooling with uniform bins as plain pooling, global
average pooling, non-uniform adaptive max through one gather, average tiles summed one dim
at a time above 32768 elements, and the max-pool kernel's index arithmetic (windows along
the last dim only, NaN windows), for float16, bfloat16, float32 and float64."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck

from .reference import np_adaptive, np_avg_pool, np_max_pool

DTYPES = [E.float16, E.bfloat16, E.float32, E.float64]
# float16/bfloat16 compare in float32 and round once: the max is exact; an average of
# O(1) values is within a few roundings of the float64 value (absolute, ~4 eps)
TOL = {E.float16: (1e-3, 4e-3), E.bfloat16: (8e-3, 3.2e-2), E.float32: (1e-6, 5e-7),
       E.float64: (1e-12, 1e-13)}


def _specials(shape, seed=0):
    """Random values with +-inf, nan, -0.0, huge, tiny and subnormal cells sprinkled in."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    flat = x.reshape(-1)
    picks = rng.choice(flat.size, 7, replace=False)
    flat[picks] = [np.inf, -np.inf, np.nan, -0.0, 6e4, 1e-30, 1e-41]
    return x


def _as(x, dtype):
    """(ember tensor of dtype, float64 numpy of the values it holds)."""
    t = E.tensor(x).to(dtype)
    return t, t.to(E.float64).numpy()


def _close(got, want, dtype):
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(got.to(E.float64).numpy(), want, rtol=rtol, atol=atol,
                               equal_nan=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, size", [((2, 3, 8, 12), (4, 3)), ((2, 3, 8, 12), (5, 7)),
                                         ((3, 6, 10), (2, 5))])
def test_adaptive_max_pool2d_values_and_indices(dtype, shape, size):
    x, xn = _as(_specials(shape), dtype)
    values, indices = F.adaptive_max_pool2d(x, size, return_indices=True)
    want, want_idx = np_adaptive(xn, size, "max")
    _close(values, want, dtype)
    finite = ~np.isnan(want)   # a NaN window points at a NaN cell (PyTorch: the last one)
    assert np.array_equal(indices.numpy()[finite], want_idx[finite])
    planes = xn.reshape((-1,) + xn.shape[-2:]).reshape(-1, math.prod(xn.shape[-2:]))
    picked = np.take_along_axis(planes, indices.numpy().reshape(planes.shape[0], -1), 1)
    assert np.isnan(picked[~finite.reshape(planes.shape[0], -1)]).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [(1, 1), (4, 3), (5, 7), (8, 5)])
def test_adaptive_avg_pool2d(dtype, size):
    x, xn = _as(np.random.default_rng(1).standard_normal((2, 3, 8, 12)), dtype)
    _close(F.adaptive_avg_pool2d(x, size), np_adaptive(xn, size, "avg"), dtype)


@pytest.mark.parametrize("size", [(1, 1), (4, 3), pytest.param((5, 7), marks=pytest.mark.xfail(
    strict=True, reason="unequal windows average through a matmul with the averaging "
    "matrix: 0 * inf = nan spreads an inf or nan to every output of its row (as before "
    "issue 30)"))])
def test_adaptive_avg_pool_specials_propagate(size):
    x, xn = _as(_specials((2, 3, 8, 12)), E.float32)
    _close(F.adaptive_avg_pool2d(x, size), np_adaptive(xn, size, "avg"), E.float32)


@pytest.mark.parametrize("fn, size", [(F.adaptive_max_pool2d, (4, 3)),
                                      (F.adaptive_max_pool2d, (5, 7)),
                                      (F.adaptive_avg_pool2d, (1, 1)),
                                      (F.adaptive_avg_pool2d, (5, 7)),
                                      (F.adaptive_avg_pool2d, (4, 5))])
def test_adaptive_gradcheck(fn, size):
    n = 2 * 3 * 8 * 12
    vals = np.random.default_rng(2).permutation(n).reshape(2, 3, 8, 12) * 0.3
    x = E.tensor(vals, requires_grad=True)
    assert gradcheck(lambda t: fn(t, size), (x,))
    assert gradgradcheck(lambda t: fn(t, size), (x,))


@pytest.mark.parametrize("dtype", [E.float32, E.float64])
@pytest.mark.parametrize("nd, shape", [(1, (4, 16, 1024)), (2, (2, 16, 64, 64)),
                                       (3, (2, 4, 16, 16, 16))])
def test_avg_pool_large_tiles(dtype, nd, shape):
    x, xn = _as(_specials(shape, seed=3), dtype)
    fn = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[nd]
    assert x.numel() >= 32768   # the dim-by-dim path
    want = np_avg_pool(xn, (2,) * nd, (2,) * nd, (0,) * nd, False, True)
    _close(fn(x, 2), want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k, shape", [((1, 2), (2, 3, 1, 64)), ((1, 3), (2, 3, 4, 33)),
                                      ((2, 2), (2, 3, 8, 8)), ((3, 1), (2, 3, 9, 4))])
def test_max_pool_tiles_indices(dtype, k, shape):
    x, xn = _as(_specials(shape, seed=4), dtype)
    values, indices = E.max_pool2d_with_indices(x, k, k, 0, 1, False)
    want, want_idx = np_max_pool(xn, k, k, (0, 0), (1, 1), False)
    _close(values, want, dtype)
    assert np.array_equal(indices.numpy(), want_idx)


@pytest.mark.parametrize("k, s, p", [(3, 2, 1), (2, 1, 0), (3, 1, 1)])
def test_max_pool_windows_nan_indices(k, s, p):
    x, xn = _as(_specials((2, 3, 9, 10), seed=5), E.float32)
    values, indices = F.max_pool2d(x, k, s, p, return_indices=True)
    want, want_idx = np_max_pool(xn, (k, k), (s, s), (p, p), (1, 1), False)
    _close(values, want, E.float32)
    assert np.array_equal(indices.numpy(), want_idx)


def test_max_pool_empty_batch():
    values, indices = F.max_pool2d(E.zeros(0, 3, 4, 4), 2, return_indices=True)
    assert tuple(values.shape) == (0, 3, 2, 2) and tuple(indices.shape) == (0, 3, 2, 2)
