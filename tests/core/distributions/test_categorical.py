"""Categorical: normalization of probs/logits, log_prob/entropy against numpy, sample
frequencies, enumerate_support, shapes, validation."""
import numpy as np
import pytest
from core.distributions.helpers import Z, check_pmf_sums_to_one, t

import ember
from ember.autograd import gradcheck
from ember.distributions import Categorical

W = np.array([[1.0, 2.0, 7.0], [3.0, 3.0, 4.0]])
P = W / W.sum(-1, keepdims=True)


def test_formulas():
    for d in (Categorical(probs=t(W)), Categorical(logits=t(np.log(W) + 5.0))):
        np.testing.assert_allclose(d.probs.numpy(), P)
        np.testing.assert_allclose(d.logits.numpy(), np.log(P), rtol=1e-10)
        v = np.array([2, 0])
        np.testing.assert_allclose(d.log_prob(ember.tensor(v)).numpy(), np.log(P[[0, 1], v]))
        np.testing.assert_allclose(d.entropy().numpy(), -(P * np.log(P)).sum(-1))
        np.testing.assert_array_equal(d.mode.numpy(), [2, 2])
        assert np.isnan(d.mean.numpy()).all() and np.isnan(d.variance.numpy()).all()
        check_pmf_sums_to_one(d, d.enumerate_support())


def test_zero_probability_entropy_is_finite():
    d = Categorical(probs=t([0.0, 0.5, 0.5]))
    np.testing.assert_allclose(d.entropy().numpy(), np.log(2))


def test_sample_frequencies():
    ember.manual_seed(0)
    n = 20000
    x = Categorical(probs=t(W)).sample((n,))
    assert x.shape == (n, 2) and x.dtype == ember.int64
    for k in range(3):
        freq = (x.numpy() == k).mean(0)
        assert np.all(np.abs(freq - P[:, k]) < Z * np.sqrt(P[:, k] * (1 - P[:, k]) / n))


def test_gradients_shapes_and_expand():
    logits = t(np.log(W), requires_grad=True)
    assert gradcheck(lambda lg: Categorical(logits=lg).log_prob(ember.tensor([2, 1])), (logits,))
    assert gradcheck(lambda lg: Categorical(logits=lg).entropy(), (logits,))
    d = Categorical(logits=ember.zeros(2, 4))
    assert d.batch_shape == (2,) and d.event_shape == () and d.param_shape == (2, 4)
    assert d.sample((3, 5)).shape == (3, 5, 2)
    e = d.expand((6, 2))
    assert e.batch_shape == (6, 2) and e.sample().shape == (6, 2)
    assert e.enumerate_support().shape == (4, 6, 2)
    assert e.enumerate_support(expand=False).shape == (4, 1, 1)
    assert Categorical(t([0.2, 0.8])).batch_shape == ()


def test_errors():
    with pytest.raises(ValueError, match="at least one-dimensional"):
        Categorical(ember.tensor(1.0))
    with pytest.raises(ValueError, match="Expected parameter probs"):
        Categorical(t([0.5, -0.5, 1.0]))
    with pytest.raises(ValueError, match="within the support"):
        Categorical(t([0.5, 0.5])).log_prob(ember.tensor(2))
    with pytest.raises(ValueError, match="Either"):
        Categorical()
