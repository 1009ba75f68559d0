"""Gamma: formulas (math.lgamma / a numpy digamma reference), sample moments over small and
large shapes, non-reparameterized sampling, validation."""
import math

import numpy as np
import pytest
from core.distributions.helpers import check_mean_var, t

import ember
from ember.autograd import gradcheck
from ember.distributions import Gamma

CONC = np.array([0.3, 1.0, 2.5, 40.0])
RATE = np.array([1.0, 2.0, 0.5, 4.0])
X = np.array([0.2, 1.0, 3.0, 9.0])
lgamma = np.vectorize(math.lgamma)


def digamma(x):
    """Digamma by recurrence up to x >= 20, then the asymptotic series (error < 1e-14)."""
    x = np.asarray(x, dtype=np.float64).copy()
    acc = np.zeros_like(x)
    while (x < 20).any():
        small = x < 20
        acc -= np.where(small, 1 / x, 0)
        x = np.where(small, x + 1, x)
    inv2 = 1 / x ** 2
    return acc + np.log(x) - 0.5 / x - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 / 252))


def test_formulas():
    d = Gamma(t(CONC), t(RATE))
    ref = CONC * np.log(RATE) + (CONC - 1) * np.log(X) - RATE * X - lgamma(CONC)
    np.testing.assert_allclose(d.log_prob(t(X)).numpy(), ref, rtol=1e-12)
    ent = CONC - np.log(RATE) + lgamma(CONC) + (1 - CONC) * digamma(CONC)
    np.testing.assert_allclose(d.entropy().numpy(), ent, rtol=1e-9)
    np.testing.assert_allclose(d.mean.numpy(), CONC / RATE)
    np.testing.assert_allclose(d.variance.numpy(), CONC / RATE ** 2)
    np.testing.assert_allclose(d.mode.numpy(), np.maximum((CONC - 1) / RATE, 0))


def test_sample_moments():
    ember.manual_seed(0)
    x = Gamma(t(CONC), t(RATE)).sample((20000,))
    assert (x.numpy() > 0).all()
    mean, var = CONC / RATE, CONC / RATE ** 2
    check_mean_var(x, mean, var, fourth=3 * CONC * (CONC + 2) / RATE ** 4)


def test_float32_and_tiny_concentration():
    ember.manual_seed(1)
    x = Gamma(ember.tensor([1e-3, 5.0]), 1.0).sample((1000,))
    assert x.dtype == ember.float32
    assert np.isfinite(x.numpy()).all() and (x.numpy() > 0).all()


def test_not_reparameterized_but_log_prob_differentiable():
    assert not Gamma.has_rsample
    with pytest.raises(NotImplementedError, match="has_rsample is False"):
        Gamma(1.0, 1.0).rsample()
    conc, rate = t(CONC, requires_grad=True), t(RATE, requires_grad=True)
    assert gradcheck(lambda c, r: Gamma(c, r).log_prob(t(X)), (conc, rate))
    assert gradcheck(lambda c, r: Gamma(c, r).entropy(), (conc, rate))


def test_validation_and_shapes():
    with pytest.raises(ValueError, match="Expected parameter concentration"):
        Gamma(t([1.0, -1.0]), 1.0)
    with pytest.raises(ValueError, match="within the support"):
        Gamma(1.0, 1.0).log_prob(ember.tensor(-1.0))
    assert Gamma(ember.ones(2), 1.0).expand((3, 2)).sample((4,)).shape == (4, 3, 2)


def test_cdf_against_integer_shape_closed_form():
    # for an integer shape k, P(k, x) = 1 - exp(-x) * sum_{j<k} x^j / j!
    d = Gamma(t([1.0, 2.0, 3.0]), t([0.5, 2.0, 1.5]))
    x = np.array([0.7, 1.3, 2.9])
    z = np.array([0.5, 2.0, 1.5]) * x
    ref = [1 - math.exp(-zi) * sum(zi ** j / math.factorial(j) for j in range(k))
           for zi, k in zip(z, (1, 2, 3))]
    np.testing.assert_allclose(d.cdf(t(x)).numpy(), ref, rtol=1e-12)


def test_log_prob_gradient_at_concentration_one():
    # d/da of (a - 1) log x at a = 1 is log x (xlogy's gradient where self == 0)
    a = t([1.0]).requires_grad_()
    Gamma(a, t([1.0])).log_prob(t([2.0])).sum().backward()
    ref = math.log(2.0) + math.log(1.0) - float(ember.digamma(t([1.0])).item())
    assert a.grad.item() == pytest.approx(ref, rel=1e-12)
