"""MultivariateNormal: the three parametrizations agree with a numpy float64 density,
entropy, covariance/precision/scale_tril, sample covariance, rsample = loc + L eps with
gradcheck, batch broadcasting, validation."""
import numpy as np
import pytest
from core.distributions.helpers import Z, t

import ember
from ember.autograd import gradcheck
from ember.distributions import MultivariateNormal

RNG = np.random.default_rng(0)
A = RNG.normal(size=(2, 3, 3))
S = A @ A.transpose(0, 2, 1) + np.eye(3)
LOC = RNG.normal(size=(2, 3))


def _ref_log_prob(x, loc, cov):
    diff = x - loc
    sol = np.linalg.solve(cov, diff[..., None])[..., 0]
    _, logdet = np.linalg.slogdet(cov)
    return -0.5 * ((diff * sol).sum(-1) + logdet + 3 * np.log(2 * np.pi))


@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_parametrizations_match_reference(param):
    given = {"covariance_matrix": S, "precision_matrix": np.linalg.inv(S),
             "scale_tril": np.linalg.cholesky(S)}[param]
    d = MultivariateNormal(t(LOC), **{param: t(given)})
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    x = RNG.normal(size=(4, 2, 3))
    np.testing.assert_allclose(d.log_prob(t(x)).numpy(), _ref_log_prob(x, LOC, S), rtol=1e-10)
    ent = 0.5 * (3 * (1 + np.log(2 * np.pi)) + np.linalg.slogdet(S)[1])
    np.testing.assert_allclose(d.entropy().numpy(), ent, rtol=1e-10)
    np.testing.assert_allclose(d.covariance_matrix.numpy(), S, rtol=1e-10)
    np.testing.assert_allclose(d.precision_matrix.numpy(), np.linalg.inv(S), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(d.scale_tril.numpy(), np.linalg.cholesky(S), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(d.variance.numpy(), np.diagonal(S, axis1=-2, axis2=-1))
    np.testing.assert_allclose(d.mean.numpy(), LOC)
    np.testing.assert_allclose(d.mode.numpy(), LOC)


def test_sample_mean_and_covariance():
    ember.manual_seed(0)
    n = 20000
    x = MultivariateNormal(t(LOC), t(S)).sample((n,)).numpy()
    var = np.diagonal(S, axis1=-2, axis2=-1)
    assert np.all(np.abs(x.mean(0) - LOC) < Z * np.sqrt(var / n))
    d = x - x.mean(0)
    cov = np.einsum("nbi,nbj->bij", d, d) / n
    se = np.sqrt((S ** 2 + var[:, :, None] * var[:, None, :]) / n)  # Var of Gaussian cov entries
    assert np.all(np.abs(cov - S) < Z * se)


def test_rsample_is_loc_plus_scale_tril_eps_and_differentiable():
    L = np.linalg.cholesky(S)
    ember.manual_seed(2)
    x = MultivariateNormal(t(LOC), scale_tril=t(L)).rsample((5,))
    ember.manual_seed(2)
    eps = ember.randn((5, 2, 3), dtype=ember.float64).numpy()
    np.testing.assert_allclose(x.numpy(), LOC + np.einsum("bij,nbj->nbi", L, eps), rtol=1e-10)
    loc, cov = t(LOC, requires_grad=True), t(S, requires_grad=True)

    def draw(loc, cov):
        ember.manual_seed(3)
        return MultivariateNormal(loc, (cov + cov.mT) / 2, validate_args=False).rsample((2,))
    assert gradcheck(draw, (loc, cov))
    xv = t(RNG.normal(size=(2, 3)))
    assert gradcheck(lambda m, c: MultivariateNormal(m, (c + c.mT) / 2, validate_args=False)
                     .log_prob(xv), (loc, cov))


def test_broadcasting_and_expand():
    d = MultivariateNormal(ember.zeros(4, 1, 3, dtype=ember.float64), t(S))
    assert d.batch_shape == (4, 2) and d.event_shape == (3,)
    assert d.rsample((5,)).shape == (5, 4, 2, 3)
    assert d.log_prob(ember.zeros(3, dtype=ember.float64)).shape == (4, 2)
    e = MultivariateNormal(t(LOC[0]), t(S[0])).expand((6, 2))
    assert e.batch_shape == (6, 2) and e.sample().shape == (6, 2, 3)
    assert e.covariance_matrix.shape == (6, 2, 3, 3) and e.entropy().shape == (6, 2)


def test_errors():
    with pytest.raises(ValueError, match="Exactly one of"):
        MultivariateNormal(t(LOC[0]))
    with pytest.raises(ValueError, match="Exactly one of"):
        MultivariateNormal(t(LOC[0]), t(S[0]), scale_tril=t(S[0]))
    with pytest.raises(ValueError, match="at least one-dimensional"):
        MultivariateNormal(t(0.0), t(S[0]))
    with pytest.raises(ValueError, match="at least two-dimensional"):
        MultivariateNormal(t(LOC[0]), t([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="PositiveDefinite"):
        MultivariateNormal(t(LOC[0]), t(-S[0]))
    with pytest.raises(ValueError, match="LowerCholesky"):
        MultivariateNormal(t(LOC[0]), scale_tril=t(S[0]))
