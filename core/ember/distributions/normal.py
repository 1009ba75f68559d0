"""The normal (Gaussian) distribution (``torch.distributions.Normal``)."""
from __future__ import annotations

import math
import numbers

from ..ops import namespace as E
from .._base.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["Normal"]


class Normal(Distribution):
    """Normal distribution with mean ``loc`` and standard deviation ``scale``.

    Args:
        loc (float or Tensor): the mean.
        scale (float or Tensor): the standard deviation, > 0.
        validate_args: see ``Distribution``.
    ``loc`` and ``scale`` broadcast to ``batch_shape``; ``event_shape`` is ``()``.
    ``rsample`` is ``loc + scale * eps`` with ``eps ~ N(0, 1)``, differentiable in both.
    Raises ValueError (validation) for a non-positive ``scale``.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        both_numbers = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(() if both_numbers else self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Normal, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return E.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        return (-((value - self.loc) ** 2) / (2 * var) - self.scale.log()
                - math.log(math.sqrt(2 * math.pi)))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + E.erf((value - self.loc) * self.scale.reciprocal()
                                / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * E.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + E.log(self.scale)
