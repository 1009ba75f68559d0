"""The Dirichlet distribution (``torch.distributions.Dirichlet``)."""
from __future__ import annotations

import ember
from ember.nn.functional import one_hot
from ember.tensor import Tensor

from . import constraints
from ._samplers import standard_gamma
from .distribution import Distribution

__all__ = ["Dirichlet"]


class Dirichlet(Distribution):
    """Dirichlet distribution over the probability simplex of dimension ``K``: density
    ``prod_i x_i^(a_i - 1) / B(a)``.

    Args:
        concentration (Tensor): ``(*batch_shape, K)`` concentrations, > 0.
        validate_args: see ``Distribution``.
    ``event_shape`` is ``(K,)``. Samples normalize ``K`` gamma draws; as ``Gamma``, they
    are not reparameterized (``has_rsample = False``; a departure from torch). Raises
    ValueError for a 0-D ``concentration`` and (validation) for non-positive entries or a
    value off the simplex.
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex

    def __init__(self, concentration, validate_args=None):
        if not isinstance(concentration, Tensor):
            raise TypeError(f"Dirichlet: expected `concentration` to be a Tensor, got "
                            f"{type(concentration).__name__}")
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Dirichlet, batch_shape, _instance, ("concentration",),
                                   event_shape=self.event_shape)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        conc_m1 = (self.concentration - 1).clamp(min=0.0)
        mode = conc_m1 / conc_m1.sum(-1, keepdim=True)
        # NOTE: with every a_i < 1 the density is unbounded at every corner; torch returns
        # the first corner (its argmax over NaNs), and so does ember
        corner = one_hot(ember.zeros_like(self.concentration[..., 0], dtype=ember.int64),
                         self.event_shape[0]).to(mode.dtype)
        return ember.where((self.concentration < 1).all(-1, keepdim=True), corner, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, keepdim=True)
        return (self.concentration * (con0 - self.concentration)
                / (con0.pow(2) * (con0 + 1)))

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            g = standard_gamma(self.concentration.expand(shape))
            return (g / g.sum(-1, keepdim=True)).clamp(min=ember.finfo(g.dtype).tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (ember.xlogy(c - 1.0, value).sum(-1) + ember.lgamma(c.sum(-1))
                - ember.lgamma(c).sum(-1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return (ember.lgamma(c).sum(-1) - ember.lgamma(a0) - (k - a0) * ember.digamma(a0)
                - ((c - 1.0) * ember.digamma(c)).sum(-1))
