"""LogNormal: formulas, sample moments of log X, rsample gradients, shapes, validation."""
import math

import numpy as np
import pytest
from core.distributions.helpers import check_mean_var, t

import ember
from ember.autograd import gradcheck
from ember.distributions import LogNormal

LOC = np.array([-0.5, 0.0, 1.0])
SCALE = np.array([0.3, 1.0, 0.5])
X = np.array([0.4, 1.5, 3.0])


def test_formulas():
    d = LogNormal(t(LOC), t(SCALE))
    lx = np.log(X)
    ref = -((lx - LOC) ** 2) / (2 * SCALE ** 2) - np.log(SCALE * X * np.sqrt(2 * np.pi))
    np.testing.assert_allclose(d.log_prob(t(X)).numpy(), ref, rtol=1e-12)
    cdf = 0.5 * (1 + np.vectorize(math.erf)((lx - LOC) / (SCALE * np.sqrt(2))))
    np.testing.assert_allclose(d.cdf(t(X)).numpy(), cdf)
    np.testing.assert_allclose(d.icdf(t(cdf)).numpy(), X, rtol=1e-6)
    np.testing.assert_allclose(d.mean.numpy(), np.exp(LOC + SCALE ** 2 / 2))
    np.testing.assert_allclose(d.mode.numpy(), np.exp(LOC - SCALE ** 2))
    np.testing.assert_allclose(d.variance.numpy(),
                               np.expm1(SCALE ** 2) * np.exp(2 * LOC + SCALE ** 2))
    np.testing.assert_allclose(d.entropy().numpy(),
                               LOC + 0.5 + 0.5 * np.log(2 * np.pi * SCALE ** 2))


def test_samples_and_gradient():
    ember.manual_seed(0)
    x = LogNormal(t(LOC), t(SCALE)).sample((20000,))
    assert (x.numpy() > 0).all()
    check_mean_var(x.log(), LOC, SCALE ** 2)
    loc, scale = t(LOC, requires_grad=True), t(SCALE, requires_grad=True)

    def draw(loc, scale):
        ember.manual_seed(7)
        return LogNormal(loc, scale).rsample((2,))
    assert gradcheck(draw, (loc, scale))


def test_shapes_and_validation():
    d = LogNormal(ember.zeros(2), 1.0)
    assert d.expand((3, 2)).sample((4,)).shape == (4, 3, 2)
    with pytest.raises(ValueError, match="within the support"):
        d.log_prob(ember.tensor([-1.0, 1.0]))
    with pytest.raises(ValueError, match="Expected parameter scale"):
        LogNormal(0.0, -1.0)
