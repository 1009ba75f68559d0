"""The Laplace (double exponential) distribution (``torch.distributions.Laplace``)."""
from __future__ import annotations

import numbers

from ..ops import namespace as E
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Laplace distribution with location ``loc`` and scale ``scale``:
    density ``exp(-|x - loc| / scale) / (2 scale)``.

    Args:
        loc (float or Tensor): the location (mean, median, mode).
        scale (float or Tensor): the scale, > 0.
        validate_args: see ``Distribution``.
    ``rsample`` inverts the CDF at ``u ~ U(eps - 1, 1)``, differentiable in ``loc`` and
    ``scale``. Raises ValueError (validation) for a non-positive ``scale``.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        both_numbers = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(() if both_numbers else self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Laplace, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = E.finfo(self.loc.dtype).eps
        # NOTE: u > -1 strictly, so log1p(-|u|) stays finite
        u = E.empty(shape, dtype=self.loc.dtype, device=self.loc.device).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * E.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -E.log(2 * self.scale) - E.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * E.expm1(-z.abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * E.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + E.log(2 * self.scale)
