"""The Airy function Ai (``special_airy_ai``), the solution of y'' = x y that decays as
x -> inf.

For |x| <= 10.5, the Taylor
series about the nearest integer x0 (|x - x0| <= 1/2, 22 terms; 16 for float32 and
narrower results, truncation < 1.2e-10 of the envelope), whose coefficients follow
from the equation itself: c_{k+2} = (x0 c_k + c_{k-1}) / ((k + 2)(k + 1)), starting from
Ai(x0) and Ai'(x0) below (computed with mpmath's airyai at 40 digits and rounded to
float64). Beyond, the asymptotic expansions A&S 10.4.59 (x > 0) and 10.4.60 (x < 0) with 25
terms (8 for float32 and narrower results, truncation < 5e-11) in zeta = 2/3 |x|^(3/2)
>= 22. Measured against mpmath (40 digits) at 3,000 points of
[-1e4, 100]: relative error < 2e-13 on [-2.3, 100] (left of Ai's first zero), and on the
oscillating side an absolute error < 1e-13 of the envelope |x|^(-1/4) / sqrt(pi) on
[-100, -2.3] (1.3e-10 at -1e4). Both are ~ulp(zeta): the rounding of x itself moves
exp(-zeta) and the phase by that much, in any float64 method.

Each method runs only on its own elements. float64 inputs are computed in float64;
float32 (float16/bfloat16 in float32, rounded once) runs the Taylor series in float32 on
[-10.5, 6.5) and float64 elsewhere (see ``airy_ai_flat``: < 7 float32 ulps of
max(|Ai|, envelope)).

Departure from PyTorch (Cephes), which gives NaN at +-inf: Ai(+-inf) = 0, its limit.
"""
from __future__ import annotations

import math

from .special import by_precision, subset
from .special_blocked import blocked
from .special_math import _quiet

# Ai(k) and Ai'(k) for k = -10 .. 10
_AI = (0.04024123848644319, -0.022133721547341403, -0.0527050503563862, 0.18428083525050565,
       -0.3291451736298231, 0.35076100902411433, -0.07026553294928951, -0.37881429367765806,
       0.22740742820168558, 0.5355608832923521, 0.3550280538878172, 0.13529241631288141,
       0.03492413042327438, 0.006591139357460719, 0.0009515638512048018,
       0.00010834442813607442, 9.947694360252889e-06, 7.492128863997167e-07,
       4.6922076160992316e-08, 2.47116843087249e-09, 1.1047532552898686e-10)
_DAI = (0.99626504413279, -0.9756639809263316, 0.9355609381983065, -0.7710081684101265,
        0.3459354872813429, 0.32719281855444315, -0.7906285753685813, 0.3145837692165988,
        0.618259020741691, -0.01016056711664521, -0.2588194037928068, -0.1591474412967932,
        -0.05309038443365363, -0.011912976705951319, -0.001958640950204179,
        -0.0002474138908684625, -2.4765200397034955e-05, -2.008150894738792e-06,
        -1.3414392979067865e-07, -7.480641389658946e-09, -3.5206336767389237e-10)
# terms by result dtype: truncation < 3e-19 (float64) / 1.2e-10 (float32 and narrower) of
# the envelope on the Taylor range, < 1e-16 / 5e-11 on the asymptotic one
_TAYLOR_TERMS = {8: 20, 4: 14}  # past c0 + c1 d
_ASYMPTOTIC_TERMS = {8: 25, 4: 8}


def _u_coefficients(n):
    """A&S 10.4.58's u_k, k < n: u_k = u_{k-1} (6k-5)(6k-3)(6k-1) / (216 k (2k-1))."""
    u = [1.0]
    for k in range(1, n):
        u.append(u[-1] * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / (216.0 * k * (2 * k - 1)))
    return u


_U = _u_coefficients(_ASYMPTOTIC_TERMS[8])


def _taylor(xp, x, terms):
    x0 = xp.clip(xp.round(x), -10.0, 10.0)
    idx = (x0 + 10.0).astype(xp.int64)
    c_prev = xp.zeros_like(x)                       # c_{k-1}
    c0 = xp.asarray(_AI, dtype=x.dtype)[idx]        # c_k
    c1 = xp.asarray(_DAI, dtype=x.dtype)[idx]       # c_{k+1}
    d = x - x0
    total = c0 + c1 * d
    dk = d
    for k in range(terms):
        c2 = (x0 * c0 + c_prev) / ((k + 2) * (k + 1))
        dk = dk * d
        total = total + c2 * dk
        c_prev, c0, c1 = c0, c1, c2
    return total


def _asymptotic(xp, x, terms):
    z = xp.abs(x)
    zeta = (2.0 / 3.0) * z * xp.sqrt(z)
    inv = 1.0 / zeta
    pos = xp.zeros_like(x)
    even, odd = xp.zeros_like(x), xp.zeros_like(x)
    for k in reversed(range(terms)):
        pos = pos * -inv + _U[k]
    for k in reversed(range(0, terms, 2)):
        even = even * -(inv * inv) + _U[k]
    for k in reversed(range(1, terms, 2)):
        odd = odd * -(inv * inv) + _U[k]
    odd = odd * inv
    amp = 1.0 / (math.sqrt(math.pi) * xp.sqrt(xp.sqrt(z)))
    right = 0.5 * amp * xp.exp(-zeta) * pos
    s, c = xp.sin(zeta), xp.cos(zeta)
    # sin(zeta + pi/4) and cos(zeta + pi/4) without rounding zeta + pi/4
    left = amp * math.sqrt(0.5) * ((s + c) * even - (c - s) * odd)
    return xp.where(x > 0, right, left)


def airy_ai_flat(xp, x):
    """Ai(x) of a 1-d float32/float64 array in its dtype (see the module docstring), each
    method on its own elements; 0 at +-inf. float32: the Taylor series in float32 on
    [-10.5, 6.5) (its terms stay below the envelope there, so the rounding is a few ulps
    of it: < 7 float32 ulps of max(|Ai|, envelope) against float64), in float64 on
    [6.5, 10.5] (where the alternating terms grow past Ai) and on the asymptotic range,
    whose phase zeta = 2/3 |x|^(3/2) float32 could not hold."""
    size = x.dtype.itemsize
    with _quiet(xp):
        r = xp.empty_like(x)
        near = subset(xp, (x >= -10.5) & (x < 6.5))
        r[near] = _taylor(xp, x[near], _TAYLOR_TERMS[size])
        mid = subset(xp, (x >= 6.5) & (x <= 10.5))  # float32's rounding grows past 6.5
        r[mid] = _taylor(xp, x[mid].astype(xp.float64), _TAYLOR_TERMS[size])
        far = subset(xp, xp.abs(x) > 10.5)  # not NaN
        xf = x[far].astype(xp.float64)
        r[far] = _asymptotic(xp, xp.where(xp.isinf(xf), 20.0, xf), _ASYMPTOTIC_TERMS[size])
        # NOTE: the limit 0 where zeta = 2/3 |x|^1.5 overflows (x < -2.3e205): sin(zeta)
        # would be NaN, and the envelope |x|^(-1/4) / sqrt(pi) is below 1e-51 there
        r[subset(xp, xp.isinf(x) | (x < -1e205))] = 0.0
        nan = subset(xp, xp.isnan(x))
        r[nan] = x[nan]
    return r


def airy_ai64(xp, x):
    """Ai(x) of a float64 array of any shape."""
    return airy_ai_flat(xp, x.reshape(-1)).reshape(x.shape)


def kernels(xp) -> dict:
    run = blocked(xp, lambda x: airy_ai_flat(xp, x))
    return {"special_airy_ai": by_precision(xp, run, run)}
