"""The gamma distribution (``torch.distributions.Gamma``)."""
from __future__ import annotations

import numbers

from ..ops import namespace as E
from .._base.grad_mode import no_grad
from . import constraints
from ._samplers import standard_gamma
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Gamma"]


class Gamma(Distribution):
    """Gamma distribution with shape ``concentration`` and ``rate``: density
    ``rate^a x^(a-1) e^(-rate x) / Gamma(a)``, ``x > 0``.

    Args:
        concentration (float or Tensor): shape ``a``, > 0.
        rate (float or Tensor): rate (inverse scale), > 0.
        validate_args: see ``Distribution``.
    Departures from torch: sampling is Marsaglia-Tsang rejection (``_samplers``) and is
    not reparameterized (``has_rsample = False``; torch differentiates Gamma draws with
    an implicit gradient ember lacks). ``cdf`` is the regularized lower incomplete gamma
    ``igamma(a, rate * x)`` (``ember.special.gammainc``), differentiable in x and rate but
    not in the concentration, as in torch. Raises ValueError (validation) for non-positive
    parameters.
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        both_numbers = (isinstance(concentration, numbers.Number)
                        and isinstance(rate, numbers.Number))
        super().__init__(() if both_numbers else self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
            return value.clamp(min=E.finfo(value.dtype).tiny)

    def log_prob(self, value):
        value = E.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (E.xlogy(self.concentration, self.rate)
                + E.xlogy(self.concentration - 1, value)
                - self.rate * value - E.lgamma(self.concentration))

    def cdf(self, value):
        value = E.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return E.igamma(self.concentration, self.rate * value)

    def entropy(self):
        c = self.concentration
        return c - E.log(self.rate) + E.lgamma(c) + (1.0 - c) * E.digamma(c)
