"""The log-normal distribution (``torch.distributions.LogNormal``)."""
from __future__ import annotations

from .._base.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .normal import Normal

__all__ = ["LogNormal"]


class LogNormal(Distribution):
    """Distribution of ``exp(X)`` for ``X ~ Normal(loc, scale)``.

    Args:
        loc (float or Tensor): mean of the log of the distribution.
        scale (float or Tensor): standard deviation of the log, > 0.
        validate_args: see ``Distribution``.
    Departure from torch: torch builds it as ``TransformedDistribution(Normal(loc, scale),
    ExpTransform())``; ember has no transforms yet, so it is written out directly. The
    underlying normal is ``base_dist``, as in torch. ``rsample`` is ``exp(loc + scale *
    eps)``. Raises ValueError (validation) for a non-positive ``scale``.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(self.base_dist.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogNormal, _instance)
        new.base_dist = self.base_dist.expand(batch_shape)
        Distribution.__init__(new, new.base_dist.batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def sample(self, sample_shape=()):
        with no_grad():
            return self.base_dist.sample(sample_shape).exp()

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape).exp()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_value = value.log()
        return self.base_dist.log_prob(log_value) - log_value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.base_dist.cdf(value.log())

    def icdf(self, value):
        return self.base_dist.icdf(value).exp()

    def __repr__(self):
        return f"LogNormal(loc: {self.loc!r}, scale: {self.scale!r})" if self.loc.numel() == 1 \
            else f"LogNormal(loc: {self.loc.shape}, scale: {self.scale.shape})"

    def entropy(self):
        return self.base_dist.entropy() + self.loc
