"""Poisson: log_prob against math.lgamma, sample moments, rate 0, validation."""
import math

import numpy as np
import pytest
from core.distributions.helpers import check_mean_var, check_pmf_sums_to_one, t

import ember
from ember.autograd import gradcheck
from ember.distributions import Poisson

RATE = np.array([0.5, 3.0, 25.0])


def test_formulas():
    d = Poisson(t(RATE))
    k = np.array([0.0, 2.0, 30.0])
    ref = k * np.log(RATE) - RATE - np.vectorize(math.lgamma)(k + 1)
    np.testing.assert_allclose(d.log_prob(t(k)).numpy(), ref, rtol=1e-12)
    np.testing.assert_allclose(d.mean.numpy(), RATE)
    np.testing.assert_allclose(d.variance.numpy(), RATE)
    np.testing.assert_allclose(d.mode.numpy(), np.floor(RATE))
    check_pmf_sums_to_one(d, ember.arange(100, dtype=ember.float64).reshape(-1, 1))
    np.testing.assert_allclose(Poisson(t([0.0])).log_prob(t([0.0])).numpy(), [0.0])


def test_samples_and_gradient():
    ember.manual_seed(0)
    x = Poisson(t(RATE)).sample((20000,))
    check_mean_var(x, RATE, RATE, fourth=RATE * (1 + 3 * RATE))
    rate = t(RATE, requires_grad=True)
    assert gradcheck(lambda r: Poisson(r).log_prob(t([0.0, 2.0, 30.0])), (rate,))


def test_validation_and_shapes():
    with pytest.raises(ValueError, match="Expected parameter rate"):
        Poisson(t([-1.0]))
    with pytest.raises(ValueError, match="within the support"):
        Poisson(1.0).log_prob(ember.tensor(0.5))
    assert Poisson(ember.ones(2)).expand((3, 2)).sample((4,)).shape == (4, 3, 2)
