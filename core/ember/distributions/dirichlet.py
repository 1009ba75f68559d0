"""The Dirichlet distribution (``torch.distributions.Dirichlet``)."""
from __future__ import annotations

from ember.ops import namespace as E
from ember._base.grad_mode import no_grad
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
        corner = one_hot(E.zeros_like(self.concentration[..., 0], dtype=E.int64),
                         self.event_shape[0]).to(mode.dtype)
        return E.where((self.concentration < 1).all(-1, keepdim=True), corner, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, keepdim=True)
        return (self.concentration * (con0 - self.concentration)
                / (con0.pow(2) * (con0 + 1)))

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            g = standard_gamma(self.concentration.expand(shape))
            return (g / g.sum(-1, keepdim=True)).clamp(min=E.finfo(g.dtype).tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (E.xlogy(c - 1.0, value).sum(-1) + E.lgamma(c.sum(-1))
                - E.lgamma(c).sum(-1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return (E.lgamma(c).sum(-1) - E.lgamma(a0) - (k - a0) * E.digamma(a0)
                - ((c - 1.0) * E.digamma(c)).sum(-1))
