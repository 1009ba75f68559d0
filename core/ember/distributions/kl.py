"""``kl_divergence(p, q)`` and its registry ``register_kl``
(``torch.distributions.kl``).

Implementations are looked up by the pair of types: the registered pair whose classes
are the nearest ancestors of ``type(p)`` (first) and ``type(q)`` wins, so an entry for
``(Normal, Normal)`` serves subclasses too. Closed forms below follow torch's
``kl.py`` (and the standard formulas, e.g. Penny, "KL-divergences of Normal, Gamma,
Dirichlet and Wishart densities", 2001).
"""
from __future__ import annotations

import functools
import math

from ember import linalg
from ember.ops import namespace as E
from ember.nn.functional import softplus

from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .dirichlet import Dirichlet
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .independent import Independent
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .uniform import Uniform
from .utils import _sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q) -> Tensor`` as ``kl_divergence`` for
    ``(type_p, type_q)`` (``torch.distributions.kl.register_kl``)::

        @register_kl(Normal, Normal)
        def kl_normal_normal(p, q): ...

    Raises TypeError unless both are Distribution subclasses."""
    from .distribution import Distribution
    for t in (type_p, type_q):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(f"register_kl: expected Distribution subclasses, got {t!r}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        _dispatch_kl.cache_clear()
        return fn
    return decorator


@functools.lru_cache(maxsize=None)
def _dispatch_kl(type_p, type_q):
    best, best_rank = None, None
    for (sup_p, sup_q), fn in _KL_REGISTRY.items():
        if issubclass(type_p, sup_p) and issubclass(type_q, sup_q):
            rank = (type_p.__mro__.index(sup_p), type_q.__mro__.index(sup_q))
            if best_rank is None or rank < best_rank:
                best, best_rank = fn, rank
    return best


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(x) - log q(x)], in nats, shape: the broadcast batch shape
    (``torch.distributions.kl_divergence``).

    Raises NotImplementedError naming the pair when none is registered (register one with
    ``register_kl``)."""
    fn = _dispatch_kl(type(p), type(q))
    if fn is None:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p of type {type(p).__name__} and q of type "
            f"{type(q).__name__}; register one with @register_kl({type(p).__name__}, "
            f"{type(q).__name__})")
    return fn(p, q)


def _infs_like(t):
    return E.full_like(t, math.inf)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = E.where(p.probs == 0, 0.0, E.where(q.probs == 0, math.inf, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = E.where(p.probs == 1, 0.0, E.where(q.probs == 1, math.inf, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = E.where(p.probs == 0, 0.0, E.where(q.probs == 0, math.inf, t))
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    # NOTE: infinite where p puts mass outside q's support
    return E.where((q.low > p.low) | (q.high < p.high), math.inf, result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = E.lgamma(q.concentration) - E.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * E.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = E.lgamma(q.concentration1) + E.lgamma(q.concentration0) + E.lgamma(sum_p)
    t2 = E.lgamma(p.concentration1) + E.lgamma(p.concentration0) + E.lgamma(sum_q)
    t3 = (p.concentration1 - q.concentration1) * E.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * E.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * E.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = E.lgamma(sum_p) - E.lgamma(sum_q)
    t2 = (E.lgamma(p.concentration) - E.lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = E.digamma(p.concentration) - E.digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two Multivariate Normals with different "
                         f"event shapes cannot be computed: {p.event_shape} vs "
                         f"{q.event_shape}")
    pL, qL = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = qL.diagonal(dim1=-2, dim2=-1).log().sum(-1) \
        - pL.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    n = p.event_shape[0]
    batch = tuple(E.broadcast_shapes(qL.shape[:-2], pL.shape[:-2]))
    # tr(Sq^-1 Sp) = |Lq^-1 Lp|_F^2
    term2 = linalg.solve_triangular(qL.expand(batch + (n, n)), pL.expand(batch + (n, n)),
                                    upper=False).pow(2).sum((-2, -1))
    term3 = _batch_mahalanobis(qL, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError(
            f"KL(Independent || Independent) needs equal reinterpreted_batch_ndims, got "
            f"{p.reinterpreted_batch_ndims} and {q.reinterpreted_batch_ndims}")
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist),
                          p.reinterpreted_batch_ndims)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * E.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    # Chyzak & Nielsen, "A closed-form formula for the Kullback-Leibler divergence
    # between Cauchy distributions", 2019
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return E.xlogy(p.rate, p.rate) - E.xlogy(p.rate, q.rate) - (p.rate - q.rate)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - E.log1p(-q.probs) / p.probs - q.logits


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    # NOTE: as torch, only total_count_p <= total_count_q; larger p counts are infinite
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > "
                                  "p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return E.where(p.total_count > q.total_count, math.inf, kl)
