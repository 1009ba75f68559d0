"""The beta distribution (``torch.distributions.Beta``)."""
from __future__ import annotations

import numbers

from ..ops import namespace as E
from .._base.grad_mode import no_grad
from . import constraints
from ._samplers import standard_gamma
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Beta"]


class Beta(Distribution):
    """Beta distribution on ``[0, 1]``: density ``x^(c1-1) (1-x)^(c0-1) / B(c1, c0)``.

    Args:
        concentration1 (float or Tensor): ``alpha`` (pseudo-count of ones), > 0.
        concentration0 (float or Tensor): ``beta`` (pseudo-count of zeros), > 0.
        validate_args: see ``Distribution``.
    Departure from torch: torch builds Beta on a 2-category ``Dirichlet`` and
    reparameterizes it; ember writes it out directly and samples ``G1 / (G1 + G0)`` from
    two non-reparameterized gamma draws (``has_rsample = False``, see ``Gamma``). Raises
    ValueError (validation) for non-positive concentrations.
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        both_numbers = (isinstance(concentration1, numbers.Number)
                        and isinstance(concentration0, numbers.Number))
        super().__init__(() if both_numbers else self.concentration1.shape,
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Beta, batch_shape, _instance,
                                   ("concentration1", "concentration0"))

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        m1 = (self.concentration1 - 1).clamp(min=0)
        m0 = (self.concentration0 - 1).clamp(min=0)
        # NOTE: both concentrations < 1 put the peaks at 0 and 1; torch picks 1 (see Dirichlet)
        both_below_one = (self.concentration1 < 1) & (self.concentration0 < 1)
        return E.where(both_below_one, 1.0, m1 / (m1 + m0))

    @property
    def variance(self):
        c1, c0 = self.concentration1, self.concentration0
        total = c1 + c0
        return c1 * c0 / (total.pow(2) * (total + 1))

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            g1 = standard_gamma(self.concentration1.expand(shape))
            g0 = standard_gamma(self.concentration0.expand(shape))
            tiny = E.finfo(g1.dtype).tiny
            return (g1 / (g1 + g0)).clamp(min=tiny, max=1 - E.finfo(g1.dtype).eps)

    def _log_normalizer(self):
        c1, c0 = self.concentration1, self.concentration0
        return E.lgamma(c1) + E.lgamma(c0) - E.lgamma(c1 + c0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c1, c0 = self.concentration1, self.concentration0
        return E.xlogy(c1 - 1, value) + E.xlogy(c0 - 1, 1 - value) - self._log_normalizer()

    def entropy(self):
        c1, c0 = self.concentration1, self.concentration0
        total = c1 + c0
        return (self._log_normalizer() - (c1 - 1) * E.digamma(c1)
                - (c0 - 1) * E.digamma(c0) + (total - 2) * E.digamma(total))
