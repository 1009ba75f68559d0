"""float32 kernels of the elementary functions that numpy runs as scalar libm loops.

numpy vectorizes float32 ``exp``, ``log``, ``sin``, ``cos``, ``tanh`` and ``sqrt`` (SIMD,
within ~1-3 ulp), but its float32 ``expm1``, ``log1p``, ``sinh``, ``cosh``, ``tan``,
``arcsin``, ``arccos``, ``arctan``, ``arctanh``, ``arctan2`` and ``logaddexp(2)`` call
libm once per element, 10-30x slower (``arccos`` stays: Cephes' acosf, ~40 passes, measured
no faster). The kernels here rewrite those through the fast
ones and a few arithmetic passes, each written once against ``xp`` (numpy or CuPy).
Piecewise formulas select with float 0/1 masks (``m * u + (1 - m) * v`` is exact for
finite u, v): numpy's ``where`` branches per element, ~10 passes' cost on a random mask.

Each function takes and returns float32 arrays of one shape (the tables in
``pointwise.py``, ``pointwise_binary.py`` and ``special.py`` route float16/bfloat16
through float32 and round once, and keep numpy's ufunc for float64 and below each
function's ``min_size``). Error bounds,
measured against the float64 functions (numpy, correctly rounded to ~0.5 ulp) over every
float32 of the stated range (``tests/core/backends/kernels/test_pointwise_float32.py``),
in float32 ulps of the exact result:

==========  ====================================  ==============================
function    method                                max error (measured)
==========  ====================================  ==============================
expm1       Kahan: (u - 1) x / log(u), u = e^x     4.5 ulp (4.05)
log1p       Goldberg: log(u) x / (u - 1), u = 1+x  4 ulp (3.81)
sinh        x P(x^2) (Taylor) below 1; (e - 1/e)/2 3 ulp (2.81)
cosh        (e + 1/e) / 2                          3 ulp (2.81)
tan         sin / cos                              3 ulp (2.78)
asin        Cephes asinf (Moshier)                 3 ulp (2.13)
atan        Cephes atanf (Moshier)                 3 ulp (2.70)
atanh       log1p(2|x| / (1 - |x|)) / 2            4.5 ulp (4.01)
atan2       atan(y / x) +- pi                      3.5 ulp (3.16)
logaddexp   max + log1p(exp(-|a - b|)) (numpy's)   3.5 ulp of max(|a|, |b|, |r|)
logaddexp2  max + log1p(exp2(-|a - b|)) / ln 2     3.5 ulp of max(|a|, |b|, |r|)
==========  ====================================  ==============================

Special values follow C99 Annex F (inf, NaN, -0.0 kept; a domain error gives NaN).
Reference: S. L. Moshier, Cephes Math Library (``asinf.c``, ``atanf.c``); D. Goldberg,
"What every computer scientist should know about floating-point arithmetic" (1991),
Theorem 4 (log1p); W. Kahan's expm1 from log (ibid., and Higham, Accuracy and Stability
of Numerical Algorithms, 1.14.1).
"""
from __future__ import annotations

import math

import numpy as np  # only to tell numpy from CuPy (blocks are a numpy concern)

from ember import parallel

_PI_2 = math.pi / 2
_PI_4 = math.pi / 4
# exp(|x|) overflows float32 past 88.72, sinh and cosh only past 89.42
_EXP_SAFE = 88.5


def _horner(xp, coeffs, z):
    """coeffs[0] z^n + ... + coeffs[n], in z's dtype, one temporary."""
    p = z * coeffs[0]
    p += coeffs[1]
    for c in coeffs[2:]:
        p *= z
        p += c
    return p


def _as_mask(xp, cond):
    """A bool array as float32 0/1 (for exact arithmetic selects)."""
    return cond.astype(xp.float32)


def expm1(xp, x):
    """e^x - 1 of float32 ``x`` (Kahan: (u - 1) x / log(u), u = e^x; exact where u == 1)."""
    # below -18, e^x is under half an ulp of 1: the result rounds to -1 (and log(u) of a
    # subnormal u would lose the ratio's precision)
    x = xp.maximum(x, -18.0)
    u = xp.exp(x)
    d = u - 1
    r = xp.log(u)
    xp.divide(x, r, out=r)
    r *= d
    # u == 1 (0/0) and u == inf (inf * 0): the result is x where d == 0, else d
    bad = xp.isnan(r)
    if bad.any():
        r = xp.where(bad, xp.where(d == 0, x, d), r)
    return r


def log1p(xp, x):
    """log(1 + x) of float32 ``x`` (Goldberg: log(u) x / (u - 1), u = 1 + x; x where
    u == 1)."""
    u = x + 1
    r = xp.log(u)
    u -= 1
    xp.divide(x, u, out=u)
    u *= r
    # 0/0 where 1 + x rounds to 1, inf/inf at x = inf: x itself; NaN of log stays NaN
    bad = xp.isnan(u)
    if bad.any():
        u = xp.where(bad & ~xp.isnan(r), x, u)
    return u


# sinh(x) / x = 1 + x^2/3! + ... + x^10/11!: the next term is below 1.6e-10 for |x| < 1
_SINH_TAYLOR = tuple(1.0 / math.factorial(k) for k in (11, 9, 7, 5, 3, 1))


def _exp_half_squared(xp, a):
    """e^a / 2 for a in [88.5, 89.5], without the overflow of e^a: (e^(a/2) / 2) e^(a/2)."""
    h = xp.exp(a * 0.5)
    r = h * 0.5
    r *= h
    return r


def sinh(xp, x):
    """sinh of float32 ``x``: a Taylor polynomial below |x| = 1, (e - 1/e) / 2 above."""
    a = xp.abs(x)
    ac = xp.minimum(a, 1.0)  # the polynomial's side stays finite (it is masked out above 1)
    a2 = ac * ac
    small = _horner(xp, _SINH_TAYLOR, a2)
    small *= ac
    e = xp.exp(a)
    big = xp.reciprocal(e)
    xp.subtract(e, big, out=big)
    big *= 0.5
    m = _as_mask(xp, a < 1)
    small *= m
    xp.subtract(1, m, out=m)
    big *= m  # e and 1/e are finite where m is 0
    big += small
    huge = a > _EXP_SAFE
    if huge.any():
        big = xp.where(huge, _exp_half_squared(xp, a), big)
    return xp.copysign(big, x, out=big)


def cosh(xp, x):
    """cosh of float32 ``x``: (e + 1/e) / 2, e = e^|x|."""
    a = xp.abs(x)
    e = xp.exp(a)
    r = xp.reciprocal(e)
    r += e
    r *= 0.5
    huge = a > _EXP_SAFE
    if huge.any():
        r = xp.where(huge, _exp_half_squared(xp, a), r)
    return r


def tan(xp, x):
    """tan of float32 ``x`` as sin(x) / cos(x) (numpy's SIMD sin and cos, each < 1.5 ulp,
    reduce the argument with pi/2 in three parts: no loss near the poles)."""
    r = xp.sin(x)
    return xp.divide(r, xp.cos(x), out=r)


# Cephes asinf: asin(s) = s + s z P(z), z = s^2, for 0 <= s <= 0.5
_ASIN_P = (4.2163199048e-2, 2.4181311049e-2, 4.5470025998e-2, 7.4953002686e-2,
           1.6666752422e-1)


def _asin_parts(xp, x):
    """(p, m) of float32 ``x``: m = 1.0 where |x| > 0.5 else 0.0 (float32), and
    p = asin(|x|) for |x| <= 0.5, p = asin(sqrt((1 - |x|) / 2)) = acos(|x|) / 2 above (NaN
    for |x| > 1)."""
    a = xp.abs(x)
    m = _as_mask(xp, a > 0.5)
    # z = m (1 - a) / 2 + (1 - m) a^2; s = sqrt(z) where m, else a
    z = 0.5 - 0.5 * a
    z *= m
    sq = a * a
    n = 1 - m
    sq *= n
    z += sq
    s = xp.sqrt(z)
    s *= m
    sq = a * n
    s += sq
    p = _horner(xp, _ASIN_P, z)
    p *= z
    p *= s
    p += s
    return p, m


def asin(xp, x):
    """asin of float32 ``x`` (Cephes asinf: pi/2 - 2 asin(sqrt((1 - |x|) / 2)) above 0.5)."""
    p, m = _asin_parts(xp, x)
    # m: pi/2 - 2p (Cephes' PIO2F - (z + z)), else p
    big = p * -2.0
    big += _PI_2
    big *= m
    p *= 1 - m
    p += big
    return xp.copysign(p, x, out=p)


# Cephes atanf: atan(t) = t + t z P(z), z = t^2, for |t| <= tan(pi/8)
_ATAN_P = (8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1)
_TAN_3PI_8 = 2.414213562373095
_TAN_PI_8 = 0.4142135623730950


def atan(xp, x):
    """atan of float32 ``x`` (Cephes atanf: reduced to |t| <= tan(pi/8) by
    atan(a) = pi/4 + atan((a - 1)/(a + 1)) and pi/2 + atan(-1/a))."""
    a = xp.minimum(xp.abs(x), 1e30)         # atan(inf) = pi/2; keeps NaN
    m1 = _as_mask(xp, a > _TAN_PI_8)
    m2 = _as_mask(xp, a > _TAN_3PI_8)
    # t = (a alpha - beta) / (a beta + alpha): (1, 0) gives a, (1, 1) (a - 1)/(a + 1),
    # (0, 1) -1/a, each with the same roundings as the branch itself
    alpha = 1 - m2
    num = a * alpha
    num -= m1
    den = a * m1
    den += alpha
    t = xp.divide(num, den, out=num)
    z = t * t
    p = _horner(xp, _ATAN_P, z)
    p *= z
    p *= t
    p += t
    m1 += m2
    m1 *= _PI_4                              # 0, pi/4 or pi/2, exactly
    p += m1
    return xp.copysign(p, x, out=p)


def atanh(xp, x):
    """atanh of float32 ``x`` as log1p(2|x| / (1 - |x|)) / 2 with x's sign."""
    a = xp.abs(x)
    t = 1 - a
    xp.divide(a, t, out=t)
    t *= 2.0
    r = log1p(xp, t)
    r *= 0.5
    return xp.copysign(r, x, out=r)


def atan2(xp, y, x):
    """atan2 of float32 ``y``, ``x`` (one shape) as atan(y / x), plus copysign(pi, y) where
    x < 0; the elements where y / x is 0, below 1e-30, above 1e30, inf or NaN (zeros,
    infinities, NaN operands: C's special cases) are redone with ``xp.arctan2``."""
    t = y / x
    r = atan(xp, t)
    fix = _as_mask(xp, x < 0)
    fix *= math.pi
    r += xp.copysign(fix, y, out=fix)
    at = xp.abs(t, out=t)
    redo = ~((at >= 1e-30) & (at <= 1e30))
    if redo.any():
        r = xp.where(redo, xp.arctan2(y, x), r)
    return r


def _logaddexp(xp, a, b, exp, scale):
    """max(a, b) + log1p(exp(-|a - b|)) * scale (numpy's and PyTorch's formula)."""
    d = a - b
    xp.abs(d, out=d)
    xp.negative(d, out=d)
    r = log1p(xp, exp(d))
    if scale != 1:
        r *= scale
    r += xp.maximum(a, b)
    # inf - inf where a == b == +-inf: the result is a
    bad = xp.isnan(r)
    if bad.any():
        r = xp.where(bad & (a == b), a, r)
    return r


def logaddexp(xp, a, b):
    """log(e^a + e^b) of float32 ``a``, ``b`` (one shape)."""
    return _logaddexp(xp, a, b, xp.exp, 1)


def logaddexp2(xp, a, b):
    """log2(2^a + 2^b) of float32 ``a``, ``b`` (one shape)."""
    return _logaddexp(xp, a, b, xp.exp2, 1 / math.log(2))


# NOTE: a fresh 4 MB numpy temporary is mmap'ed and page-faulted on first touch, which
# costs about a pass of exp: blocks of 65536 elements keep the ~20 temporaries of a
# formula small (malloc reuses them) and in cache, one blocked call per ~30 ufunc calls.
BLOCK = 1 << 16


def blocked(xp, fn, x, *others):
    """``fn(xp, x, *others)`` of float32 arrays of one shape, on numpy block by block over
    ember's threads (``parallel_for``) when they have more than two blocks; a new array."""
    n = x.size
    if xp is not np or n <= 2 * BLOCK:
        return fn(xp, x, *others)
    flats = [np.ascontiguousarray(v).reshape(-1) for v in (x,) + others]
    out = np.empty(n, np.float32)

    def task(i):
        s = slice(i * BLOCK, (i + 1) * BLOCK)
        out[s] = fn(xp, *(f[s] for f in flats))
    parallel.parallel_for(task, -(-n // BLOCK))
    return out.reshape(x.shape)


#: name -> (function, the size from which it beats numpy's libm loop; measured)
FUNCTIONS = {"expm1": (expm1, 4096), "log1p": (log1p, 512), "sinh": (sinh, 2048),
             "cosh": (cosh, 4096), "tan": (tan, 0), "asin": (asin, 16384),
             "atan": (atan, 4096), "atanh": (atanh, 4096)}
#: binary functions, as FUNCTIONS (operands of one shape)
BINARY = {"atan2": (atan2, 4096), "logaddexp": (logaddexp, 4096),
          "logaddexp2": (logaddexp2, 4096)}
