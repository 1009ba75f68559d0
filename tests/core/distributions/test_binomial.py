"""Binomial: log_prob against math.lgamma for probs and logits, entropy by enumeration,
sample moments for small and large counts, validation."""
import math

import numpy as np
import pytest
from core.distributions.helpers import check_mean_var, check_pmf_sums_to_one, t

import ember
from ember.autograd import gradcheck
from ember.distributions import Binomial

N = np.array([1.0, 10.0, 10.0, 500.0])
P = np.array([0.3, 0.0, 0.75, 0.02])
lgamma = np.vectorize(math.lgamma)


def test_log_prob_and_moments():
    k = np.array([1.0, 0.0, 6.0, 12.0])
    ref = (lgamma(N + 1) - lgamma(k + 1) - lgamma(N - k + 1)
           + k * np.log(np.where(k > 0, P, 1.0)) + (N - k) * np.log1p(-P))
    d = Binomial(t(N), t(P))
    np.testing.assert_allclose(d.log_prob(t(k)).numpy(), ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(d.mean.numpy(), N * P)
    np.testing.assert_allclose(d.variance.numpy(), N * P * (1 - P))
    np.testing.assert_allclose(d.mode.numpy(), np.minimum(np.floor((N + 1) * P), N))
    logits = np.array([-1.0, 0.0, 2.0, -4.0])
    pl = 1 / (1 + np.exp(-logits))
    dl = Binomial(t(N), logits=t(logits))
    np.testing.assert_allclose(dl.log_prob(t(k)).numpy(),
                               lgamma(N + 1) - lgamma(k + 1) - lgamma(N - k + 1)
                               + k * np.log(pl) + (N - k) * np.log1p(-pl), rtol=1e-10)


def test_entropy_and_enumerate_support():
    p = np.array([0.2, 0.5])
    d = Binomial(6, t(p))
    support = d.enumerate_support()
    assert support.shape == (7, 2) and d.enumerate_support(False).shape == (7, 1)
    check_pmf_sums_to_one(d, support)
    k = np.arange(7.0)[:, None]
    pmf = np.exp(lgamma(7.0) - lgamma(k + 1) - lgamma(7 - k) + k * np.log(p)
                 + (6 - k) * np.log1p(-p))
    np.testing.assert_allclose(d.entropy().numpy(), -(pmf * np.log(pmf)).sum(0), rtol=1e-10)
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
        Binomial(t([2.0, 3.0]), t(p)).entropy()


def test_samples():
    ember.manual_seed(0)
    x = Binomial(t(N), t(P)).sample((20000,))
    xs = x.numpy()
    assert (xs == np.floor(xs)).all() and (xs >= 0).all() and (xs <= N).all()
    var = N * P * (1 - P)
    check_mean_var(x, N * P, var, fourth=3 * var ** 2 + var)  # mu4 <= 3 var^2 + var


def test_gradient_validation_shapes():
    probs = t([0.3, 0.6], requires_grad=True)
    assert gradcheck(lambda p: Binomial(5, p).log_prob(t([2.0, 5.0])), (probs,))
    with pytest.raises(ValueError, match="Expected parameter total_count"):
        Binomial(t([2.5]), t([0.5]))
    with pytest.raises(ValueError, match="within the support"):
        Binomial(3, t([0.5])).log_prob(t([4.0]))
    assert Binomial(4, ember.full((2,), 0.5)).expand((3, 2)).sample((5,)).shape == (5, 3, 2)
