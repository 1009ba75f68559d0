"""Student's t distribution (``torch.distributions.StudentT``)."""
from __future__ import annotations

import math

from ..ops import namespace as E
from .._base.grad_mode import no_grad
from . import constraints
from ._samplers import standard_gamma
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, location ``loc`` and scale
    ``scale``.

    Args:
        df (float or Tensor): degrees of freedom, > 0.
        loc (float or Tensor): location (default 0).
        scale (float or Tensor): scale, > 0 (default 1).
        validate_args: see ``Distribution``.
    ``mean`` is NaN for ``df <= 1``; ``variance`` is inf for ``1 < df <= 2`` and NaN for
    ``df <= 1``, as torch. Samples are ``loc + scale * X / sqrt(G / df)``, ``X ~ N(0, 1)``,
    ``G ~ Chi2(df)``; departure from torch: not reparameterized (``has_rsample = False``,
    the chi-squared draw comes from the non-reparameterized gamma sampler). Raises
    ValueError (validation) for non-positive ``df`` or ``scale``.
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(StudentT, batch_shape, _instance, ("df", "loc", "scale"))

    @property
    def mean(self):
        return E.where(self.df > 1, self.loc, math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2).clamp(min=E.finfo(df.dtype).tiny)
        return E.where(df > 2, finite, E.where(df > 1, math.inf, math.nan))

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
            chi2 = 2 * standard_gamma(0.5 * self.df.expand(shape))
            return self.loc + self.scale * x * E.rsqrt(chi2 / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + E.lgamma(0.5 * self.df) - E.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * E.log1p(y ** 2.0 / self.df) - Z

    def entropy(self):
        df = self.df
        lbeta = E.lgamma(0.5 * df) + math.lgamma(0.5) - E.lgamma(0.5 * (df + 1))
        return (self.scale.log() + 0.5 * (df + 1)
                * (E.digamma(0.5 * (df + 1)) - E.digamma(0.5 * df))
                + 0.5 * df.log() + lbeta)
