"""max_pool1d as a kernel pair: the values-only forward (no gradient recorded) and the
with-indices forward against the op-by-op reference and torch, over dtypes, NaN, padding,
dilation, ceil_mode; gradients, gradcheck and gradgradcheck."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from helpers import needs_torch

import ember as E
import ember.nn.functional as F
from ember.nn.functional.pooling.max_pool import _args_1d, _max_pool1d_reference

GEOMETRIES = [((2, 3, 17), 2, None, 0, 1, False), ((3, 16), 3, 2, 1, 1, True),
              ((2, 3, 20), 3, 1, 1, 2, False), ((1, 2, 9), 4, 3, 2, 1, True),
              ((2, 2, 8), 1, 1, 0, 1, False)]
DTYPES = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int64, np.int8]


def _input(shape, dtype, rng):
    x = rng.standard_normal(shape) * 10
    if np.dtype(dtype).kind == "f" or dtype is ml_dtypes.bfloat16:
        x.flat[3] = np.nan
        x.flat[5] = -np.inf
        x.flat[6] = -0.0
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_values_only_matches_reference_and_torch(geometry, dtype):
    torch = needs_torch()
    TF = torch.nn.functional
    shape, k, s, p, d, ceil_mode = geometry
    x = _input(shape, dtype, np.random.default_rng(0))
    got = F.max_pool1d(E.tensor(x), k, s, p, d, ceil_mode)
    assert got.dtype == E.tensor(x).dtype
    ref = _max_pool1d_reference(E.tensor(x), *_args_1d(k, () if s is None else s, p, d),
                                ceil_mode)
    np.testing.assert_array_equal(got.numpy().astype(np.float64), ref.numpy().astype(np.float64))
    want = TF.max_pool1d(torch.tensor(x.astype(np.float64)), k, s, p, d, ceil_mode).numpy()
    np.testing.assert_array_equal(got.numpy().astype(np.float64), want)


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_gradient_matches_torch(geometry):
    torch = needs_torch()
    TF = torch.nn.functional
    shape, k, s, p, d, ceil_mode = geometry
    x = np.random.default_rng(1).standard_normal(shape)
    xe = E.tensor(x, requires_grad=True)
    y = F.max_pool1d(xe, k, s, p, d, ceil_mode)
    xt = torch.tensor(x, requires_grad=True)
    yt = TF.max_pool1d(xt, k, s, p, d, ceil_mode)
    np.testing.assert_array_equal(y.detach().numpy(), yt.detach().numpy())
    g = np.random.default_rng(2).standard_normal(tuple(yt.shape))
    y.backward(E.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=0)


def test_gradcheck_and_gradgradcheck():
    x = E.tensor(np.random.default_rng(3).permutation(40).reshape(2, 2, 10) / 7.0,
                 requires_grad=True)
    fn = lambda t: F.max_pool1d(t, 3, 2, 1, 1, True)  # noqa: E731
    assert E.autograd.gradcheck(fn, (x,))
    assert E.autograd.gradgradcheck(fn, (x,))


def test_no_grad_records_nothing():
    x = E.tensor(np.ones((1, 2, 6), np.float32), requires_grad=True)
    with E.no_grad():
        assert F.max_pool1d(x, 2).grad_fn is None
    assert F.max_pool1d(x, 2).grad_fn is not None


def test_errors_unchanged():
    with pytest.raises(NotImplementedError, match="Bool"):
        F.max_pool1d(E.tensor(np.ones((2, 3), bool)), 2)
    with pytest.raises(E.errors.ShapeError, match="max_pool1d"):
        F.max_pool1d(E.tensor(np.ones(3, np.float32)), 2)
    with pytest.raises(E.errors.ShapeError, match="too small"):
        F.max_pool1d(E.tensor(np.ones((1, 3, 2), np.float32)), 5)
