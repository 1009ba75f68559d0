"""Beta: formulas, sample moments, mode edge cases (as torch), validation."""
import math

import numpy as np
import pytest
from core.distributions.helpers import check_mean_var, t
from core.distributions.test_gamma import digamma

import ember
from ember.autograd import gradcheck
from ember.distributions import Beta

C1 = np.array([0.5, 2.0, 3.0, 0.7])
C0 = np.array([0.5, 5.0, 1.5, 4.0])
X = np.array([0.1, 0.3, 0.8, 0.5])
lgamma = np.vectorize(math.lgamma)


def test_formulas():
    d = Beta(t(C1), t(C0))
    lbeta = lgamma(C1) + lgamma(C0) - lgamma(C1 + C0)
    ref = (C1 - 1) * np.log(X) + (C0 - 1) * np.log1p(-X) - lbeta
    np.testing.assert_allclose(d.log_prob(t(X)).numpy(), ref, rtol=1e-12)
    tot = C1 + C0
    ent = lbeta - (C1 - 1) * digamma(C1) - (C0 - 1) * digamma(C0) + (tot - 2) * digamma(tot)
    np.testing.assert_allclose(d.entropy().numpy(), ent, rtol=1e-9)
    np.testing.assert_allclose(d.mean.numpy(), C1 / tot)
    np.testing.assert_allclose(d.variance.numpy(), C1 * C0 / (tot ** 2 * (tot + 1)))
    # interior mode; torch's choices at the edges: both < 1 -> 1, one < 1 -> that end
    np.testing.assert_allclose(d.mode.numpy(), [1.0, 1 / 5, 2 / 2.5, 0.0])


def test_sample_moments():
    ember.manual_seed(0)
    x = Beta(t(C1), t(C0)).sample((20000,))
    assert ((x.numpy() > 0) & (x.numpy() < 1)).all()
    tot = C1 + C0
    var = C1 * C0 / (tot ** 2 * (tot + 1))
    check_mean_var(x, C1 / tot, var, fourth=3 * var ** 2 + var)  # loose bound on mu4


def test_gradients_validation_shapes():
    assert not Beta.has_rsample
    c1, c0 = t(C1, requires_grad=True), t(C0, requires_grad=True)
    assert gradcheck(lambda a, b: Beta(a, b).log_prob(t(X)), (c1, c0))
    with pytest.raises(ValueError, match="Expected parameter concentration0"):
        Beta(1.0, 0.0)
    with pytest.raises(ValueError, match="within the support"):
        Beta(1.0, 1.0).log_prob(ember.tensor(1.5))
    assert Beta(ember.ones(2), 2.0).expand((3, 2)).sample((4,)).shape == (4, 3, 2)
