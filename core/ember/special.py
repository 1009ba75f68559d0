"""``ember.special``: PyTorch's ``torch.special`` under its short names.

Every function is an ember op, so autograd, ``out=`` and tracing work as for any other:

* the new native ops, declared as ``special_<name>`` (and ``igamma``/``igammac``) in the
  ``torch.special`` section of ``ops/native_functions.yaml``, with kernels by concept in
  ``backends/kernels/``: ``special_stats`` (entr, xlog1py, ndtr, ndtri, log_ndtr, erfcx),
  ``special_gamma`` (gammainc, gammaincc, zeta), ``special_bessel`` (bessel_j0/j1/y0/y1,
  i0e, i1e, modified_bessel_k0/k1 and their scaled forms, spherical_bessel_j0),
  ``special_airy`` (airy_ai) and ``special_polynomials`` (the Chebyshev, Hermite, Laguerre
  and Legendre polynomials); each module's docstring gives its method and the accuracy
  measured against mpmath;
* ``multigammaln``, the composite ``ember.mvlgamma`` (registered here);
* aliases of existing ops (``expit`` is ``ember.sigmoid``, ``gammaln`` is ``ember.lgamma``,
  ``psi`` and ``digamma`` are ``ember.digamma``, ``i1`` is ``ember.special_i1``, ...).

Dtypes: integral and bool inputs give the default float dtype; float32 runs float32
algorithms where the kernel's docstring states their error (the Bessel, normal-distribution
and erf families, entr, airy_ai, polygamma(1), the polynomials of a number degree), float64
elsewhere; float16 and bfloat16 are computed in the float32 path and rounded once.
Derivatives are PyTorch's; where PyTorch has none
(the Bessel functions, airy_ai, the polynomials) the results do not require grad, and the
derivatives PyTorch leaves unimplemented (zeta in x, gammainc/gammaincc in a) raise
NotImplementedError when backward reaches them.

Departures from PyTorch: ``modified_bessel_i0``/``i1`` are ``ember.i0``/``special_i1``,
so they are differentiable (PyTorch's are not); Bessel J/Y and airy_ai give their limits
(0) at +-inf where PyTorch gives NaN; float16/bfloat16 and integer operands are accepted
where PyTorch refuses them (gammainc on integers, zeta, the polynomials and log_ndtr on
float16); the polynomials given two numbers return a 0-d tensor (PyTorch raises
TypeError).

    >>> x = ember.tensor([0.5, 1.0, 2.0])
    >>> ember.special.ndtr(x)                       # the standard normal CDF
    >>> ember.special.gammainc(ember.tensor(2.0), x)
    >>> ember.special.chebyshev_polynomial_t(x, 3)  # T_3(x) = 4x^3 - 3x
"""
from __future__ import annotations

import math

from .ops import namespace as E
from .ops.composite import composite

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc",
    "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e",
    "i1", "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr",
    "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma",
    "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax",
    "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]


@composite("mvlgamma")
def _mvlgamma(self, p):
    if p < 1:
        raise RuntimeError(f"mvlgamma(): p has to be greater than or equal to 1, got p = {p}; "
                           f"p is the dimension of the multivariate gamma function")
    x = self if self.is_floating_point() else self.to(E.get_default_dtype())
    # sum of lgamma(x - j/2) for j = p-1, ..., 0, in PyTorch's order (its arange(-p/2 + 0.5,
    # 0.5, 0.5) summed over a new last dim); p calls on x's shape, no (..., p) temporary
    total = (x - (p - 1) / 2).lgamma() if p > 1 else x.lgamma()
    for j in range(p - 2, -1, -1):
        total = total + (x - j / 2 if j else x).lgamma()
    return total + p * (p - 1) / 4 * math.log(math.pi)


# ==== aliases of existing ops ===================================================================
digamma = psi = E.digamma
erf = E.erf
erfc = E.erfc
erfinv = E.erfinv
exp2 = E.exp2
expit = E.sigmoid
expm1 = E.expm1
gammaln = E.lgamma
i0 = modified_bessel_i0 = E.i0
i1 = modified_bessel_i1 = E.special_i1
log1p = E.log1p
log_softmax = E.log_softmax
logit = E.logit
logsumexp = E.logsumexp
multigammaln = E.mvlgamma
polygamma = E.polygamma
round = E.round  # noqa: A001 - torch.special.round
sinc = E.sinc
softmax = E.softmax
xlogy = E.xlogy

# ==== native ops of the torch.special section ===================================================
entr = E.special_entr
xlog1py = E.special_xlog1py
ndtr = E.special_ndtr
ndtri = E.special_ndtri
log_ndtr = E.special_log_ndtr
erfcx = E.special_erfcx
gammainc = E.igamma
gammaincc = E.igammac
zeta = E.special_zeta
i0e = E.special_i0e
i1e = E.special_i1e
bessel_j0 = E.special_bessel_j0
bessel_j1 = E.special_bessel_j1
bessel_y0 = E.special_bessel_y0
bessel_y1 = E.special_bessel_y1
modified_bessel_k0 = E.special_modified_bessel_k0
modified_bessel_k1 = E.special_modified_bessel_k1
scaled_modified_bessel_k0 = E.special_scaled_modified_bessel_k0
scaled_modified_bessel_k1 = E.special_scaled_modified_bessel_k1
spherical_bessel_j0 = E.special_spherical_bessel_j0
airy_ai = E.special_airy_ai
chebyshev_polynomial_t = E.special_chebyshev_polynomial_t
chebyshev_polynomial_u = E.special_chebyshev_polynomial_u
chebyshev_polynomial_v = E.special_chebyshev_polynomial_v
chebyshev_polynomial_w = E.special_chebyshev_polynomial_w
shifted_chebyshev_polynomial_t = E.special_shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u = E.special_shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v = E.special_shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w = E.special_shifted_chebyshev_polynomial_w
hermite_polynomial_h = E.special_hermite_polynomial_h
hermite_polynomial_he = E.special_hermite_polynomial_he
laguerre_polynomial_l = E.special_laguerre_polynomial_l
legendre_polynomial_p = E.special_legendre_polynomial_p
