"""Derivatives of reductions, cumulative ops, softmax, sort and topk checked against
closed-form numpy float64 values, and PyTorch's choices where there is no derivative (ties,
NaN, zero norms and deviations). gradcheck/gradgradcheck run in test_op_gradients.py."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from helpers import assert_close

def leaf(values):
    return E.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


X = np.array([[0.3, -1.2, 2.0, 0.6], [-0.7, 0.9, 1.4, -0.1], [1.1, -0.4, 0.2, 0.8]])


def _softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


# d/dx sum(w * f(x)) with a fixed weight w, in closed form
W = np.arange(1.0, 13.0).reshape(3, 4) / 6


def _grad_of_weighted(f, x, w):
    t = leaf(x)
    y = f(t)
    (y * E.tensor(w)).sum().backward()
    return t.grad


def test_mean_dim_matches_closed_form():
    w = W[:, :1]  # mean over dim 1 with keepdim: every element gets w / 4
    assert_close(_grad_of_weighted(lambda t: t.mean(1, keepdim=True), X, w),
                 np.broadcast_to(w / 4, X.shape))


def test_var_matches_closed_form():
    w = W[0]  # var over dim 0 (unbiased): 2 (x - mean) / (n - 1) * w
    expected = 2 * (X - X.mean(0)) / 2 * w
    assert_close(_grad_of_weighted(lambda t: t.var(0), X, w), expected)


def test_prod_matches_closed_form():
    x = X[0]  # d/dx_i prod(x) = prod of the others
    expected = np.array([np.prod(np.delete(x, i)) for i in range(x.size)])
    assert_close(_grad_of_weighted(lambda t: t.prod(), x, np.array(1.0)), expected)


def test_softmax_matches_closed_form():
    s = _softmax(X, 1)  # J^T w = s * (w - sum(w * s))
    expected = s * (W - (W * s).sum(1, keepdims=True))
    assert_close(_grad_of_weighted(lambda t: t.softmax(1), X, W), expected)


def test_logsumexp_is_softmax_weighted():
    w = W[:, 0]
    assert_close(_grad_of_weighted(lambda t: t.logsumexp(1), X, w),
                 _softmax(X, 1) * w[:, None])


def test_cumsum_is_reversed_cumsum():
    assert_close(_grad_of_weighted(lambda t: t.cumsum(1), X, W),
                 np.cumsum(W[:, ::-1], 1)[:, ::-1])


def test_norm_2_is_x_over_norm():
    assert_close(_grad_of_weighted(lambda t: t.norm(2, 1), X, W[:, 0]),
                 X / np.linalg.norm(X, axis=1, keepdims=True) * W[:, :1])


def test_max_dim_routes_gradient_to_argmax():
    expected = np.zeros_like(X)
    expected[np.arange(3), X.argmax(1)] = W[:, 0]
    assert_close(_grad_of_weighted(lambda t: t.max(1)[0], X, W[:, 0]), expected)


def test_sort_routes_gradient_back_through_the_permutation():
    order = np.argsort(X, 1)
    expected = np.empty_like(X)
    np.put_along_axis(expected, order, W, 1)
    assert_close(_grad_of_weighted(lambda t: t.sort(1)[0], X, W), expected)


# values where the function has no derivative; the expected ones are PyTorch's
NAN = float("nan")


def _dnorm(x, p):
    """d ||x||_p / dx = sign(x) |x|^(p-1) / ||x||^(p-1), taken as 0 at x == 0 for p < 2."""
    x = np.asarray(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(x == 0, 0.0, np.sign(x) * np.abs(x) ** (p - 1))
    return slope / (np.abs(x) ** p).sum() ** ((p - 1) / p)


@pytest.mark.parametrize("f, x, expected", [
    (E.max, [NAN, 1.0], [1.0, 0.0]),
    (E.min, [1.0, NAN, NAN], [0.0, 0.5, 0.5]),
    (E.max, [1.0, 2.0, 2.0], [0.0, 0.5, 0.5]),
    (lambda x: x.amax(1), [[1.0, 1.0, 0.0]], [[0.5, 0.5, 0.0]]),
    (lambda x: x.norm(float("inf")), [1.0, -1.0, 0.5], [0.5, -0.5, 0.0]),
    (lambda x: x.norm(1.5), [0.0, 1.0, -2.0], _dnorm([0.0, 1.0, -2.0], 1.5)),
    (lambda x: x.norm(0.5), [0.0, 1.0, -2.0], _dnorm([0.0, 1.0, -2.0], 0.5)),
    (lambda x: x.norm(3), [0.0, 0.0], [0.0, 0.0]),
    (lambda x: x.norm(2), [0.0, 0.0], [0.0, 0.0]),
    (lambda x: x.std(1), [[1.0, 1.0], [1.0, 2.0]], [[0.0, 0.0], [-0.5 ** 0.5, 0.5 ** 0.5]]),
    (lambda x: x.prod(), [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]),
    (lambda x: x.cumprod(0), [2.0, 0.0, 3.0, 0.0], [1.0, 8.0, 0.0, 0.0]),
], ids=["max_nan", "min_nans_share", "max_tie_shares", "amax_tie", "norm_inf_tie",
        "norm_1.5_at_zero", "norm_0.5_at_zero", "norm_3_of_zeros", "norm_2_of_zeros",
        "std_of_constant", "prod_two_zeros", "cumprod_zeros"])
def test_gradient_at_non_differentiable_points_follows_pytorch(f, x, expected):
    t = leaf(x)
    f(t).sum().backward()
    assert_close(t.grad, np.array(expected))


def test_var_without_degrees_of_freedom_gives_nan_not_an_exception():
    t = leaf([1.0])
    t.var().backward()  # n - correction == 0: forward and gradient are NaN, as PyTorch
    assert np.isnan(t.grad.numpy()).all()
