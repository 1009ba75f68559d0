"""The continuous uniform distribution (``torch.distributions.Uniform``)."""
from __future__ import annotations

import math
import numbers

from ..ops import namespace as E
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Uniform distribution on the half-open interval ``[low, high)``.

    Args:
        low (float or Tensor): lower bound (inclusive).
        high (float or Tensor): upper bound (exclusive), > ``low``.
        validate_args: see ``Distribution``.
    ``low`` and ``high`` broadcast to ``batch_shape``. ``rsample`` is ``low + u * (high -
    low)`` with ``u ~ U[0, 1)``, differentiable in both bounds. ``log_prob`` is ``-inf``
    outside the support (with validation off). Raises ValueError (validation) unless
    ``low < high``.
    """

    has_rsample = True

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        both_numbers = isinstance(low, numbers.Number) and isinstance(high, numbers.Number)
        super().__init__(() if both_numbers else self.low.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Uniform, batch_shape, _instance, ("low", "high"))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rand = E.rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = (self.low <= value).to(self.low.dtype)
        ub = (self.high > value).to(self.low.dtype)
        return E.log(lb * ub) - E.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return E.log(self.high - self.low)
