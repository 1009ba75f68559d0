"""``ember.distributions``: parametrized probability distributions and sampling functions,
mirroring ``torch.distributions``.

Every distribution is a composite of ember ops, so ``log_prob``, ``entropy``, ``cdf`` and
(where ``has_rsample``) ``rsample`` are differentiable by autograd in their parameters.
Validation is on by default (``Distribution.set_default_validate_args``). Sampling draws
from ember's default generators: ``ember.manual_seed`` repeats it; the streams differ from
torch's.

Departures from torch, each documented on its class: ``LogNormal`` is written directly
(no ``TransformedDistribution``/transforms yet); ``Gamma``, ``Beta``, ``Dirichlet`` and
``StudentT`` sample without reparameterization (``has_rsample = False``); ``Gamma.cdf``
is missing.

Layout, as torch: one module per family (``normal.py``, ``categorical.py``, ...), the
base class in ``distribution.py``, ``constraints.py``, ``utils.py`` and ``kl.py``.
"""
from . import constraints
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .studentT import StudentT
from .uniform import Uniform

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Dirichlet", "Distribution",
    "Exponential", "Gamma", "Geometric", "Independent", "Laplace", "LogNormal",
    "MultivariateNormal", "Normal", "OneHotCategorical", "Poisson", "StudentT", "Uniform",
    "constraints", "kl_divergence", "register_kl",
]
