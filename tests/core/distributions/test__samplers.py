"""The gamma and binomial samplers: moments across regimes (tiny, < 1, large
concentration; small and large counts), reproducibility under manual_seed, dtype, NaN for
invalid input, and no autograd history."""
import numpy as np
from core.distributions.helpers import check_mean_var, t

import ember
from ember.distributions._samplers import binomial, standard_gamma


def test_standard_gamma_moments():
    ember.manual_seed(0)
    a = np.array([0.05, 0.5, 1.0, 3.0, 200.0])
    x = standard_gamma(t(a).expand(20000, 5))
    check_mean_var(x, a, a, fourth=3 * a * (a + 2))


def test_standard_gamma_reproducible_dtype_and_invalid():
    ember.manual_seed(5)
    a = standard_gamma(ember.full((10,), 2.0))
    ember.manual_seed(5)
    b = standard_gamma(ember.full((10,), 2.0))
    assert a.dtype == ember.float32 and (a.numpy() == b.numpy()).all()
    out = standard_gamma(t([1.0, float("nan")], requires_grad=True))
    assert not out.requires_grad and np.isnan(out.numpy()[1])


def test_binomial_moments():
    ember.manual_seed(0)
    n = np.array([0.0, 3.0, 16.0, 17.0, 1000.0, 100000.0])
    p = np.array([0.5, 0.4, 0.9, 0.3, 0.01, 0.55])
    x = binomial(t(n).expand(5000, 6), t(p).expand(5000, 6))
    xs = x.numpy()
    assert (xs == np.floor(xs)).all() and (xs >= 0).all() and (xs <= n).all()
    var = n * p * (1 - p)
    check_mean_var(x, n * p, var, fourth=var * (1 + 3 * (n - 2) * p * (1 - p)))
