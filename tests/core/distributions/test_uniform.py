"""Uniform: formulas, sample moments, rsample = low + u (high - low) with gradcheck,
shapes, validation (low < high, support)."""
import numpy as np
import pytest
from core.distributions.helpers import check_mean_var, t

import ember
from ember.autograd import gradcheck
from ember.distributions import Uniform

LOW = np.array([-1.0, 0.0, 2.0])
HIGH = np.array([1.0, 0.5, 10.0])


def test_formulas():
    d = Uniform(t(LOW), t(HIGH))
    x = np.array([0.0, 0.1, 9.0])
    np.testing.assert_allclose(d.log_prob(t(x)).numpy(), -np.log(HIGH - LOW))
    np.testing.assert_allclose(d.cdf(t(x)).numpy(), (x - LOW) / (HIGH - LOW))
    np.testing.assert_allclose(d.icdf(t([0.5] * 3)).numpy(), (LOW + HIGH) / 2)
    np.testing.assert_allclose(d.entropy().numpy(), np.log(HIGH - LOW))
    np.testing.assert_allclose(d.mean.numpy(), (LOW + HIGH) / 2)
    np.testing.assert_allclose(d.variance.numpy(), (HIGH - LOW) ** 2 / 12)
    np.testing.assert_allclose(d.stddev.numpy(), (HIGH - LOW) / np.sqrt(12))
    assert np.isnan(d.mode.numpy()).all()
    outside = Uniform(t(LOW), t(HIGH), validate_args=False).log_prob(t(HIGH + 1))
    assert np.isneginf(outside.numpy()).all()


def test_sample_moments_and_range():
    ember.manual_seed(0)
    x = Uniform(t(LOW), t(HIGH)).sample((20000,))
    w = HIGH - LOW
    check_mean_var(x, (LOW + HIGH) / 2, w ** 2 / 12, fourth=w ** 4 / 80)
    assert ((x.numpy() >= LOW) & (x.numpy() < HIGH)).all()


def test_rsample_gradient():
    low, high = t(LOW, requires_grad=True), t(HIGH, requires_grad=True)
    ember.manual_seed(1)
    x = Uniform(low, high).rsample()
    ember.manual_seed(1)
    u = ember.rand(3, dtype=ember.float64).numpy()
    np.testing.assert_allclose(x.detach().numpy(), LOW + u * (HIGH - LOW))

    def draw(low, high):
        ember.manual_seed(1)
        return Uniform(low, high).rsample((2,))
    assert gradcheck(draw, (low, high))
    assert gradcheck(lambda lo, hi: Uniform(lo, hi).entropy(), (low, high))


def test_shapes_and_expand():
    d = Uniform(0.0, ember.ones(2, 1) * 2)
    assert d.batch_shape == (2, 1)
    assert d.expand((3, 2, 4)).sample((5,)).shape == (5, 3, 2, 4)


def test_validation():
    with pytest.raises(ValueError, match="Expected parameter low"):
        Uniform(t([0.0, 2.0]), t([1.0, 1.0]))
    with pytest.raises(ValueError, match="within the support"):
        Uniform(0.0, 1.0).log_prob(ember.tensor(1.5))
