"""Normal: log_prob/cdf/icdf/entropy/moments against numpy float64 formulas, sample
moments, rsample as loc + scale * eps with gradcheck, shapes, validation, and an end-to-end
maximum-likelihood fit with Adam."""
import math

import numpy as np
import pytest
from core.distributions.helpers import check_mean_var, t

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.distributions import Normal

LOC = np.array([-1.0, 0.0, 2.5])
SCALE = np.array([0.5, 1.0, 3.0])
X = np.array([0.3, -2.0, 7.0])


def _erf(x):
    return np.vectorize(math.erf)(x)


def test_log_prob_cdf_icdf_entropy_match_formulas():
    d = Normal(t(LOC), t(SCALE))
    ref = -((X - LOC) ** 2) / (2 * SCALE ** 2) - np.log(SCALE) - 0.5 * np.log(2 * np.pi)
    np.testing.assert_allclose(d.log_prob(t(X)).numpy(), ref, rtol=1e-12)
    cdf = 0.5 * (1 + _erf((X - LOC) / (SCALE * np.sqrt(2))))
    np.testing.assert_allclose(d.cdf(t(X)).numpy(), cdf, rtol=1e-12)
    np.testing.assert_allclose(d.icdf(t(cdf)).numpy(), X, rtol=1e-6)
    np.testing.assert_allclose(d.entropy().numpy(), 0.5 + 0.5 * np.log(2 * np.pi * SCALE ** 2))
    np.testing.assert_allclose(d.mean.numpy(), LOC)
    np.testing.assert_allclose(d.mode.numpy(), LOC)
    np.testing.assert_allclose(d.variance.numpy(), SCALE ** 2)
    np.testing.assert_allclose(d.stddev.numpy(), SCALE)


def test_sample_moments():
    ember.manual_seed(0)
    d = Normal(t(LOC), t(SCALE))
    check_mean_var(d.sample((20000,)), LOC, SCALE ** 2)
    check_mean_var(d.rsample((20000,)).detach(), LOC, SCALE ** 2)


def test_rsample_is_loc_plus_scale_times_standard_normal():
    d = Normal(t(LOC), t(SCALE))
    ember.manual_seed(3)
    x = d.rsample((4,))
    ember.manual_seed(3)
    eps = ember.randn((4, 3), dtype=ember.float64)
    np.testing.assert_allclose(x.numpy(), LOC + SCALE * eps.numpy(), rtol=1e-12)


def test_rsample_log_prob_and_entropy_gradients():
    loc, scale = t(LOC, requires_grad=True), t(SCALE, requires_grad=True)

    def draw(loc, scale):
        ember.manual_seed(5)  # the same noise on every call: rsample is a function of loc, scale
        return Normal(loc, scale).rsample((2,))

    assert gradcheck(draw, (loc, scale))
    assert gradcheck(lambda m, s: Normal(m, s).log_prob(t(X)), (loc, scale))
    assert gradgradcheck(lambda m, s: Normal(m, s).log_prob(t(X)), (loc, scale))
    assert gradcheck(lambda m, s: Normal(m, s).cdf(t(X)), (loc, scale))
    assert gradcheck(lambda s: Normal(0.0, s).entropy(), (scale,))


def test_sample_is_not_tracked_but_rsample_is():
    loc = t(LOC, requires_grad=True)
    assert not Normal(loc, 1.0).sample().requires_grad
    assert Normal(loc, 1.0).rsample().requires_grad
    assert Normal.has_rsample


@pytest.mark.parametrize("sample_shape", [(), (5,), (2, 4)])
def test_shapes_and_expand(sample_shape):
    d = Normal(ember.zeros(3, 1), ember.ones(2))
    assert d.batch_shape == (3, 2) and d.event_shape == ()
    assert d.sample(sample_shape).shape == tuple(sample_shape) + (3, 2)
    assert d.log_prob(ember.zeros(2)).shape == (3, 2)
    e = d.expand((4, 3, 2))
    assert e.batch_shape == (4, 3, 2)
    assert e.sample(sample_shape).shape == tuple(sample_shape) + (4, 3, 2)
    assert Normal(0.0, 1.0).batch_shape == ()
    assert Normal(0.0, 1.0).sample().dtype == ember.get_default_dtype()


def test_validation_errors():
    with pytest.raises(ValueError, match="Expected parameter scale .* GreaterThan"):
        Normal(0.0, t([1.0, -1.0]))
    Normal(0.0, t([1.0, -1.0]), validate_args=False)  # no check when turned off
    with pytest.raises(ValueError, match="Expected value argument"):
        Normal(0.0, 1.0).log_prob(ember.tensor(math.nan))
    with pytest.raises(ValueError, match="must be a Tensor"):
        Normal(0.0, 1.0).log_prob(0.5)


def test_fit_loc_and_scale_by_maximum_likelihood_with_adam():
    ember.manual_seed(0)
    data = Normal(3.0, 0.5).sample((2000,))
    loc = ember.zeros((), requires_grad=True)
    log_scale = ember.zeros((), requires_grad=True)
    opt = ember.optim.Adam([loc, log_scale], lr=0.1)
    for _ in range(200):
        opt.zero_grad()
        loss = -Normal(loc, log_scale.exp()).log_prob(data).mean()
        loss.backward()
        opt.step()
    x = data.numpy().astype(np.float64)
    assert abs(loc.item() - x.mean()) < 0.02
    assert abs(math.exp(log_scale.item()) - x.std()) < 0.02
