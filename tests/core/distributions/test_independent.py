"""Independent: shape bookkeeping, log_prob/entropy summed over reinterpreted dims,
support, expand, errors."""
import numpy as np
import pytest
from core.distributions.helpers import t

import ember
from ember.distributions import Bernoulli, Independent, Normal


def test_shapes_log_prob_and_entropy():
    loc, scale = np.zeros((2, 3)), np.full((2, 3), 2.0)
    base = Normal(t(loc), t(scale))
    d = Independent(base, 1)
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    assert d.has_rsample and not d.has_enumerate_support
    x = t(np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(d.log_prob(x).numpy(), base.log_prob(x).numpy().sum(-1))
    np.testing.assert_allclose(d.entropy().numpy(), base.entropy().numpy().sum(-1))
    assert d.rsample((4,)).shape == (4, 2, 3)
    np.testing.assert_allclose(d.mean.numpy(), loc)
    np.testing.assert_allclose(d.variance.numpy(), scale ** 2)
    e = d.expand((5, 2))
    assert e.batch_shape == (5, 2) and e.event_shape == (3,) and e.sample().shape == (5, 2, 3)
    full = Independent(base, 2)
    assert full.batch_shape == () and full.event_shape == (2, 3)


def test_support_and_enumerate():
    d = Independent(Bernoulli(ember.full((2, 3), 0.5)), 1)
    assert bool(d.support.check(ember.ones(2, 3)).all())
    assert d.support.check(ember.ones(2, 3)).shape == (2,)
    with pytest.raises(NotImplementedError, match="cartesian product"):
        d.enumerate_support()
    assert Independent(Bernoulli(ember.full((2,), 0.5)), 0).enumerate_support().shape == (2, 2)


def test_errors():
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
        Independent(Normal(ember.zeros(2), 1.0), 2)
    with pytest.raises(TypeError, match="expected a Distribution"):
        Independent(ember.zeros(2), 1)
    with pytest.raises(ValueError, match="within the support"):
        Independent(Normal(ember.zeros(2), 1.0, validate_args=True), 1).log_prob(
            ember.tensor([0.0, float("nan")]))
