"""The categorical distribution (``torch.distributions.Categorical``)."""
from __future__ import annotations

import math

from ember.ops import namespace as E
from ember._base.grad_mode import no_grad
from ember.tensor import Tensor

from . import constraints
from .bernoulli import _one_of
from .distribution import Distribution
from .utils import _size, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


def _need_vector(name, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"expected `{name}` to be a Tensor, got {type(value).__name__}")
    if value.dim() < 1:
        raise ValueError(f"`{name}` parameter must be at least one-dimensional.")


class Categorical(Distribution):
    """Categorical distribution over ``{0, ..., K-1}``.

    Args:
        probs (Tensor): ``(*batch_shape, K)`` nonnegative event weights (normalized over
            the last dim).
        logits (Tensor): ``(*batch_shape, K)`` unnormalized log-probabilities (give
            exactly one of the two).
        validate_args: see ``Distribution``.
    Samples are int64 of shape ``sample_shape + batch_shape``; ``mean``/``variance`` are
    NaN as torch. Raises ValueError unless exactly one parameter is given or if it is 0-D;
    (validation) for probabilities that are not a simplex after normalization, or values
    outside ``{0, ..., K-1}``.
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            _need_vector("probs", probs)
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            _need_vector("logits", logits)
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.shape[:-1] if self._param.dim() > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(Categorical, batch_shape, _instance, ("probs", "logits"),
                                  event_shape=(self._num_events,))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        new._num_events = self._num_events
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self):
        return E.full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                      device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return E.full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                      device=self.probs.device)

    def sample(self, sample_shape=()):
        sample_shape = _size((sample_shape,) if isinstance(sample_shape, int) else sample_shape)
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = E.multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = E.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        # NOTE: clamping keeps 0 * -inf (a zero probability) at 0 rather than NaN
        logits = self.logits.clamp(min=E.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = E.arange(self._num_events, dtype=E.int64, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
