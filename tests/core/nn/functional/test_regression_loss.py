"""huber_loss, poisson_nll_loss, gaussian_nll_loss and kl_div against numpy float64
references written from their formulas: each reduction, dtypes, broadcasting, edge values,
gradcheck and gradgradcheck, the deprecated arguments and the errors."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from helpers import FLOAT_DTYPES, assert_close, make, to_np

REDUCTIONS = ["none", "mean", "sum"]


def _reduce(loss, reduction):
    return {"none": loss, "mean": loss.mean(), "sum": loss.sum()}[reduction]


def _check_grads(fn, *inputs):
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def _tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-6} if dtype is E.float32 else {}


# ---- huber_loss ---------------------------------------------------------------------------

def _np_huber(d, delta):
    a = np.abs(d)
    return np.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("delta", [0.5, 1.0, 2.5])
def test_huber_loss(delta, reduction, dtype):
    x, xn = make((3, 4), dtype, seed=0)
    y, yn = make((3, 4), dtype, seed=1)
    out = F.huber_loss(x, y, reduction=reduction, delta=delta)
    assert_close(out, _reduce(_np_huber(xn - yn, delta), reduction), **_tol(dtype))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_huber_loss_weight_and_gradients(reduction):
    x, xn = make((3, 4), E.float64, seed=0)
    y, yn = make((3, 4), E.float64, seed=1)
    w, wn = make((3, 4), E.float64, low=0.5, high=2, seed=2)
    # PyTorch's weighted 'mean' is the plain mean of weight * loss
    assert_close(F.huber_loss(x, y, reduction, 0.7, w),
                 _reduce(_np_huber(xn - yn, 0.7) * wn, reduction))
    _check_grads(lambda a, b, w: F.huber_loss(a, b, reduction, 0.7, w),
                 x.requires_grad_(), y.requires_grad_(), w.requires_grad_())


def test_huber_loss_broadcast_warns_and_equals_smooth_l1_times_delta():
    x, xn = make((3, 4), E.float64)
    y, yn = make((4,), E.float64, seed=1)
    with pytest.warns(UserWarning, match="broadcast"):
        out = F.huber_loss(x, y, delta=2.0)
    assert_close(out, _np_huber(xn - yn, 2.0).mean())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = F.huber_loss(x, x * 2, delta=2.0)
        b = F.smooth_l1_loss(x, x * 2, beta=2.0) * 2.0
    assert_close(a, to_np(b))


# ---- poisson_nll_loss ---------------------------------------------------------------------

def _np_poisson(x, t, log_input, full, eps=1e-8):
    loss = np.exp(x) - t * x if log_input else x - t * np.log(x + eps)
    if full:
        safe = np.where(t > 1, t, 2.0)
        stirling = safe * np.log(safe) - safe + 0.5 * np.log(2 * np.pi * safe)
        loss = loss + np.where(t > 1, stirling, 0.0)
    return loss


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input, full", [(True, False), (False, False), (True, True),
                                             (False, True)])
def test_poisson_nll_loss(log_input, full, reduction, dtype):
    x, xn = make((3, 4), dtype, low=0.1 if not log_input else -2, high=3)
    t, tn = make((3, 4), dtype, low=0, high=4, seed=1)
    out = F.poisson_nll_loss(x, t, log_input, full, reduction=reduction)
    assert_close(out, _reduce(_np_poisson(xn, tn, log_input, full), reduction), **_tol(dtype))
    if dtype is E.float64:
        _check_grads(lambda a, b: F.poisson_nll_loss(a, b, log_input, full, reduction=reduction),
                     x.requires_grad_(), t.requires_grad_())


def test_poisson_nll_loss_full_at_small_targets():
    x = E.tensor([0.5, 2.0], dtype=E.float64)
    t = E.tensor([0.0, 1.0], dtype=E.float64, requires_grad=True)
    out = F.poisson_nll_loss(x, t, full=True, reduction="none")
    assert_close(out.detach(), np.exp([0.5, 2.0]) - np.array([0.0, 2.0]))
    (g,) = E.autograd.grad(out.sum(), t)
    assert_close(g, -np.array([0.5, 2.0]))  # finite: no Stirling term at t <= 1


# ---- gaussian_nll_loss --------------------------------------------------------------------

def _np_gaussian(x, t, v, full, eps=1e-6):
    v = np.maximum(v, eps)
    loss = 0.5 * (np.log(v) + (x - t) ** 2 / v)
    return loss + 0.5 * np.log(2 * np.pi) if full else loss


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("var_shape", [(3, 4), (3,), (3, 1), (1, 4)])
def test_gaussian_nll_loss(var_shape, full, reduction, dtype):
    x, xn = make((3, 4), dtype, seed=0)
    t, tn = make((3, 4), dtype, seed=1)
    v, vn = make(var_shape, dtype, low=0.2, high=2, seed=2)
    vb = vn[:, None] if var_shape == (3,) else vn
    out = F.gaussian_nll_loss(x, t, v, full, reduction=reduction)
    assert_close(out, _reduce(_np_gaussian(xn, tn, vb, full), reduction), **_tol(dtype))
    if dtype is E.float64 and not full:
        _check_grads(lambda a, b, c: F.gaussian_nll_loss(a, b, c, reduction=reduction),
                     x.requires_grad_(), t.requires_grad_(), v.requires_grad_())


def test_gaussian_nll_loss_number_var_and_clamp_keeps_gradient():
    x, xn = make((2, 3), E.float64)
    assert_close(F.gaussian_nll_loss(x, x * 0, 2.0, reduction="none"),
                 _np_gaussian(xn, 0 * xn, 2.0, False))
    v = E.tensor([[0.0, 1e-9]], dtype=E.float64, requires_grad=True)
    out = F.gaussian_nll_loss(E.ones(1, 2, dtype=E.float64), E.zeros(1, 2, dtype=E.float64), v,
                              reduction="sum")
    assert_close(out.detach(), np.array(2 * 0.5 * (np.log(1e-6) + 1 / 1e-6)))
    (g,) = E.autograd.grad(out, v)
    # d/dv of 0.5 (log v + 1 / v) at the clamped v = 1e-6, passed straight through
    assert_close(g, np.full((1, 2), 0.5 * (1 / 1e-6 - 1 / 1e-12)), rtol=1e-9)


# ---- kl_div -------------------------------------------------------------------------------

def _np_kl(x, t, log_target):
    if log_target:
        return np.exp(t) * (t - x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(t == 0, 0.0, t * np.log(t)) - t * x


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", ["none", "sum", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target, dtype):
    x, xn = make((3, 4), dtype, low=-3, high=0)
    t, tn = make((3, 4), dtype, low=0.05 if not log_target else -3, high=1 if not
                 log_target else 0, seed=1)
    loss = _np_kl(xn, tn, log_target)
    expected = loss.sum() / 3 if reduction == "batchmean" else _reduce(loss, reduction)
    assert_close(F.kl_div(x, t, reduction=reduction, log_target=log_target), expected,
                 **_tol(dtype))
    if dtype is E.float64:
        _check_grads(lambda a, b: F.kl_div(a, b, reduction=reduction, log_target=log_target),
                     x.requires_grad_(), t.requires_grad_())


def test_kl_div_mean_warns_and_zero_targets():
    x, xn = make((2, 3), E.float64, low=-3, high=0)
    t = E.tensor([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]], dtype=E.float64)
    with pytest.warns(UserWarning, match="batchmean"):
        out = F.kl_div(x, t)
    assert_close(out, _np_kl(xn, to_np(t), False).mean())
    assert F.kl_div(E.zeros(2), E.zeros(2), reduction="none").tolist() == [0.0, 0.0]
    assert_close(F.kl_div(E.tensor(-1.0), E.tensor(0.5), reduction="batchmean"),
                 np.float32(0.5 * (math.log(0.5) + 1)), rtol=1e-6)


def test_deprecated_size_average_and_reduce():
    x, xn = make((2, 3), E.float64, low=0.5, high=2)
    with pytest.warns(UserWarning, match="deprecated"):
        out = F.poisson_nll_loss(x, x, size_average=False)
    assert_close(out, _np_poisson(xn, xn, True, False).sum())
    with pytest.warns(UserWarning, match="deprecated"):
        out = F.kl_div(x, x, reduce=False)
    assert_close(out, _np_kl(xn, xn, False))


X = E.zeros(2, 3)


@pytest.mark.parametrize("call, error, match", [
    (lambda: F.huber_loss(X, X, delta=0.0), ValueError, "delta must be > 0"),
    (lambda: F.huber_loss(X, X, reduction="avg"), ValueError, "reduction"),
    (lambda: F.huber_loss(X, X, weight=E.ones(3)), ShapeError, "weight of input's shape"),
    (lambda: F.huber_loss(X.long(), X.long()), DtypeError, "floating input"),
    (lambda: F.poisson_nll_loss(X, X, reduction="x"), ValueError, "reduction"),
    (lambda: F.gaussian_nll_loss(X, X, E.ones(4)), ShapeError, "var is of incorrect size"),
    (lambda: F.gaussian_nll_loss(X, X, E.ones(2, 2)), ShapeError, "incorrect size"),
    (lambda: F.gaussian_nll_loss(X, X, -E.ones(2, 3)), ValueError, "negative"),
    (lambda: F.gaussian_nll_loss(X, X, -1.0), ValueError, "negative"),
    (lambda: F.gaussian_nll_loss(X, X, 1.0, reduction="x"), ValueError, "reduction"),
    (lambda: F.kl_div(X, X, reduction="avg"), ValueError, "reduction"),
    (lambda: F.kl_div(X.long(), X), DtypeError, "floating input"),
    (lambda: F.kl_div(X, X.long(), reduction="sum"), DtypeError, "floating target"),
])
def test_errors(call, error, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error, match=match):
            call()
