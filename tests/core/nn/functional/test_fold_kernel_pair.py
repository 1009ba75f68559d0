"""unfold/fold (im2col/col2im) as kernel pairs against torch and the op-by-op references:
values and gradients over geometries and dtypes, gradcheck and gradgradcheck (which run
the references), and the no-grad path recording nothing."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from helpers import needs_torch

import ember as E
import ember.nn.functional as F
from ember.nn.functional.fold import _col2im_reference, _im2col_reference

GEOMETRIES = [((2, 3, 8, 9), 3, 1, 1, 1), ((3, 7, 6), (2, 3), (2, 1), (1, 0), (2, 3)),
              ((1, 2, 10, 10), 3, 1, 0, 2), ((0, 2, 5, 5), 2, 1, 0, 1)]


def _pair(v):
    return tuple(v) if isinstance(v, tuple) else (v, v)


@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unfold_fold_values_and_gradients_match_torch(geometry, dtype):
    torch = needs_torch()
    TF = torch.nn.functional
    shape, k, d, p, s = geometry
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    xe, xt = E.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    u, ut = F.unfold(xe, k, d, p, s), TF.unfold(xt, k, d, p, s)
    np.testing.assert_allclose(u.detach().numpy(), ut.detach().numpy(), rtol=0, atol=0)
    g = rng.standard_normal(tuple(ut.shape)).astype(dtype)
    u.backward(E.tensor(g))
    ut.backward(torch.tensor(g))
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-5)
    cols = rng.standard_normal(tuple(ut.shape)).astype(dtype)
    ce, ct = E.tensor(cols, requires_grad=True), torch.tensor(cols, requires_grad=True)
    f, ft = F.fold(ce, shape[-2:], k, d, p, s), TF.fold(ct, shape[-2:], k, d, p, s)
    np.testing.assert_allclose(f.detach().numpy(), ft.detach().numpy(), rtol=1e-5, atol=1e-5)
    gg = rng.standard_normal(tuple(ft.shape)).astype(dtype)
    f.backward(E.tensor(gg))
    ft.backward(torch.tensor(gg))
    np.testing.assert_allclose(ce.grad.numpy(), ct.grad.numpy(), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_half_dtypes_match_references(dtype):
    rng = np.random.default_rng(1)
    x = E.tensor(rng.standard_normal((2, 3, 6, 7)).astype(dtype))
    args = (_pair(3), _pair(1), _pair(1), _pair(2))
    u = F.unfold(x, 3, 1, 1, 2)
    assert u.dtype == x.dtype
    np.testing.assert_array_equal(u.numpy().astype(np.float64),
                                  _im2col_reference(x, *args).numpy().astype(np.float64))
    f = F.fold(u, (6, 7), 3, 1, 1, 2)
    assert f.dtype == x.dtype
    ref = _col2im_reference(u, (6, 7), *args).numpy().astype(np.float64)
    np.testing.assert_allclose(f.numpy().astype(np.float64), ref, rtol=1e-2, atol=1e-2)


def test_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(2)
    x = E.tensor(rng.standard_normal((1, 2, 5, 5)), requires_grad=True)
    c = E.tensor(rng.standard_normal((1, 18, 9)), requires_grad=True)
    unfold = lambda t: F.unfold(t, 3, 1, 1, 2)  # noqa: E731
    fold = lambda t: F.fold(t, (5, 5), 3, 1, 1, 2)  # noqa: E731
    for fn, t in ((unfold, x), (fold, c)):
        assert E.autograd.gradcheck(fn, (t,))
        assert E.autograd.gradgradcheck(fn, (t,))


def test_no_grad_records_nothing():
    x = E.tensor(np.ones((1, 1, 4, 4)), requires_grad=True)
    with E.no_grad():
        assert F.unfold(x, 2).grad_fn is None
    assert F.unfold(x, 2).grad_fn is not None
