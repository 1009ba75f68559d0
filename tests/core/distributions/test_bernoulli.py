"""Bernoulli: probs/logits parametrizations, formulas, sample frequencies,
enumerate_support, mode at 1/2, validation."""
import numpy as np
import pytest
from core.distributions.helpers import check_mean_var, check_pmf_sums_to_one, t

import ember
from ember.autograd import gradcheck
from ember.distributions import Bernoulli

P = np.array([0.1, 0.5, 0.8])


def test_formulas_probs_and_logits_agree():
    logits = np.log(P) - np.log1p(-P)
    for d in (Bernoulli(probs=t(P)), Bernoulli(logits=t(logits))):
        np.testing.assert_allclose(d.probs.numpy(), P)
        np.testing.assert_allclose(d.logits.numpy(), logits, atol=1e-12)
        np.testing.assert_allclose(d.log_prob(t([1.0, 0.0, 1.0])).numpy(),
                                   np.log([P[0], 1 - P[1], P[2]]), rtol=1e-10)
        np.testing.assert_allclose(d.entropy().numpy(),
                                   -(P * np.log(P) + (1 - P) * np.log1p(-P)), rtol=1e-10)
        np.testing.assert_allclose(d.mean.numpy(), P)
        np.testing.assert_allclose(d.variance.numpy(), P * (1 - P))
        mode = d.mode.numpy()
        assert mode[0] == 0 and np.isnan(mode[1]) and mode[2] == 1
        check_pmf_sums_to_one(d, d.enumerate_support())


def test_samples_and_gradients():
    ember.manual_seed(0)
    x = Bernoulli(t(P)).sample((20000,))
    assert set(np.unique(x.numpy())) <= {0.0, 1.0}
    check_mean_var(x, P, P * (1 - P), fourth=P * (1 - P) * (1 - 3 * P + 3 * P ** 2))
    probs = t(P, requires_grad=True)
    assert gradcheck(lambda p: Bernoulli(probs=p).log_prob(t([1.0, 0.0, 1.0])), (probs,))
    logits = t([-1.0, 0.5, 3.0], requires_grad=True)
    assert gradcheck(lambda lg: Bernoulli(logits=lg).entropy(), (logits,))
    assert not Bernoulli.has_rsample


def test_enumerate_support_and_shapes():
    d = Bernoulli(ember.full((2, 3), 0.5))
    assert d.enumerate_support().shape == (2, 2, 3)
    assert d.enumerate_support(expand=False).shape == (2, 1, 1)
    assert d.expand((4, 2, 3)).sample((5,)).shape == (5, 4, 2, 3)
    assert Bernoulli(0.3).batch_shape == () and Bernoulli(0.3).param_shape == ()


def test_errors():
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        Bernoulli()
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        Bernoulli(0.5, 0.0)
    with pytest.raises(ValueError, match="Expected parameter probs"):
        Bernoulli(t([0.5, 1.5]))
    with pytest.raises(ValueError, match="within the support"):
        Bernoulli(0.5).log_prob(ember.tensor(0.5))
