"""Laplace: formulas, sample moments, rsample gradients, shapes, validation."""
import numpy as np
import pytest
from core.distributions.helpers import check_mean_var, t

import ember
from ember.autograd import gradcheck
from ember.distributions import Laplace

LOC = np.array([-1.0, 0.0, 2.5])
SCALE = np.array([0.5, 1.0, 2.0])
X = np.array([0.3, -2.0, 2.0])


def test_formulas():
    d = Laplace(t(LOC), t(SCALE))
    np.testing.assert_allclose(d.log_prob(t(X)).numpy(),
                               -np.log(2 * SCALE) - np.abs(X - LOC) / SCALE)
    cdf = np.where(X < LOC, 0.5 * np.exp((X - LOC) / SCALE), 1 - 0.5 * np.exp(-(X - LOC) / SCALE))
    np.testing.assert_allclose(d.cdf(t(X)).numpy(), cdf)
    np.testing.assert_allclose(d.icdf(t(cdf)).numpy(), X, rtol=1e-10)
    np.testing.assert_allclose(d.entropy().numpy(), 1 + np.log(2 * SCALE))
    np.testing.assert_allclose(d.variance.numpy(), 2 * SCALE ** 2)
    np.testing.assert_allclose(d.stddev.numpy(), np.sqrt(2) * SCALE)
    np.testing.assert_allclose(d.mean.numpy(), LOC)
    np.testing.assert_allclose(d.mode.numpy(), LOC)


def test_sample_moments():
    ember.manual_seed(0)
    x = Laplace(t(LOC), t(SCALE)).sample((20000,))
    check_mean_var(x, LOC, 2 * SCALE ** 2, fourth=24 * SCALE ** 4)


def test_rsample_gradient():
    loc, scale = t(LOC, requires_grad=True), t(SCALE, requires_grad=True)

    def draw(loc, scale):
        ember.manual_seed(2)
        return Laplace(loc, scale).rsample((3,))
    assert gradcheck(draw, (loc, scale))
    assert gradcheck(lambda m, s: Laplace(m, s).log_prob(t(X + 0.1)), (loc, scale))


def test_shapes_and_validation():
    assert Laplace(ember.zeros(2), 1.0).expand((3, 2)).rsample((4,)).shape == (4, 3, 2)
    with pytest.raises(ValueError, match="Expected parameter scale"):
        Laplace(0.0, 0.0)
