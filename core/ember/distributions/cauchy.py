"""The Cauchy (Lorentz) distribution (``torch.distributions.Cauchy``)."""
from __future__ import annotations

import math
import numbers

from ..ops import namespace as E
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """Cauchy distribution with median ``loc`` and half width at half maximum ``scale``:
    density ``1 / (pi scale (1 + ((x - loc) / scale)^2))``.

    Args:
        loc (float or Tensor): the median (and mode).
        scale (float or Tensor): the half width at half maximum, > 0.
        validate_args: see ``Distribution``.
    The mean is undefined (NaN) and the variance infinite, as torch. ``rsample`` is
    ``loc + scale * eps`` with standard Cauchy ``eps``. Raises ValueError (validation) for
    a non-positive ``scale``.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        both_numbers = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(() if both_numbers else self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Cauchy, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return E.full(self._extended_shape(), math.nan, dtype=self.loc.dtype,
                      device=self.loc.device)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return E.full(self._extended_shape(), math.inf, dtype=self.loc.dtype,
                      device=self.loc.device)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = E.empty(shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return E.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return E.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
