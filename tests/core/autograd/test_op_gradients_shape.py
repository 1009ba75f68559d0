"""Derivatives of the shape and view ops whose backward moves gradients around (repeat,
roll, cat, expand, narrow), checked against numpy float64 Jacobians.
gradcheck/gradgradcheck of every sample run in test_op_gradients.py."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from helpers import assert_close

X = np.arange(6.0).reshape(2, 3) / 4 - 0.5


def _vjp(f, x, w):
    """The gradient of sum(w * f(x)) w.r.t. x."""
    t = E.tensor(x, requires_grad=True)
    (f(t) * E.tensor(w)).sum().backward()
    return t.grad


def _weights(shape):
    return np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)


@pytest.mark.parametrize("f, ref", [
    (lambda t: t.repeat(2, 1, 2), lambda x: np.tile(x, (2, 1, 2))),
    (lambda t: t.roll((1, -2), (0, 1)), lambda x: np.roll(x, (1, -2), (0, 1))),
    (lambda t: t.roll(4), lambda x: np.roll(x, 4)),
    (lambda t: t.expand(4, 2, 3), lambda x: np.broadcast_to(x, (4, 2, 3))),
    (lambda t: E.cat([t, t[:, :1]], 1), lambda x: np.concatenate([x, x[:, :1]], 1)),
    (lambda t: t.narrow(-1, -2, 2), lambda x: x[:, -2:]),
    (lambda t: t.flip([0, 1]), lambda x: x[::-1, ::-1]),
    (lambda t: t.permute(1, 0).reshape(-1), lambda x: x.T.reshape(-1)),
    (lambda t: E.stack([t, 2 * t], -1), lambda x: np.stack([x, 2 * x], -1)),
], ids=["repeat", "roll_dims", "roll_flat", "expand", "cat", "narrow_negative_start", "flip",
        "permute_reshape", "stack"])
def test_vjp_matches_numpy_linear_map(f, ref):
    """Each op is linear, so its vjp is the transposed map: J^T w, where J is built by
    pushing the unit vectors through the numpy reference."""
    out_shape = ref(X).shape
    w = _weights(out_shape)
    basis = np.eye(X.size).reshape((X.size,) + X.shape)
    jac = np.stack([np.asarray(ref(b)).reshape(-1) for b in basis], 1)  # (out, in)
    assert_close(_vjp(f, X, w), (jac.T @ w.reshape(-1)).reshape(X.shape))


def test_split_gradient_of_unused_pieces_is_zero():
    t = E.tensor(X, requires_grad=True)
    a, _, c = t.split(1, 1)
    (a * 2 + c).sum().backward()
    assert_close(t.grad, np.array([[2.0, 0.0, 1.0]] * 2))


def test_inplace_on_view_routes_gradient_through_copyslices():
    t = E.tensor(X, requires_grad=True)
    base = t.clone()
    base[:, 1:].mul_(3.0)
    assert base.grad_fn.name() == "CopySlices"
    base.sum().backward()
    assert_close(t.grad, np.array([[1.0, 3.0, 3.0]] * 2))
