"""OneHotCategorical: one-hot samples, log_prob/entropy via Categorical, moments,
enumerate_support, validation."""
import numpy as np
import pytest
from core.distributions.helpers import check_mean_var, check_pmf_sums_to_one, t

import ember
from ember.distributions import OneHotCategorical

P = np.array([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]])


def test_formulas_and_moments():
    d = OneHotCategorical(probs=t(P))
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    v = t([[0, 0, 1], [1, 0, 0]])
    np.testing.assert_allclose(d.log_prob(v).numpy(), np.log([0.7, 0.3]))
    np.testing.assert_allclose(d.entropy().numpy(), -(P * np.log(P)).sum(-1))
    np.testing.assert_allclose(d.mean.numpy(), P)
    np.testing.assert_allclose(d.variance.numpy(), P * (1 - P))
    np.testing.assert_allclose(d.mode.numpy(), [[0, 0, 1], [0, 0, 1]])
    check_pmf_sums_to_one(d, d.enumerate_support())
    assert d.enumerate_support().shape == (3, 2, 3)
    assert d.enumerate_support(expand=False).shape == (3, 1, 3)


def test_samples():
    ember.manual_seed(0)
    x = OneHotCategorical(logits=t(np.log(P))).sample((20000,))
    assert x.shape == (20000, 2, 3)
    np.testing.assert_array_equal(x.numpy().sum(-1), 1.0)
    check_mean_var(x, P, P * (1 - P), fourth=P * (1 - P) * (1 - 3 * P + 3 * P ** 2))
    assert OneHotCategorical(t(P)).expand((4, 2)).sample((5,)).shape == (5, 4, 2, 3)


def test_validation():
    with pytest.raises(ValueError, match="within the support"):
        OneHotCategorical(t(P)).log_prob(t([[1, 1, 0], [1, 0, 0]]))
