"""Pointwise kernels of the gamma family, erfinv and modified Bessel functions, plus hypot,
sinc, nextafter, gcd and lcm.

numpy has no lgamma, digamma, erfinv or i1 (and scipy is not a dependency of ember), so
they are computed here with the standard approximations. Errors are measured against
mpmath (40 digits) or math.lgamma, in ulps of the result's dtype:

* lgamma: Lanczos' approximation (g = 7, n = 9; Numerical Recipes 3rd ed. 6.1) for x >= 0.5,
  reflection log(pi / |sin(pi x)|) - lgamma(1 - x) below; absolute error < 1e-12 (relative
  ~1e-15 away from the zeros at 1 and 2 and from the reflected poles); +inf at the poles
  0, -1, -2, .... Computed in float64 and rounded once (in float32 the reflection near the
  poles costs ~120 ulp).
* digamma: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic
  series with Bernoulli numbers to B_14 (Abramowitz & Stegun 6.3.18); reflection for x < 0;
  relative error < 1e-11 (~1e-15 away from its zero at 1.4616 and from negative poles).
  float64, rounded once, as lgamma.
* polygamma(n >= 2): (-1)^(n+1) n! zeta(n + 1, x), the Hurwitz zeta by Euler-Maclaurin
  summation after shifting x past 10 (as Cephes' ``zeta``); relative error ~1e-14.
  polygamma(1) (trigamma, also digamma's derivative) in the input's precision: recurrence
  and asymptotic series, < 4 ulp in float32 and float64 (``trigamma_flat``).
* erfinv: float32 (and float16/bfloat16, in float32): Giles' single-precision
  approximation ("Approximating the erfinv function", GPU Computing Gems, 2010), no
  Newton step, < 4 ulp. float64: Giles' guess and one Halley step on erf for |y| <= 0.49,
  Cephes' ndtri tail above; < 6 ulp (5 measured).
* i0, special_i1: Cephes' Chebyshev series (``special_bessel.bessel_ie_flat``) in the
  input's precision; < 8 ulp (I0) and < 16 ulp (I1, 14 measured near x = 8) in float32,
  < 12 ulp in float64.
"""
from __future__ import annotations

import math

from ...types import bool_
from .pointwise import FLOATING, INTEGRAL, PY_NUMBERS, _in_float64
from .special import (_is_half, _pair, _polyval, _quiet, by_precision, erf_small, subset)
from .special_bessel import bessel_ie_flat
from .special_blocked import blocked
from .special_stats import ndtri_flat

# PyTorch: "hypot_cpu" / "nextafter_cpu" not implemented for 'Long', "gcd_cpu" for 'Float'
UNSUPPORTED = {"hypot": INTEGRAL, "nextafter": INTEGRAL, "gcd": FLOATING | {bool_},
               "lcm": FLOATING | {bool_}}

_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)
# B_2k / (2k) for the asymptotic series of digamma, k = 1..7
_PSI_B = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)
# B_2j / (2j)! for Euler-Maclaurin, j = 1..12 (Cephes zeta.c's A[] inverted)
_ZETA_B = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160, -691 / 1307674368000,
           1 / 74724249600, -3617 / 10670622842880000, 43867 / 5109094217170944000,
           -174611 / 802857662698291200000, 77683 / 14101100039391805440000,
           -236364091 / 1693824136731743669452800000)
_LOG_SQRT_2PI = 0.91893853320467274178
_EULER = 0.57721566490153286061
# below this |x|, lgamma and digamma take their expansions at 0 (next terms ~x^2: < 1e-18
# relative)
_TINY_ARG = 1e-8


def lgamma64(xp, x):
    """log|Gamma(x)| of a float64 array of any shape (Lanczos approximation, reflection
    below 0.5 on those elements only); +inf at the poles 0, -1, -2, ....
    Reference: torch.lgamma."""
    shape = x.shape
    x = x.reshape(-1)
    with _quiet(xp):
        refl = subset(xp, x < 0.5)
        z = x - 1.0
        z[refl] = -x[refl]  # 1 - x - 1
        s = xp.full_like(z, _LANCZOS[0])
        # NOTE: the operations of the whole-array formula in its order,
        # _LOG_SQRT_2PI + (z + 0.5) * log(t) - t + log(s) with s += c_i / (z + i), so that
        # lgamma(1) and lgamma(2) stay exactly 0 (Poisson's log_prob(0 | 0) = 0)
        for i in range(1, 9):
            d = z + float(i)
            xp.divide(_LANCZOS[i], d, out=d)
            s += d
        t = z + 7.5
        r = (z + 0.5) * xp.log(t)
        r += _LOG_SQRT_2PI
        r -= t
        xp.log(s, out=s)
        r += s
        xr = x[refl]
        # NOTE: x - round(x) is exact (x - floor(x) rounds: 1 - 1e-7 keeps 9 digits)
        sin = xp.abs(xp.sin(math.pi * (xr - xp.round(xr))))
        r[refl] = math.log(math.pi) - xp.log(sin) - r[refl]
        # NOTE: near 0 the reflection loses x (x - floor(x) rounds to 1 for x = -5e-324):
        # lgamma(x) = -log|x| - gamma x + O(x^2) there instead
        tiny = subset(xp, (xp.abs(x) < _TINY_ARG) & (x != 0))
        xt = x[tiny]
        r[tiny] = -xp.log(xp.abs(xt)) - _EULER * xt
        bad = subset(xp, ((x <= 0) & (x == xp.floor(x))) | xp.isinf(x))
        r[bad] = math.inf
    return r.reshape(shape)


def digamma64(xp, x):
    """psi(x) = d/dx log Gamma(x) of a float64 array (reflection for x < 0, then below 10
    the recurrence psi(y) = psi(y + 10) - sum_k<10 1 / (y + k) on those elements only, and
    the asymptotic series); NaN at the negative poles, -inf at +0 and +inf at -0.
    Reference: torch.digamma."""
    shape = x.shape
    x = x.reshape(-1)
    with _quiet(xp):
        y = x.copy()
        acc = xp.zeros_like(x)
        refl = subset(xp, x < 0)
        xr = x[refl]
        # pi / tan(pi x) with the period reduced exactly first (x - round(x) is exact)
        acc[refl] = -math.pi / xp.tan(math.pi * (xr - xp.round(xr)))
        y[refl] = 1.0 - xr
        low = subset(xp, y < 10.0)
        yl = y[low]
        part = acc[low]
        for k in range(10):
            part -= 1.0 / (yl + float(k))
        acc[low] = part
        y[low] = yl + 10.0
        w = 1.0 / (y * y)
        series = xp.zeros_like(y)
        for b in reversed(_PSI_B):
            series += b
            series *= w
        r = xp.log(y)
        r -= 0.5 / y
        r -= series
        r += acc
        r[subset(xp, (x < 0) & (x == xp.floor(x)))] = math.nan
        # NOTE: near 0 the reflection loses x: psi(x) = -1/x - gamma + (pi^2/6) x + O(x^2)
        tiny = subset(xp, (xp.abs(x) < _TINY_ARG) & (x != 0))
        xt = x[tiny]
        r[tiny] = -1.0 / xt - _EULER + (math.pi ** 2 / 6) * xt
        zero = subset(xp, x == 0)
        r[zero] = xp.copysign(xp.full_like(x[zero], math.inf), -x[zero])
        r[subset(xp, xp.isposinf(x))] = math.inf
    return r.reshape(shape)


def zeta64(xp, s: float, q):
    """The Hurwitz zeta sum_k (q + k)^-s for a Python float s > 1 and an array q."""
    with _quiet(xp):
        # NOTE: the shift runs to the most negative q off the poles: a pole (every float
        # below -2**52 is an integer) or -inf would make it run for ever
        finite = q[xp.isfinite(q) & ~((q <= 0) & (q == xp.floor(q)))]
        n_shift = 10 + max(0, int(math.ceil(-float(xp.min(finite))))) if finite.size else 10
        total = xp.zeros_like(q)
        a = q.copy()
        for _ in range(n_shift):
            total = total + xp.where(a < 10.0, a ** -s, 0.0)
            a = xp.where(a < 10.0, a + 1.0, a)
        total = total + a ** (1.0 - s) / (s - 1.0) + 0.5 * a ** -s
        fac, pw = s, a ** (-s - 1.0)
        for j, b in enumerate(_ZETA_B):
            total = total + b * fac * pw
            fac = fac * (s + 2 * j + 1) * (s + 2 * j + 2)
            pw = pw / (a * a)
    pole = (q <= 0) & (q == xp.floor(q))
    return xp.where(pole, math.inf, xp.where(xp.isposinf(q), 0.0, total))


# B_2k for trigamma's asymptotic series psi'(y) ~ 1/y + 1/(2y^2) + sum_k B_2k / y^(2k+1):
# float64 after shifting y past 10 (B_18 / 10^18 ~ 6e-17), float32 past 6 (as PyTorch)
_TRIGAMMA_B = {8: (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
                   43867 / 798),
               4: (1 / 6, -1 / 30, 1 / 42, -1 / 30)}
_TRIGAMMA_SHIFT = {8: 10, 4: 6}


def trigamma_flat(xp, x):
    """psi'(x) = polygamma(1, x) of a 1-d float32/float64 array in its dtype: the
    recurrence psi'(x) = psi'(x + k) + sum_j<k 1 / (x + j)^2 (k = 6 in float32, 10 in
    float64) and the asymptotic series, reflection pi^2 / sin^2(pi x) - psi'(1 - x) on
    the elements below 0 only; +inf at 0, -1, -2, ..., NaN at -inf. Against mpmath on
    [-20, 1e4]: float32 < 4 ulp, float64 < 4 ulp (3.8 and 3.0 measured)."""
    size = x.dtype.itemsize
    neg = subset(xp, x < 0)
    y = x.copy()
    xn = x[neg]
    y[neg] = 1.0 - xn
    r = xp.zeros_like(x)
    d = xp.empty_like(x)
    for k in range(_TRIGAMMA_SHIFT[size]):
        xp.add(y, float(k), out=d)
        d *= d
        xp.reciprocal(d, out=d)
        r += d
    y += float(_TRIGAMMA_SHIFT[size])
    w = xp.reciprocal(y)
    w2 = w * w
    t = _polyval(_TRIGAMMA_B[size][::-1], w2)
    t *= w  # w^3 sum B_2k w^(2k-2) + w^2 / 2 + w
    t += 0.5
    t *= w
    t += 1.0
    t *= w
    r += t
    s = xp.sin(math.pi * (xn - xp.round(xn)))  # x - round(x) is exact
    r[neg] = math.pi ** 2 / (s * s) - r[neg]
    r[subset(xp, (x <= 0) & (x == xp.floor(x)))] = math.inf
    r[subset(xp, xp.isneginf(x))] = math.nan  # as PyTorch
    return r


def polygamma64(xp, n: int, x):
    """psi^(n)(x) of a float64 array for an int n >= 0: digamma for n = 0, else
    (-1)^(n+1) n! zeta(n + 1, x). Reference: torch.polygamma."""
    if n == 0:
        return digamma64(xp, x)
    sign = 1.0 if n % 2 else -1.0
    return sign * math.factorial(n) * zeta64(xp, float(n + 1), x)


_GILES_LO = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
             -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_TWO_SQRTPI = 1.1283791670955126  # 2 / sqrt(pi)
_SQRT1_2 = 0.70710678118654752440
_GILES_HI = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
             -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _giles(xp, a):
    """Giles' single-precision erfinv(a) / a for a 1-d array of 0 <= a < 1, in its dtype:
    the central polynomial in w = -log((1 - a)(1 + a)) for w < 5 on all elements, the
    tail one (in sqrt(w)) only on the elements that need it. Overwrites ``a``."""
    w = 1.0 - a  # exact for a >= 1/2
    a += 1.0
    w *= a
    xp.log(w, out=w)
    xp.negative(w, out=w)
    tail = subset(xp, ~(w < 5.0))
    p_tail = _polyval(_GILES_HI, xp.sqrt(w[tail]) - 3.0)
    w -= 2.5
    p = _polyval(_GILES_LO, w)
    p[tail] = p_tail
    return p


def _erfinv_edges(xp, y, r, edge):
    """Patch ``r`` (erfinv of the finite |y| < 1, sign included) in place at the flat
    indices ``edge``, where |y| >= 1 or y is NaN: +-inf at +-1, NaN outside [-1, 1]."""
    ye = y[edge]
    r[edge] = xp.where(xp.abs(ye) == 1.0, ye * math.inf, math.nan)
    return r


def erfinv32(xp, y):
    """erf^-1 of a 1-d float32 array: Giles' single-precision approximation ("Approximating
    the erfinv function", GPU Computing Gems, 2010), no Newton step; max error 4 ulp
    against mpmath over (-1, 1) (3.6 measured). erfinv(-0.0) = -0.0."""
    a = xp.abs(y)
    edge = subset(xp, ~(a < 1.0))
    r = _giles(xp, a)
    r *= y
    return _erfinv_edges(xp, y, r, edge)


def _halley(x, u):
    """Halley's step for erf(x) = a (or erfc(x) = c) given u = f / f': f'' = -2 x f'."""
    return x - u / (1.0 + x * u)


def erfinv64_flat(xp, y):
    """erf^-1 of a 1-d float64 array: for |y| <= 0.49 Giles' approximation (~1e-7) and
    one Halley step (cubic) on erf(x) = |y| by Cody's first interval; above,
    -ndtri((1 - |y|) / 2) / sqrt 2 by Cephes' ndtri tail (1 - |y| is exact there, and
    keeps the tail's precision where Giles' polynomial, fitted to float32's range, would
    need several steps). < 2 ulp against mpmath."""
    a = xp.abs(y)
    x = xp.empty_like(a)
    c = subset(xp, a <= 0.49)
    ac = a[c]
    xc = _giles(xp, ac.copy()) * ac
    x[c] = _halley(xc, (erf_small(xp, xc) - ac) / (_TWO_SQRTPI * xp.exp(-xc * xc)))
    t = subset(xp, (a > 0.49) & (a < 1.0))
    x[t] = ndtri_flat(xp, 0.5 * (1.0 - a[t])) * -_SQRT1_2
    return _erfinv_edges(xp, y, xp.copysign(x, y), subset(xp, ~(a < 1.0)))


def i0_flat(xp, x):
    """I0 of a 1-d float32/float64 array: Cephes' Chebyshev series (``special_bessel``)."""
    return bessel_ie_flat(xp, 0, x, scaled=False)


def i1_flat(xp, x):
    """I1 of a 1-d float32/float64 array (odd; see ``i0_flat``)."""
    return bessel_ie_flat(xp, 1, x, scaled=False)


def kernels(xp) -> dict:
    def half_safe(fn):
        def kernel(a, b):
            a, b = _pair(a, b)
            if _is_half(a.dtype):
                return fn(a.astype(xp.float32), b.astype(xp.float32)).astype(a.dtype)
            return fn(a, b)
        return kernel

    def quiet(fn):
        def run(x):
            with _quiet(xp):
                return fn(xp, x)
        return run

    def sinc(a):
        # NOTE: sin(pi x) = (-1)^n sin(pi (x - n)), n = round(x), x - n exact: pi * x
        # rounded first would make sinc(1e20) ~ 1e-21 instead of its exact 0
        with _quiet(xp):
            n = xp.round(a)
            s = xp.sin(math.pi * (a - n))
            s = xp.where(xp.fmod(n, 2.0) == 0, s, -s)
            return xp.where(a == 0, 1.0, xp.where(xp.isinf(a), 0.0, s / (math.pi * a)))

    def flat(fn32, fn64=None):
        """A by_precision kernel of flat functions, cache-blocked at large sizes."""
        return by_precision(xp, blocked(xp, quiet(fn32)), blocked(xp, quiet(fn64 or fn32)))

    trigamma = flat(trigamma_flat)

    def polygamma(n, a):
        if n < 0:
            raise ValueError(f"polygamma(): expected a non-negative order n, got {n}")
        if n == 1:  # the common one, in the input's precision
            return trigamma(a)
        return _in_float64(xp, lambda x: polygamma64(xp, n, x))(a)

    def int_binary(fn):
        def kernel(a, b):
            if a.__class__ in PY_NUMBERS:
                a = xp.asarray(a, dtype=b.dtype)
            if b.__class__ in PY_NUMBERS:
                b = xp.asarray(b, dtype=a.dtype)
            return xp.abs(fn(a, b)).astype(a.dtype)
        return kernel

    def nextafter(a, b):
        a, b = _pair(a, b)
        if a.dtype.itemsize == 2 and a.dtype.kind != "f":  # bfloat16: step its own bits
            raise NotImplementedError("nextafter(): not implemented for bfloat16 (as "
                                      "PyTorch); convert to float32 first")
        return xp.nextafter(a, b)

    return {
        "lgamma": blocked(xp, lambda x: lgamma64(xp, x), xp.float64),
        "digamma": blocked(xp, lambda x: digamma64(xp, x), xp.float64),
        "polygamma": polygamma,
        "erfinv": flat(erfinv32, erfinv64_flat),
        "i0": flat(i0_flat), "special_i1": flat(i1_flat),
        "sinc": blocked(xp, sinc, xp.float64),
        "hypot": half_safe(xp.hypot),
        "nextafter": nextafter,
        "gcd": int_binary(xp.gcd),
        "lcm": int_binary(xp.lcm),
    }
