"""kl_divergence: closed forms against numpy float64 formulas and Monte-Carlo estimates,
the registry (dispatch to subclasses, custom pairs), infinite cases, errors."""
import math

import numpy as np
import pytest
from core.distributions.helpers import Z, t

import ember
import ember.distributions as D
from ember.autograd import gradcheck

lgamma = np.vectorize(math.lgamma)


def _monte_carlo(p, q, n=20000):
    """E_p[log p - log q] from n draws, and its standard error."""
    ember.manual_seed(0)
    x = p.sample((n,))
    r = (p.log_prob(x) - q.log_prob(x)).numpy()
    return r.mean(0), r.std(0) / math.sqrt(n)


A, B = t([0.0, 1.0]), t([1.0, 2.0])
C, E = t([0.5, -1.0]), t([2.0, 0.7])
PAIRS = [
    (lambda: D.Normal(A, B), lambda: D.Normal(C, E)),
    (lambda: D.Laplace(A, B), lambda: D.Laplace(C, E)),
    (lambda: D.Cauchy(A, B), lambda: D.Cauchy(C, E)),
    (lambda: D.LogNormal(A, B / 2), lambda: D.LogNormal(C / 2, E)),
    (lambda: D.Exponential(t([1.0, 3.0])), lambda: D.Exponential(t([2.0, 0.5]))),
    (lambda: D.Gamma(t([2.0, 5.0]), B), lambda: D.Gamma(t([3.0, 4.0]), t([0.5, 2.5]))),
    (lambda: D.Beta(t([2.0, 5.0]), t([3.0, 2.0])), lambda: D.Beta(t([1.5, 4.0]), t([2.5, 3.0]))),
    (lambda: D.Dirichlet(t([[2.0, 3.0, 1.5]])), lambda: D.Dirichlet(t([[1.0, 4.0, 2.0]]))),
    (lambda: D.Poisson(t([2.0, 7.0])), lambda: D.Poisson(t([3.0, 5.0]))),
    (lambda: D.Bernoulli(t([0.2, 0.7])), lambda: D.Bernoulli(t([0.5, 0.4]))),
    (lambda: D.Geometric(t([0.2, 0.7])), lambda: D.Geometric(t([0.5, 0.4]))),
    (lambda: D.Binomial(10, t([0.2, 0.7])), lambda: D.Binomial(10, t([0.5, 0.4]))),
    (lambda: D.Categorical(t([[0.2, 0.3, 0.5]])), lambda: D.Categorical(t([[0.6, 0.1, 0.3]]))),
    (lambda: D.OneHotCategorical(t([[0.2, 0.3, 0.5]])),
     lambda: D.OneHotCategorical(t([[0.6, 0.1, 0.3]]))),
    (lambda: D.Uniform(A, B), lambda: D.Uniform(t([-1.0, 0.0]), t([2.0, 5.0]))),
    (lambda: D.MultivariateNormal(A, t([[2.0, 0.5], [0.5, 1.0]])),
     lambda: D.MultivariateNormal(t([1.0, 0.0]), t([[1.0, -0.3], [-0.3, 3.0]]))),
    (lambda: D.Independent(D.Normal(A, B), 1), lambda: D.Independent(D.Normal(C, E), 1)),
]


@pytest.mark.parametrize("make_p, make_q", PAIRS,
                         ids=[type(p()).__name__ for p, _ in PAIRS])
def test_closed_form_matches_monte_carlo(make_p, make_q):
    p, q = make_p(), make_q()
    kl = D.kl_divergence(p, q).numpy()
    est, se = _monte_carlo(p, q)
    assert kl.shape == est.shape
    assert np.all(np.abs(kl - est) < Z * se + 1e-9), (kl, est, se)


def test_closed_forms_against_numpy():
    m1, s1, m2, s2 = 0.3, 1.5, -1.0, 0.5
    np.testing.assert_allclose(
        D.kl_divergence(D.Normal(t(m1), t(s1)), D.Normal(t(m2), t(s2))).numpy(),
        np.log(s2 / s1) + (s1 ** 2 + (m1 - m2) ** 2) / (2 * s2 ** 2) - 0.5)
    a1, b1, a2, b2 = 2.0, 3.0, 4.0, 1.5
    ref = ((a1 - a2) * _digamma(a1) - lgamma(a1) + lgamma(a2) + a2 * (np.log(b1) - np.log(b2))
           + a1 * (b2 - b1) / b1)
    np.testing.assert_allclose(
        D.kl_divergence(D.Gamma(t(a1), t(b1)), D.Gamma(t(a2), t(b2))).numpy(), ref)
    np.testing.assert_allclose(
        D.kl_divergence(D.Poisson(t(2.0)), D.Poisson(t(3.0))).numpy(),
        2 * np.log(2 / 3) - 2 + 3)
    np.testing.assert_allclose(
        D.kl_divergence(D.Uniform(t(0.0), t(1.0)), D.Uniform(t(-1.0), t(3.0))).numpy(), np.log(4))


def _digamma(x):
    from core.distributions.test_gamma import digamma
    return digamma(x)


def test_infinite_cases():
    def kl(p, q):
        return D.kl_divergence(p, q).item()
    assert math.isinf(kl(D.Uniform(t(0.0), t(2.0)), D.Uniform(t(0.0), t(1.0))))
    assert math.isinf(kl(D.Bernoulli(t(0.5)), D.Bernoulli(t(0.0))))
    assert kl(D.Bernoulli(t(0.0)), D.Bernoulli(t(0.5))) == pytest.approx(math.log(2))
    assert math.isinf(kl(D.Categorical(t([0.5, 0.5])), D.Categorical(t([1.0, 0.0]))))
    assert math.isinf(kl(D.Binomial(5, t(0.5)), D.Binomial(3, t(0.5))))


def test_gradient():
    m, s = t([0.3, -0.2], requires_grad=True), t([1.5, 0.4], requires_grad=True)
    assert gradcheck(lambda m, s: D.kl_divergence(D.Normal(m, s), D.Normal(0.0, 1.0)), (m, s))
    L = t([[1.0, 0.0], [0.3, 0.8]], requires_grad=True)
    assert gradcheck(lambda L: D.kl_divergence(
        D.MultivariateNormal(t([0.0, 0.0]), scale_tril=L, validate_args=False),
        D.MultivariateNormal(t([1.0, 0.0]), t([[1.0, 0.2], [0.2, 2.0]]))), (L,))


def test_registry_dispatch_and_errors():
    class MyNormal(D.Normal):
        pass
    kl = D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0))  # inherits (Normal, Normal)
    assert kl.item() == pytest.approx(0.5)

    class Special(D.Normal):
        pass

    @D.register_kl(Special, D.Normal)
    def _kl_special(p, q):
        return ember.tensor(-1.0)
    assert D.kl_divergence(Special(0.0, 1.0), D.Normal(0.0, 1.0)).item() == -1.0
    assert D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 0.0

    with pytest.raises(NotImplementedError, match="Normal and q of type Laplace"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Laplace(0.0, 1.0))
    with pytest.raises(TypeError, match="Distribution subclasses"):
        D.register_kl(int, D.Normal)
    with pytest.raises(ValueError, match="different event shapes"):
        D.kl_divergence(D.MultivariateNormal(ember.zeros(2), ember.eye(2)),
                        D.MultivariateNormal(ember.zeros(3), ember.eye(3)))
    with pytest.raises(NotImplementedError, match="reinterpreted_batch_ndims"):
        base = D.Normal(ember.zeros(2, 2), 1.0)
        D.kl_divergence(D.Independent(base, 1), D.Independent(base, 2))
