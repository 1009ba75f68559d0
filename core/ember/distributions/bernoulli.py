"""The Bernoulli distribution (``torch.distributions.Bernoulli``)."""
from __future__ import annotations

import math
import numbers

from ember.ops import namespace as E
from ember._base.grad_mode import no_grad
from ember.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]


def _one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class Bernoulli(Distribution):
    """Bernoulli distribution: 1 with probability ``probs``, else 0.

    Args:
        probs (float or Tensor): the probability of 1, in ``[0, 1]``.
        logits (float or Tensor): the log-odds of 1 (give exactly one of the two).
        validate_args: see ``Distribution``.
    Samples are float 0/1 of the parameter's dtype. ``log_prob`` is computed from the
    logits (``-binary_cross_entropy_with_logits``), stable for extreme probabilities.
    Raises ValueError unless exactly one of ``probs``/``logits`` is given, and
    (validation) for ``probs`` outside ``[0, 1]`` or values other than 0/1.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        self._param = self.probs if probs is not None else self.logits
        batch_shape = () if isinstance(given, numbers.Number) else self._param.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(Bernoulli, batch_shape, _instance, ("probs", "logits"))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

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
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return E.where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return E.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value.to(logits.dtype),
                                                 reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = E.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
