"""StudentT: formulas, sample moments for df > 4, NaN/inf moments for small df,
validation."""
import math

import numpy as np
import pytest
from core.distributions.helpers import check_mean_var, t
from core.distributions.test_gamma import digamma

import ember
from ember.autograd import gradcheck
from ember.distributions import StudentT

DF = np.array([5.0, 10.0, 30.0])
LOC = np.array([0.0, -1.0, 2.0])
SCALE = np.array([1.0, 2.0, 0.5])
X = np.array([0.5, 3.0, 1.0])
lgamma = np.vectorize(math.lgamma)


def test_formulas():
    d = StudentT(t(DF), t(LOC), t(SCALE))
    y = (X - LOC) / SCALE
    ref = (lgamma((DF + 1) / 2) - lgamma(DF / 2) - 0.5 * np.log(DF * np.pi) - np.log(SCALE)
           - (DF + 1) / 2 * np.log1p(y ** 2 / DF))
    np.testing.assert_allclose(d.log_prob(t(X)).numpy(), ref, rtol=1e-12)
    ent = ((DF + 1) / 2 * (digamma((DF + 1) / 2) - digamma(DF / 2)) + 0.5 * np.log(DF)
           + lgamma(DF / 2) + lgamma(0.5) - lgamma((DF + 1) / 2) + np.log(SCALE))
    np.testing.assert_allclose(d.entropy().numpy(), ent, rtol=1e-9)
    np.testing.assert_allclose(d.mean.numpy(), LOC)
    np.testing.assert_allclose(d.variance.numpy(), SCALE ** 2 * DF / (DF - 2))
    small = StudentT(t([0.5, 1.5, 3.0]))
    mean, var = small.mean.numpy(), small.variance.numpy()
    assert np.isnan(mean[0]) and mean[1:].tolist() == [0.0, 0.0]
    assert np.isnan(var[0]) and np.isinf(var[1]) and var[2] == 3.0


def test_sample_moments_and_gradient():
    ember.manual_seed(0)
    x = StudentT(t(DF), t(LOC), t(SCALE)).sample((20000,))
    var = SCALE ** 2 * DF / (DF - 2)
    kurt = 3 + 6 / (DF - 4)
    check_mean_var(x, LOC, var, fourth=kurt * var ** 2)
    df, loc, scale = (t(a, requires_grad=True) for a in (DF, LOC, SCALE))
    assert gradcheck(lambda a, b, c: StudentT(a, b, c).log_prob(t(X)), (df, loc, scale))


def test_validation():
    with pytest.raises(ValueError, match="Expected parameter df"):
        StudentT(0.0)
    assert StudentT(ember.ones(2) * 3).expand((3, 2)).sample((4,)).shape == (4, 3, 2)
