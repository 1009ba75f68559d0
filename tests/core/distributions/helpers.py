"""Shared by the distribution tests: float64 tensors, a moment check whose tolerance comes
from the standard error, and a gradcheck of ``rsample`` with its noise held fixed."""
import numpy as np

import ember

Z = 6.0  # standard errors allowed: seeded draws, so no flakes, and still a real check


def t(a, dtype=ember.float64, requires_grad=False):
    """A float64 ember tensor from a number or array-like."""
    return ember.tensor(np.asarray(a, dtype=np.float64), dtype=dtype,
                        requires_grad=requires_grad)


def check_mean_var(samples, mean, var, *, fourth=None):
    """Assert the sample mean and variance over dim 0 match ``mean`` and ``var`` within
    ``Z`` standard errors. The variance's standard error uses the fourth central moment
    (``fourth``; default: the normal's ``3 var^2``)."""
    x = np.asarray(samples.numpy(), dtype=np.float64)
    n = x.shape[0]
    mean, var = np.broadcast_to(mean, x.shape[1:]), np.broadcast_to(var, x.shape[1:])
    np.testing.assert_array_less(np.abs(x.mean(0) - mean), Z * np.sqrt(var / n) + 1e-12)
    mu4 = 3 * var ** 2 if fourth is None else np.broadcast_to(fourth, x.shape[1:])
    se_var = np.sqrt(np.maximum(mu4 - (n - 3) / (n - 1) * var ** 2, 0) / n)
    # NOTE: + var / n: numpy's var divides by n, biased low by var / n
    np.testing.assert_array_less(np.abs(x.var(0) - var), Z * se_var + var / n + 1e-12)


def check_pmf_sums_to_one(dist, support):
    """``exp(log_prob)`` over a (truncated) support sums to 1 over dim 0."""
    total = dist.log_prob(support).exp().sum(0).numpy()
    np.testing.assert_allclose(total, 1.0, rtol=1e-6)
