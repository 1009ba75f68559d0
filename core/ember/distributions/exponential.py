"""The exponential distribution (``torch.distributions.Exponential``)."""
from __future__ import annotations

import numbers

from ..ops import namespace as E
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Exponential"]


class Exponential(Distribution):
    """Exponential distribution with rate ``rate``: density ``rate * exp(-rate x)``,
    ``x >= 0``.

    Args:
        rate (float or Tensor): the rate (inverse scale), > 0.
        validate_args: see ``Distribution``.
    ``rsample`` is ``eps / rate`` with standard exponential ``eps``, differentiable in
    ``rate``. Raises ValueError (validation) for a non-positive ``rate``.
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = () if isinstance(rate, numbers.Number) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Exponential, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return E.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = E.empty(shape, dtype=self.rate.dtype, device=self.rate.device).exponential_()
        return eps / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - E.exp(-self.rate * value)

    def icdf(self, value):
        return -E.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - E.log(self.rate)
