"""Cauchy: formulas, quantiles of a large sample (no finite moments), rsample gradients,
NaN mean / inf variance, validation."""
import numpy as np
import pytest
from core.distributions.helpers import t

import ember
from ember.autograd import gradcheck
from ember.distributions import Cauchy

LOC = np.array([-1.0, 0.0, 2.5])
SCALE = np.array([0.5, 1.0, 2.0])
X = np.array([0.3, -2.0, 2.0])


def test_formulas():
    d = Cauchy(t(LOC), t(SCALE))
    z = (X - LOC) / SCALE
    np.testing.assert_allclose(d.log_prob(t(X)).numpy(),
                               -np.log(np.pi * SCALE * (1 + z ** 2)))
    np.testing.assert_allclose(d.cdf(t(X)).numpy(), np.arctan(z) / np.pi + 0.5)
    np.testing.assert_allclose(d.icdf(t(np.arctan(z) / np.pi + 0.5)).numpy(), X, rtol=1e-10)
    np.testing.assert_allclose(d.entropy().numpy(), np.log(4 * np.pi * SCALE))
    assert np.isnan(d.mean.numpy()).all() and np.isinf(d.variance.numpy()).all()
    np.testing.assert_allclose(d.mode.numpy(), LOC)


def test_sample_quartiles():
    ember.manual_seed(0)
    n = 40000
    x = Cauchy(t(LOC), t(SCALE)).sample((n,)).numpy()
    # the fraction of draws below the quartiles loc -/+ scale is 1/4 and 3/4
    for q, edge in ((0.25, LOC - SCALE), (0.5, LOC), (0.75, LOC + SCALE)):
        frac = (x < edge).mean(0)
        assert np.all(np.abs(frac - q) < 6 * np.sqrt(q * (1 - q) / n))


def test_rsample_gradient_and_validation():
    loc, scale = t(LOC, requires_grad=True), t(SCALE, requires_grad=True)

    def draw(loc, scale):
        ember.manual_seed(4)
        return Cauchy(loc, scale).rsample((2,))
    assert gradcheck(draw, (loc, scale))
    with pytest.raises(ValueError, match="Expected parameter scale"):
        Cauchy(0.0, -2.0)
