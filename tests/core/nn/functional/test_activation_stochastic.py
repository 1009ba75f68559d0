"""rrelu / rrelu_ and gumbel_softmax: evaluation against numpy float64 (leaky_relu with the
mean slope), the drawn slopes' range and their gradient, seeding, the straight-through
hard sample, and the Gumbel noise's distribution."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError
from helpers import FLOAT_DTYPES, assert_close, make


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_rrelu_eval_is_leaky_relu_with_mean_slope(dtype):
    x, xn = make((4, 5), dtype)
    out = F.rrelu(x, 0.1, 0.3, training=False)
    assert out.dtype is dtype
    assert_close(out, np.where(xn > 0, xn, xn * 0.2), rtol=1e-6, atol=1e-7)


def test_rrelu_training_draws_slopes_in_range():
    x, xn = make((50, 40), E.float64)
    # NOTE: not seed 0: make's numpy generator would then draw x from the same stream
    E.manual_seed(123)
    xg = x.clone().requires_grad_()
    out = F.rrelu(xg, 0.1, 0.3, training=True)
    slope = out.detach().numpy() / xn
    neg = xn <= 0
    assert np.all(slope[~neg] == 1.0)
    assert np.all((slope[neg] >= 0.1) & (slope[neg] <= 0.3))
    assert abs(slope[neg].mean() - 0.2) < 0.01 and slope[neg].std() > 0.05
    out.sum().backward()
    assert_close(xg.grad, slope)                              # grad * slopes
    E.manual_seed(123)
    assert_close(F.rrelu(x, 0.1, 0.3, training=True), out.detach().numpy())   # seeded


def test_rrelu_gradcheck_eval():
    x, _ = make((3, 4), E.float64, seed=2)
    fn = lambda x: F.rrelu(x, 0.2, 0.4)                       # noqa: E731
    assert gradcheck(fn, (x.requires_grad_(),))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("training", [False, True])
def test_rrelu_inplace(training):
    x, xn = make((3, 4), E.float64, seed=3)
    E.manual_seed(1)
    ref = F.rrelu(x, training=training)
    E.manual_seed(1)
    out = F.rrelu_(x, training=training)
    assert out is x
    assert_close(x, ref.numpy())
    y, _ = make((3, 4), E.float64, seed=3)
    assert F.rrelu(y, inplace=True) is y


def test_rrelu_inplace_gradient_on_non_leaf():
    x, xn = make((3, 4), E.float64, seed=4)
    leaf = x.requires_grad_()
    h = leaf * 1.0
    F.rrelu_(h, 0.1, 0.3)
    h.sum().backward()
    assert_close(leaf.grad, np.where(xn > 0, 1.0, 0.2))


def test_rrelu_errors():
    with pytest.raises(ValueError, match="lower bound must be less than or equal"):
        F.rrelu(E.zeros(3), 0.5, 0.1)
    with pytest.raises(DtypeError, match="floating"):
        F.rrelu(E.zeros(3, dtype=E.int64))


def test_gumbel_softmax_soft_sample():
    logits, _ = make((6, 5), E.float64)
    E.manual_seed(0)
    y = F.gumbel_softmax(logits, tau=0.5)
    assert tuple(y.shape) == (6, 5) and y.dtype is E.float64
    assert_close(y.sum(-1), np.ones(6))
    assert (y.numpy() > 0).all()
    E.manual_seed(0)
    assert_close(F.gumbel_softmax(logits, tau=0.5), y.numpy())        # seeded


def test_gumbel_softmax_hard_is_one_hot_with_soft_gradient():
    logits, _ = make((4, 5), E.float64, seed=1)
    logits.requires_grad_()
    w = E.tensor(np.arange(5.0))
    E.manual_seed(3)
    hard = F.gumbel_softmax(logits, tau=0.7, hard=True, dim=1)
    E.manual_seed(3)
    soft = F.gumbel_softmax(logits, tau=0.7, dim=1)
    h = hard.detach().numpy()
    assert set(np.unique(h)) == {0.0, 1.0} and (h.sum(1) == 1).all()
    assert (h.argmax(1) == soft.detach().numpy().argmax(1)).all()
    (hard * w).sum().backward()
    g_hard = logits.grad.numpy().copy()
    logits.grad = None
    (soft * w).sum().backward()
    assert_close(logits.grad, g_hard)                         # straight-through


def test_gumbel_softmax_samples_the_categorical():
    # argmax(logits + g) with Gumbel noise samples softmax(logits) (the Gumbel-max trick)
    p = np.array([0.5, 0.3, 0.2])
    logits = E.tensor(np.log(np.tile(p, (20000, 1))))
    E.manual_seed(0)
    freq = np.bincount(F.gumbel_softmax(logits, hard=True).numpy().argmax(1),
                       minlength=3) / 20000
    assert np.abs(freq - p).max() < 0.02


def test_gumbel_softmax_eps_deprecated_and_dtype():
    with pytest.warns(UserWarning, match="eps"):
        F.gumbel_softmax(E.zeros(2, 3), eps=1e-5)
    with pytest.raises(DtypeError, match="floating"):
        F.gumbel_softmax(E.zeros(2, 3, dtype=E.int64))
