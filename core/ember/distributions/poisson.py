"""The Poisson distribution (``torch.distributions.Poisson``)."""
from __future__ import annotations

import numbers

from ..ops import namespace as E
from .._base.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(Distribution):
    """Poisson distribution with rate ``rate``: ``P(k) = rate^k e^{-rate} / k!``.

    Args:
        rate (float or Tensor): the rate (mean), >= 0.
        validate_args: see ``Distribution``.
    Samples are float, of the rate's dtype, drawn by ``ember.poisson``. Raises ValueError
    (validation) for a negative rate or a value that is not a nonnegative integer.
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = () if isinstance(rate, numbers.Number) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Poisson, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return E.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return E.xlogy(value, rate) - rate - (value + 1).lgamma()
