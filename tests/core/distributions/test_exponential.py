"""Exponential: formulas, sample moments, rsample = eps / rate gradients, validation."""
import numpy as np
import pytest
from core.distributions.helpers import check_mean_var, t

import ember
from ember.autograd import gradcheck
from ember.distributions import Exponential

RATE = np.array([0.5, 1.0, 4.0])
X = np.array([0.3, 2.0, 0.0])


def test_formulas():
    d = Exponential(t(RATE))
    np.testing.assert_allclose(d.log_prob(t(X)).numpy(), np.log(RATE) - RATE * X)
    np.testing.assert_allclose(d.cdf(t(X)).numpy(), 1 - np.exp(-RATE * X))
    np.testing.assert_allclose(d.icdf(t([0.5] * 3)).numpy(), np.log(2) / RATE)
    np.testing.assert_allclose(d.entropy().numpy(), 1 - np.log(RATE))
    np.testing.assert_allclose(d.mean.numpy(), 1 / RATE)
    np.testing.assert_allclose(d.stddev.numpy(), 1 / RATE)
    np.testing.assert_allclose(d.variance.numpy(), RATE ** -2.0)
    np.testing.assert_allclose(d.mode.numpy(), 0.0)


def test_sample_moments_and_gradient():
    ember.manual_seed(0)
    check_mean_var(Exponential(t(RATE)).sample((20000,)), 1 / RATE, RATE ** -2.0,
                   fourth=9 * RATE ** -4.0)
    rate = t(RATE, requires_grad=True)

    def draw(rate):
        ember.manual_seed(6)
        return Exponential(rate).rsample((2,))
    assert gradcheck(draw, (rate,))
    assert gradcheck(lambda r: Exponential(r).log_prob(t(X)), (rate,))


def test_validation_and_shapes():
    with pytest.raises(ValueError, match="Expected parameter rate"):
        Exponential(t([1.0, 0.0]))
    with pytest.raises(ValueError, match="within the support"):
        Exponential(1.0).log_prob(ember.tensor(-0.5))
    assert Exponential(ember.ones(2)).expand((3, 2)).sample((4,)).shape == (4, 3, 2)
