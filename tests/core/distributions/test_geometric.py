"""Geometric: formulas, sample moments, p = 1 edge, validation (probs > 0)."""
import numpy as np
import pytest
from core.distributions.helpers import check_mean_var, check_pmf_sums_to_one, t

import ember
from ember.autograd import gradcheck
from ember.distributions import Geometric

P = np.array([0.2, 0.5, 0.9])


def test_formulas():
    d = Geometric(t(P))
    k = np.array([0.0, 3.0, 1.0])
    np.testing.assert_allclose(d.log_prob(t(k)).numpy(), k * np.log1p(-P) + np.log(P))
    np.testing.assert_allclose(d.mean.numpy(), 1 / P - 1)
    np.testing.assert_allclose(d.variance.numpy(), (1 - P) / P ** 2)
    np.testing.assert_allclose(d.mode.numpy(), 0.0)
    ent = -((1 - P) * np.log1p(-P) + P * np.log(P)) / P
    np.testing.assert_allclose(d.entropy().numpy(), ent, rtol=1e-10)
    check_pmf_sums_to_one(d, ember.arange(400, dtype=ember.float64).reshape(-1, 1))
    np.testing.assert_allclose(Geometric(t([1.0])).log_prob(t([0.0])).numpy(), [0.0])


def test_samples_and_gradient():
    ember.manual_seed(0)
    x = Geometric(t(P)).sample((20000,))
    q = 1 - P
    var = q / P ** 2
    check_mean_var(x, 1 / P - 1, var, fourth=q * (P ** 2 + 9 * q) / P ** 4)
    probs = t(P, requires_grad=True)
    assert gradcheck(lambda p: Geometric(p).log_prob(t([0.0, 3.0, 1.0])), (probs,))


def test_validation_and_shapes():
    with pytest.raises(ValueError, match="to be positive"):
        Geometric(t([0.0, 0.5]))
    with pytest.raises(ValueError, match="Either"):
        Geometric()
    with pytest.raises(ValueError, match="within the support"):
        Geometric(0.5).log_prob(ember.tensor(1.5))
    assert Geometric(logits=ember.zeros(2)).expand((3, 2)).sample((4,)).shape == (4, 3, 2)
