"""The geometric distribution (``torch.distributions.Geometric``)."""
from __future__ import annotations

import numbers

from ember.ops import namespace as E
from ember._base.grad_mode import no_grad
from ember.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .bernoulli import _one_of
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Geometric"]


class Geometric(Distribution):
    """The number of failures before the first success in Bernoulli trials of success
    probability ``probs``: ``P(k) = (1 - p)^k p``, ``k = 0, 1, ...``.

    Args:
        probs (float or Tensor): success probability, in ``(0, 1]``.
        logits (float or Tensor): log-odds of success (give exactly one of the two).
        validate_args: see ``Distribution``.
    Samples are float, of the parameter's dtype. Raises ValueError unless exactly one
    parameter is given, and (validation) for ``probs`` outside ``(0, 1]``.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        batch_shape = () if isinstance(given, numbers.Number) else given.shape
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive but "
                    f"found invalid values:\n{value[~valid]}")

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Geometric, batch_shape, _instance, ("probs", "logits"))

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return E.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        tiny = E.finfo(self.probs.dtype).tiny
        with no_grad():
            u = E.empty(shape, dtype=self.probs.dtype,
                        device=self.probs.device).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # NOTE: p = 1 at k = 0 would give 0 * log(0) = NaN; its mass there is 1
        probs = E.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs
