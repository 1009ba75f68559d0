"""The binomial distribution (``torch.distributions.Binomial``)."""
from __future__ import annotations

from ..ops import namespace as E
from .._base.grad_mode import no_grad
from . import constraints
from ._samplers import binomial
from .bernoulli import _one_of
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    # max(x, 0) whose gradient at 0 is 1/2, as torch's
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    """The number of successes in ``total_count`` Bernoulli trials of success probability
    ``probs``.

    Args:
        total_count (int or Tensor): number of trials, a nonnegative integer (default 1).
        probs (float or Tensor): success probability, in ``[0, 1]``.
        logits (float or Tensor): log-odds of success (give exactly one of the two).
        validate_args: see ``Distribution``.
    All three broadcast to ``batch_shape``; samples are float, of the parameter's dtype,
    drawn by beta splitting (``_samplers.binomial``; torch uses BTRS: same distribution,
    different stream). ``entropy``/``enumerate_support`` need one ``total_count`` across
    the batch (NotImplementedError otherwise, as torch). Raises ValueError unless exactly
    one of ``probs``/``logits`` is given, and (validation) for a negative or fractional
    ``total_count`` or ``probs`` outside ``[0, 1]``.
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(Binomial, batch_shape, _instance,
                                  ("total_count", "probs", "logits"))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_factorial_n = E.lgamma(n + 1)
        log_factorial_k = E.lgamma(value + 1)
        log_factorial_nmk = E.lgamma(n - value + 1)
        # n * log(1 + e^logits), stable for logits of either sign
        normalize_term = (n * _clamp_by_zero(logits)
                          + n * E.log1p(E.exp(-E.abs(logits))) - log_factorial_n)
        return value * logits - log_factorial_k - log_factorial_nmk - normalize_term

    def _homogeneous_count(self, what):
        total = int(self.total_count.max())
        if int(self.total_count.min()) != total:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(E.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total = self._homogeneous_count("enumerate_support")
        values = E.arange(1 + total, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
