"""float32 ``erfc`` and ``ndtr`` in one branch-free pass sequence, written once against
``xp``.

Both take Numerical Recipes' erfcc (Press et al., 2nd ed., 6.2, a Chebyshev fit, relative
error < 1.2e-7 for every y >= 0) for the whole range: erfc(y) = t exp(N(t)) exp(-y^2),
t = 2 / (2 + y), so no element is gathered into a branch of its own (``special.erfc_flat``
splits Cody's intervals with ``nonzero`` gathers and scatters, which cost more than the
arithmetic at 1e6 elements). exp(-y^2) never rounds y^2: y^2 = h^2 + l with h = y
truncated to 1/16 (h^2 exact), exp(-h^2) apart and ``l`` folded into exp(N(t) - l), whose
argument stays in [-3, 1]. ndtr(x) = erfc(-x / sqrt 2) / 2 takes the split of x^2 / 2 from
x itself (rounding x / sqrt 2 would cost x^2 ulps in the exponent); x < 0 of erfc and
x > 0 of ndtr use erfc(-y) = 2 - erfc(y).

Error measured against scipy's float64 ``erfc`` / ``ndtr`` (< 1e-15 relative) over every
257th float32 of the range, in float32 ulps of the exact result
(``tests/core/backends/kernels/test_special_erfc32.py``):

* erfc: 7 ulp (6.55 measured) on [-4, 10.05] (it is 2 below -3.9 and underflows to 0 at
  10.06), 1 subnormal ulp in the subnormals; ``special.erfc_flat``: 6.7.
* ndtr: 7 ulp (6.22 measured) on [-20, 20]; ``special_stats.ndtr_flat``: 7.

Special values: erfc(-inf) = 2, erfc(inf) = 0, ndtr(-inf) = 0, ndtr(inf) = 1, NaN stays;
-0.0 gives erfc 1 and ndtr 0.5. Arrays are processed in blocks on ember's threads
(``pointwise_float32.blocked``).
"""
from __future__ import annotations

from .pointwise_float32 import blocked

# Numerical Recipes' erfcc N(t) rewritten in v = 1 - t = y / (2 + y) (highest power first;
# the same polynomial): near y = 0 its terms no longer cancel to N(1) ~ 3e-8 in float32
# (~9 ulp of erfc there with the powers of t)
_NR_V = (-0.17087277000000001, 0.71570269999999991, -1.0627177499999991,
         0.61745735000000046, -0.21592159999999794, 0.2573609599999962,
         0.15292370999999427, -0.30267230999999839, -1.25677255,
         3.0000000150742778e-08)
_SQRT1_2 = 0.70710678118654752440
_ERFC_CAP = 11.0   # exp(-121) is 0 in float32: erfc is exactly 0 past it
_NDTR_CAP = 16.0   # exp(-128) is 0 in float32


def _tail(xp, y, h, sq_lo, sq_hi_scale):
    """erfc(y) for y >= 0 (float32, capped), given h and sq_lo with y^2 (or, for ndtr,
    x^2 / 2) = sq_hi_scale h^2 + sq_lo, h^2 exact. Consumes ``h`` and ``sq_lo``."""
    q = y + 2.0
    xp.reciprocal(q, out=q)
    v = y * q
    p = v * _NR_V[0]
    p += _NR_V[1]
    for c in _NR_V[2:]:
        p *= v
        p += c
    q *= 2.0  # t
    t = q
    p -= sq_lo
    xp.exp(p, out=p)
    p *= t
    h *= h
    h *= -sq_hi_scale
    xp.exp(h, out=h)
    p *= h
    return p


# NOTE: the kernels below select with float 0/1 (or 0/2) masks and clip with both bounds:
# numpy's ``copyto(where=)`` on a random mask and ``minimum`` against a scalar run slow
# loops (~40x and ~4x a multiply).
def _erfc(xp, x):
    y = xp.abs(x)
    xp.clip(y, 0.0, _ERFC_CAP, out=y)  # NaN stays
    h = y * 16.0
    xp.trunc(h, out=h)
    h *= 0.0625
    lo = y - h
    lo *= y + h
    r = _tail(xp, y, h, lo, 1.0)
    # x < 0: erfc(x) = 2 - r = r + 2 (1 - r)
    d = 1.0 - r
    d *= (x < 0) * xp.float32(2.0)
    r += d
    return r


def _ndtr(xp, x):
    a = xp.abs(x)
    xp.clip(a, 0.0, _NDTR_CAP, out=a)
    h = a * 16.0
    xp.trunc(h, out=h)
    h *= 0.0625
    lo = a - h
    lo *= a + h
    lo *= 0.5
    a *= _SQRT1_2
    r = _tail(xp, a, h, lo, 0.5)
    # x > 0: ndtr(x) = 1 - r / 2 = r / 2 + (1 - r)
    d = 1.0 - r
    d *= (x > 0).astype(xp.float32)
    r *= 0.5
    r += d
    return r


def erfc(xp, x):
    """erfc of a float32 array (any shape), a new float32 array."""
    return blocked(xp, _erfc, x)


def ndtr(xp, x):
    """The standard normal CDF of a float32 array (any shape), a new float32 array."""
    return blocked(xp, _ndtr, x)
