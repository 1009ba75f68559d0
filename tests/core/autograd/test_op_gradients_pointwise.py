"""Derivatives of the pointwise ops checked against closed-form numpy float64 values, and
PyTorch's choices at points without a derivative (ties, NaN, the origin of atan2).
gradcheck/gradgradcheck of every sample run in test_op_gradients.py."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from helpers import assert_close

def leaf(values):
    return E.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


X = np.array([[0.3, -1.2, 2.0], [-0.7, 0.9, 1.4]])
P = np.abs(X) + 0.25  # a positive domain for log, sqrt, pow with a tensor exponent


# d/dx sum(f(x)), in closed form
@pytest.mark.parametrize("f, df, x", [
    (E.sin, np.cos, X),
    (E.exp, np.exp, X),
    (E.tanh, lambda x: 1 - np.tanh(x) ** 2, X),
    (E.sigmoid, lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2, X),
    (E.log, lambda x: 1 / x, P),
    (E.sqrt, lambda x: 0.5 / np.sqrt(x), P),
    (E.atan, lambda x: 1 / (1 + x * x), X),
    (lambda x: x ** 3, lambda x: 3 * x ** 2, X),
    (lambda x: 2.0 ** x, lambda x: np.log(2.0) * 2.0 ** x, X),
    (E.silu, lambda x: (1 + np.exp(-x) + x * np.exp(-x)) / (1 + np.exp(-x)) ** 2, X),
], ids=["sin", "exp", "tanh", "sigmoid", "log", "sqrt", "atan", "cube", "exp_base_2", "silu"])
def test_unary_gradient_matches_closed_form(f, df, x):
    t = leaf(x)
    f(t).sum().backward()
    assert_close(t.grad, df(x))


def test_second_derivative_of_sin_is_minus_sin():
    t = leaf(X)
    (g,) = E.autograd.grad(E.sin(t).sum(), [t], create_graph=True)
    (gg,) = E.autograd.grad(g.sum(), [t])
    assert_close(g, np.cos(X))
    assert_close(gg, -np.sin(X))


def test_pow_tensor_tensor_matches_closed_form():
    base, exp = leaf(P), leaf(X[0])  # exponent broadcasts over rows: its grad sums them
    (base ** exp).sum().backward()
    assert_close(base.grad, X[0] * P ** (X[0] - 1))
    assert_close(exp.grad, (P ** X[0] * np.log(P)).sum(0))


def test_div_broadcast_matches_closed_form():
    a, b = leaf(X), leaf(P[:, :1])  # (2, 3) / (2, 1)
    (a / b).sum().backward()
    assert_close(a.grad, np.broadcast_to(1 / P[:, :1], X.shape))
    assert_close(b.grad, (-X / P[:, :1] ** 2).sum(1, keepdims=True))


# values where the function has no derivative; the expected ones are PyTorch's
NAN = float("nan")


@pytest.mark.parametrize("f, x, expected", [
    (lambda x: E.maximum(x, E.tensor([1.0, NAN, 2.0, 0.5])), [NAN, 1.0, 1.0, 0.5],
     [1.0, 1.0, 0.0, 0.5]),
    (lambda x: E.minimum(x, E.tensor([1.0, NAN, 2.0, 0.5])), [NAN, 1.0, 1.0, 0.5],
     [1.0, 1.0, 1.0, 0.5]),
    (lambda x: E.atan2(x, E.tensor([0.0, 1.0])), [0.0, 0.0], [0.0, 1.0]),
    (E.abs, [0.0, -2.0], [0.0, -1.0]),
    (E.relu, [0.0, 2.0], [0.0, 1.0]),
    (lambda x: x.clamp(0.0, 1.0), [0.0, 1.0, 1.5], [1.0, 1.0, 0.0]),
    (lambda x: x ** 0.0, [0.0, 2.0], [0.0, 0.0]),
    (E.nan_to_num, [NAN, 1.0, float("inf")], [0.0, 1.0, 0.0]),
], ids=["maximum_nan_and_tie", "minimum_nan_and_tie", "atan2_origin", "abs_0", "relu_0",
        "clamp_at_bounds", "pow_0_of_0", "nan_to_num"])
def test_gradient_at_non_differentiable_points_follows_pytorch(f, x, expected):
    t = leaf(x)
    f(t).sum().backward()
    assert_close(t.grad, np.array(expected))


@pytest.mark.parametrize("lo, hi, expected_lo, expected_hi", [
    ([0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]),  # min == max
    ([0.5, 0.5, 0.5], [0.2, 0.2, 0.2], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]),  # min > max
    ([0.5, -1.0, 0.5], [1.0, 1.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
], ids=["min_eq_max", "min_gt_max", "ordinary"])
def test_clamp_tensor_bounds_get_gradient_where_chosen(lo, hi, expected_lo, expected_hi):
    # self = [-1, 0, 2]: max wins a tie with min, as PyTorch's clamp_backward_min_max
    lo_t, hi_t = leaf(lo), leaf(hi)
    E.clamp(E.tensor([-1.0, 0.0, 2.0]), lo_t, hi_t).sum().backward()
    assert_close(lo_t.grad, np.array(expected_lo))
    assert_close(hi_t.grad, np.array(expected_hi))
