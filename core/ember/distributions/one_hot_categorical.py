"""The one-hot categorical distribution (``torch.distributions.OneHotCategorical``)."""
from __future__ import annotations

from ember.ops import namespace as E
from ember.nn.functional import one_hot

from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical"]


class OneHotCategorical(Distribution):
    """A ``Categorical`` whose draws are one-hot vectors of length ``K``.

    Args:
        probs (Tensor): ``(*batch_shape, K)`` event weights, or
        logits (Tensor): ``(*batch_shape, K)`` unnormalized log-probabilities.
        validate_args: see ``Distribution``.
    ``event_shape`` is ``(K,)``; samples are of the parameter's dtype. Raises as
    ``Categorical``, and (validation) ValueError for a value that is not one-hot.
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, new._categorical.batch_shape, self.event_shape,
                              validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return one_hot(probs.argmax(dim=-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=()):
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, probs.shape[-1]).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = E.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values
