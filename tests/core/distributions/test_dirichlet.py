"""Dirichlet: log_prob/entropy against math.lgamma and a numpy digamma, sample moments on
the simplex, mode (torch's corner choice), validation."""
import math

import numpy as np
import pytest
from core.distributions.helpers import check_mean_var, t
from core.distributions.test_gamma import digamma

import ember
from ember.autograd import gradcheck
from ember.distributions import Dirichlet

C = np.array([[0.7, 2.0, 3.5], [5.0, 1.0, 1.5]])
X = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
lgamma = np.vectorize(math.lgamma)


def test_formulas():
    d = Dirichlet(t(C))
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    a0 = C.sum(-1)
    ref = ((C - 1) * np.log(X)).sum(-1) + lgamma(a0) - lgamma(C).sum(-1)
    np.testing.assert_allclose(d.log_prob(t(X)).numpy(), ref, rtol=1e-12)
    ent = (lgamma(C).sum(-1) - lgamma(a0) + (a0 - 3) * digamma(a0)
           - ((C - 1) * digamma(C)).sum(-1))
    np.testing.assert_allclose(d.entropy().numpy(), ent, rtol=1e-9)
    np.testing.assert_allclose(d.mean.numpy(), C / a0[:, None])
    var = C * (a0[:, None] - C) / (a0[:, None] ** 2 * (a0[:, None] + 1))
    np.testing.assert_allclose(d.variance.numpy(), var)
    m = np.maximum(C - 1, 0)
    np.testing.assert_allclose(d.mode.numpy(), m / m.sum(-1, keepdims=True))
    np.testing.assert_allclose(Dirichlet(t([0.5, 0.3, 0.9])).mode.numpy(), [1.0, 0.0, 0.0])


def test_samples():
    ember.manual_seed(0)
    x = Dirichlet(t(C)).sample((20000,))
    assert x.shape == (20000, 2, 3)
    np.testing.assert_allclose(x.numpy().sum(-1), 1.0, rtol=1e-12)
    a0 = C.sum(-1, keepdims=True)
    var = C * (a0 - C) / (a0 ** 2 * (a0 + 1))
    check_mean_var(x, C / a0, var, fourth=3 * var ** 2 + var)  # loose mu4 bound on [0, 1]


def test_gradients_validation_shapes():
    assert not Dirichlet.has_rsample
    c = t(C, requires_grad=True)
    assert gradcheck(lambda c: Dirichlet(c).log_prob(t(X)), (c,))
    assert gradcheck(lambda c: Dirichlet(c).entropy(), (c,))
    with pytest.raises(ValueError, match="Expected parameter concentration"):
        Dirichlet(t([1.0, -1.0]))
    with pytest.raises(ValueError, match="at least one-dimensional"):
        Dirichlet(ember.tensor(1.0))
    with pytest.raises(ValueError, match="within the support"):
        Dirichlet(t([1.0, 1.0])).log_prob(t([0.5, 0.6]))
    with pytest.raises(ValueError, match="event_shape"):
        Dirichlet(t([1.0, 1.0])).log_prob(t([0.5, 0.25, 0.25]))
    assert Dirichlet(ember.ones(2, 3)).expand((4, 2)).sample((5,)).shape == (5, 4, 2, 3)
